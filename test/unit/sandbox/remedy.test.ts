// The remedy printed for a denied write: the narrowest flags that really allow it in one step,
// checked against the roots cordon accepts, or none at all; never the mode already in force; the
// parent of a tree the command removes; --unprotect for the protected path it meets once widened.
// Real directories and real git checkouts; no confinement is claimed here (the workload corpus
// reruns each remedy under both backends: test/workloads/cases/remedies.ts).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import { removalsIn, writeRemedy } from '../../../src/sandbox/remedy.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-remedy'))
const root = path.join(base, 'root')
const other = path.join(base, 'other')
fs.mkdirSync(root)
fs.mkdirSync(path.join(other, 'cache'), { recursive: true })
fs.writeFileSync(path.join(other, 'file'), 'x')
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
const policy = { mode: 'read-only' as const, workspaceRoot: root }
const writing: SandboxExecutionPolicy = { mode: 'workspace-write', workspaceRoot: root }
const none = { writableRoots: [], unprotect: [], protectedByPolicy: [], unreachable: [] }

describe('writeRemedy', () => {
  it('inside the root: workspace-write alone (under read-only)', () => {
    expect(writeRemedy(policy, [path.join(root, 'a', 'b')])).toEqual({ ...none, mode: 'workspace-write' })
  })

  it("outside: the existing dir that holds it, in one step (a file's own dir, a missing path's nearest ancestor)", () => {
    expect(writeRemedy(policy, [path.join(other, 'file')]).writableRoots).toEqual([other])
    expect(writeRemedy(policy, [path.join(other, 'cache', 'tmp', 'x', 'y')]).writableRoots).toEqual([
      path.join(other, 'cache'),
    ])
    // Two paths under one remedy root: one flag; a root inside another: the outer one alone.
    expect(writeRemedy(policy, [path.join(other, 'cache', 'p'), path.join(other, 'cache', 'q')]).writableRoots).toEqual(
      [path.join(other, 'cache')],
    )
    expect(writeRemedy(policy, [path.join(other, 'cache', 'p'), path.join(other, 'gone', 'q')]).writableRoots).toEqual([
      other,
    ])
  })

  it('never the mode in force: under workspace-write only the roots, and no mode at all', () => {
    const r = writeRemedy(writing, [path.join(other, 'file')])
    expect(r).toEqual({ ...none, writableRoots: [other] })
    expect(r.mode).toBeUndefined()
  })

  it("never cordon's own state (a plan refuses it): a write in the private parent gets no remedy", () => {
    const parent = path.join(other, 'state')
    fs.mkdirSync(path.join(parent, 'sub'), { recursive: true })
    const saved = process.env.CORDON_PRIVATE_DIR
    process.env.CORDON_PRIVATE_DIR = parent
    try {
      expect(writeRemedy(policy, [path.join(parent, 'sub', 'probe.json')])).toEqual({
        ...none,
        unreachable: [path.join(parent, 'sub', 'probe.json')],
      })
    } finally {
      if (saved === undefined) delete process.env.CORDON_PRIVATE_DIR
      else process.env.CORDON_PRIVATE_DIR = saved
    }
    // The control: the same dir is a remedy once it is not cordon's.
    expect(writeRemedy(policy, [path.join(parent, 'sub', 'probe.json')]).writableRoots).toEqual([
      path.join(parent, 'sub'),
    ])
  })

  it('never /, a system dir, the host temp dir or the home dir: no remedy at all', () => {
    for (const p of ['/etc/x', '/usr/y', '/tmp/z', '/newdir/a', `${process.env.HOME}/x`]) {
      const r = writeRemedy(policy, [p])
      expect(r.writableRoots).toEqual([])
      expect(r.unreachable).toEqual([p])
    }
  })
})

describe('writeRemedy for a removed tree', () => {
  const out = path.join(base, 'out')
  fs.mkdirSync(path.join(out, 'code', 'sub'), { recursive: true })
  fs.mkdirSync(path.join(out, 'cfg'))
  const denied = [path.join(out, 'code', 'sub', 'b'), path.join(out, 'code', 'a'), path.join(out, 'cfg', 'c')]

  it("the parent of each top-most operand, not the dirs of the files rm could not unlink (the control: without the command's text)", () => {
    const removals = removalsIn(`rm -rf ${out}/code ${out}/cfg`, root)
    expect(writeRemedy(writing, denied, removals)).toEqual({ ...none, writableRoots: [out] })
    // Without the text: the files' dirs, which would leave the dirs themselves undeletable.
    expect(writeRemedy(writing, denied).writableRoots).toEqual([path.join(out, 'code'), path.join(out, 'cfg')])
  })

  it('a tree whose parent cannot be a root (the home dir) gets no flag', () => {
    const home = process.env.HOME as string
    const r = writeRemedy(writing, [`${home}/code/a`], removalsIn('rm -rf ~/code', root, home))
    expect(r.writableRoots).toEqual([])
    expect(r.unreachable).toEqual([`${home}/code/a`])
  })

  it('a checkout in the tree is protected once its parent is writable: --unprotect the tree, in the same step', () => {
    const repo = path.join(out, 'repo')
    fs.mkdirSync(repo)
    execFileSync('git', ['init', '-q'], { cwd: repo })
    const r = writeRemedy(writing, [path.join(repo, '.git', 'HEAD')], removalsIn(`rm -rf ${repo}`, root))
    expect(r).toEqual({ ...none, writableRoots: [out], unprotect: [repo] })
  })

  it('git clean empties its work tree: the tree itself, not its parent', () => {
    const r = writeRemedy(writing, [path.join(out, 'cfg', 'c')], removalsIn(`git -C ${out}/cfg clean -fdx`, root))
    expect(r.writableRoots).toEqual([path.join(out, 'cfg')])
  })
})

describe('writeRemedy at a protected path', () => {
  const checkout = path.join(base, 'checkout')
  fs.mkdirSync(path.join(checkout, '.vscode'), { recursive: true })
  execFileSync('git', ['init', '-q'], { cwd: checkout })
  fs.writeFileSync(path.join(checkout, '.vscode', 'tasks.json'), '{}')
  const inForce: SandboxExecutionPolicy = { mode: 'workspace-write', workspaceRoot: checkout }

  it('names the protected path that holds it, relative to the root: --unprotect, not every default', () => {
    const hook = path.join(checkout, '.git', 'hooks', 'post-checkout')
    expect(writeRemedy(inForce, [hook])).toEqual({ ...none, unprotect: ['.git/hooks'] })
    expect(writeRemedy(inForce, [path.join(checkout, '.git', 'config')]).unprotect).toEqual(['.git/config'])
    expect(writeRemedy(inForce, [path.join(checkout, '.vscode', 'tasks.json')]).unprotect).toEqual([
      '.vscode/tasks.json',
    ])
  })

  it('renaming a dir that holds protected paths (mv .git): that dir; writing into it: nothing unprotected', () => {
    const r = writeRemedy(inForce, [path.join(checkout, '.git')], removalsIn('mv .git .git-old', checkout))
    expect(r.unprotect).toEqual(['.git'])
    // A write into the dir (a push into a bare repository) leaves what it holds protected.
    expect(writeRemedy(inForce, [path.join(checkout, '.git')]).unprotect).toEqual([])
  })

  it('under read-only the mode and the protection in one step (workspace-write alone would still refuse it)', () => {
    const r = writeRemedy({ ...inForce, mode: 'read-only' }, [path.join(checkout, '.git', 'config')])
    expect(r).toEqual({ ...none, mode: 'workspace-write', unprotect: ['.git/config'] })
  })

  it('what the policy protects itself is named as such; what it already leaves writable needs nothing (the control)', () => {
    const own = writeRemedy({ ...inForce, protectedPaths: ['notes.md'] }, [path.join(checkout, 'notes.md')])
    expect(own).toEqual({ ...none, protectedByPolicy: [path.join(checkout, 'notes.md')] })
    const opened = writeRemedy({ ...inForce, unprotectedPaths: ['.git/hooks'] }, [
      path.join(checkout, '.git', 'hooks', 'x'),
    ])
    expect(opened).toEqual(none)
  })
})
