// Which paths the protected set names: git hooks and config of a checkout, its submodules and
// linked worktrees, the cordon package inside a writable root, and the policy's own (relative ones
// against the root). Real directories made by real git; no confinement is claimed here.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import type { SandboxPolicy } from '../../../../src/policy/vocabulary.js'
import {
  ownPackagePlaces,
  PACKAGE_ROOT,
  protectedSetCurrent,
  protectedSetFor,
} from '../../../../src/sandbox/view/protected-paths.js'
import { scratchDir } from '../../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-protected'))
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'protocol.file.allow=always', ...args], {
    cwd,
    stdio: 'ignore',
  })

function repo(name: string): string {
  const root = path.join(base, name)
  fs.mkdirSync(root)
  git(root, 'init', '-q')
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init')
  return root
}

const setFor = (policy: SandboxPolicy) =>
  protectedSetFor(policy, grantsFor(policy, { tempDir: path.join(base, 'tmp') }))
const paths = (policy: SandboxPolicy) => setFor(policy).paths.map((p) => `${p.kind}:${path.relative(base, p.path)}`)

describe('protectedSetFor', () => {
  it("a checkout's hooks and config, with .git bound in place; nothing in a plain directory", () => {
    const root = repo('plain-repo')
    const set = setFor({ mode: 'workspace-write', workspaceRoot: root })
    expect(set.paths.map((p) => path.relative(root, p.path)).sort()).toEqual(['.git/config', '.git/hooks'])
    expect(set.parents).toEqual([path.join(root, '.git')])
    const plain = path.join(base, 'plain-dir')
    fs.mkdirSync(plain)
    expect(setFor({ mode: 'workspace-write', workspaceRoot: plain }).paths).toEqual([])
  })

  it('a missing hooks dir is named as one to create empty; protectedDefaults: false names nothing', () => {
    const root = repo('no-hooks')
    fs.rmSync(path.join(root, '.git', 'hooks'), { recursive: true, force: true })
    expect(paths({ mode: 'workspace-write', workspaceRoot: root })).toContain('missing-dir:no-hooks/.git/hooks')
    expect(setFor({ mode: 'workspace-write', workspaceRoot: root, protectedDefaults: false }).paths).toEqual([])
  })

  it("a submodule's git dir under .git/modules, and a linked worktree's common dir and config.worktree", () => {
    const lib = repo('lib')
    const root = repo('super')
    git(root, 'submodule', 'add', '-q', lib, 'vendor/lib')
    const names = paths({ mode: 'workspace-write', workspaceRoot: root })
    expect(names).toEqual(
      expect.arrayContaining(['dir:super/.git/modules/vendor/lib/hooks', 'file:super/.git/modules/vendor/lib/config']),
    )
    const tree = path.join(base, 'super-tree')
    git(root, 'worktree', 'add', '-q', tree)
    fs.writeFileSync(path.join(root, '.git', 'worktrees', 'super-tree', 'config.worktree'), '')
    // The worktree and the main checkout both writable: the common dir's hooks are protected.
    const both = paths({ mode: 'workspace-write', workspaceRoot: tree, writableRoots: [root] })
    expect(both).toEqual(
      expect.arrayContaining([
        'dir:super/.git/hooks',
        'file:super/.git/config',
        'file:super/.git/worktrees/super-tree/config.worktree',
      ]),
    )
    // Only the worktree writable: the common dir lies outside every writable root (read-only already)…
    // …but the worktree's own `.git` file (which names its git dir) is.
    expect(paths({ mode: 'workspace-write', workspaceRoot: tree })).toEqual(['file:super-tree/.git'])
  })

  it('the cordon package inside a writable root is protected, and relative policy paths resolve against the root', () => {
    // As if cordon were installed in the project's node_modules.
    const project = path.join(base, 'project')
    const installed = path.join(project, 'node_modules', 'cordon')
    fs.mkdirSync(installed, { recursive: true })
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: project }
    const grants = grantsFor(policy, { tempDir: path.join(base, 'tmp') })
    expect(protectedSetFor(policy, grants, installed).paths).toContainEqual({
      path: installed,
      kind: 'dir',
      origin: 'cordon',
    })
    expect(PACKAGE_ROOT).toBe(fs.realpathSync(path.join(import.meta.dirname, '..', '..', '..', '..')))
    const root = path.join(base, 'relative')
    fs.mkdirSync(path.join(root, 'ci'), { recursive: true })
    expect(paths({ mode: 'workspace-write', workspaceRoot: root, protectedPaths: ['ci'] })).toEqual(['dir:relative/ci'])
  })

  it('its dependencies are protected where Node finds them, and every place Node would look first must not appear', () => {
    // An installed copy whose zod is hoisted beside it and whose optional node-pty is not installed.
    const project = path.join(base, 'deps-project')
    const installed = path.join(project, 'node_modules', 'cordon')
    fs.mkdirSync(path.join(project, 'node_modules', 'zod'), { recursive: true })
    fs.mkdirSync(installed, { recursive: true })
    fs.writeFileSync(
      path.join(installed, 'package.json'),
      JSON.stringify({ dependencies: { zod: '^4' }, optionalDependencies: { 'node-pty': '^1' } }),
    )
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: project }
    const set = protectedSetFor(policy, grantsFor(policy, { tempDir: path.join(base, 'tmp') }), installed)
    expect(set.paths).toContainEqual({ path: path.join(project, 'node_modules', 'zod'), kind: 'dir', origin: 'cordon' })
    const appear = set.mustNotAppear ?? []
    // Node tries <pkg>/node_modules/zod (and zod.js…) before the hoisted one, and zod.js before zod/.
    for (const p of ['cordon/node_modules/zod', 'cordon/node_modules/zod.js', 'zod.js', 'zod.json'])
      expect(appear).toContain(path.join(project, 'node_modules', p))
    expect(appear).not.toContain(path.join(project, 'node_modules', 'zod'))
    // node-pty is nowhere: each place in the project where it would be found must stay empty.
    for (const p of ['node-pty', 'node-pty.js', 'node-pty.node', 'cordon/node_modules/node-pty'])
      expect(appear).toContain(path.join(project, 'node_modules', p))
    // Outside the writable root nothing is listed (it is read-only already).
    expect(appear.every((p) => p.startsWith(`${project}/`))).toBe(true)
  })

  it('ownPackagePlaces: the package, its dependencies and where Node looks first (a remedy never unprotects them)', () => {
    const project = path.join(base, 'deps-project')
    const installed = path.join(project, 'node_modules', 'cordon')
    const places = ownPackagePlaces(installed)
    expect(places).toContain(installed)
    expect(places).toContain(path.join(project, 'node_modules', 'zod'))
    expect(places).toContain(path.join(project, 'node_modules', 'node-pty'))
    expect(places).not.toContain(path.join(project, 'node_modules'))
  })

  it('editor, agent and shell files: read-only when there, must not appear when missing, opted out by path', () => {
    const root = path.join(base, 'editor-files')
    fs.mkdirSync(path.join(root, '.vscode'), { recursive: true })
    fs.mkdirSync(path.join(root, '.claude', 'commands'), { recursive: true })
    fs.writeFileSync(path.join(root, '.vscode', 'tasks.json'), '{}')
    fs.writeFileSync(path.join(root, '.envrc'), '')
    fs.writeFileSync(path.join(root, '.bashrc'), '')
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: root }
    // The workspace root is the home here: ~/.bashrc lies inside a writable root.
    const set = protectedSetFor(policy, grantsFor(policy, { tempDir: path.join(base, 'tmp') }), PACKAGE_ROOT, root)
    const named = set.paths.map((p) => `${p.kind}:${p.origin}:${path.relative(root, p.path)}`)
    expect(named).toEqual(
      expect.arrayContaining([
        'file:default:.vscode/tasks.json',
        'dir:default:.claude/commands',
        'file:default:.envrc',
        'file:default:.bashrc',
      ]),
    )
    for (const missing of ['.vscode/settings.json', '.mcp.json', '.idea', '.husky', '.gitconfig', '.profile'])
      expect(set.mustNotAppear).toContain(path.join(root, missing))
    const out = protectedSetFor(
      { ...policy, unprotectedPaths: ['.vscode', '.envrc', path.join(root, '.mcp.json')] },
      grantsFor(policy, { tempDir: path.join(base, 'tmp') }),
      PACKAGE_ROOT,
      root,
    )
    const left = [...out.paths.map((p) => p.path), ...(out.mustNotAppear ?? [])].map((p) => path.relative(root, p))
    for (const gone of ['.vscode/tasks.json', '.vscode/settings.json', '.envrc', '.mcp.json'])
      expect(left).not.toContain(gone)
    expect(left).toContain('.bashrc')
    // Outside a writable root (the home elsewhere) no ~ entry is named.
    const elsewhere = protectedSetFor(
      policy,
      grantsFor(policy, { tempDir: path.join(base, 'tmp') }),
      PACKAGE_ROOT,
      base,
    )
    expect([...elsewhere.paths.map((p) => p.path), ...(elsewhere.mustNotAppear ?? [])]).not.toContain(
      path.join(base, '.bashrc'),
    )
  })

  it('a policy-named protected path that is missing must not appear', () => {
    const root = path.join(base, 'named-missing')
    fs.mkdirSync(root)
    const set = setFor({ mode: 'workspace-write', workspaceRoot: root, protectedPaths: ['deploy.sh'] })
    expect(set.mustNotAppear).toContain(path.join(root, 'deploy.sh'))
    // The policy's own path stays protected even when an opt-out covers it.
    const both = setFor({
      mode: 'workspace-write',
      workspaceRoot: root,
      protectedPaths: ['deploy.sh'],
      unprotectedPaths: [root],
    })
    expect(both.mustNotAppear).toContain(path.join(root, 'deploy.sh'))
  })

  it('a symlink on the way to a protected path must stay (inside or outside the roots), the target is bound', () => {
    const root = path.join(base, 'linked')
    const outside = path.join(base, 'linked-outside')
    fs.mkdirSync(path.join(root, 'real'), { recursive: true })
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(root, 'real', 'tasks.json'), '{}')
    fs.writeFileSync(path.join(outside, 'envrc'), '')
    fs.symlinkSync('real', path.join(root, '.vscode'))
    fs.symlinkSync(path.join(outside, 'envrc'), path.join(root, '.envrc'))
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: root }
    const set = setFor(policy)
    expect(set.mustStay).toEqual(
      expect.arrayContaining([
        { path: path.join(root, '.vscode'), target: 'real' },
        { path: path.join(root, '.envrc'), target: path.join(outside, 'envrc') },
      ]),
    )
    expect(set.paths.map((p) => path.relative(root, p.path))).toContain('real/tasks.json')
    // A dangling link: where it leads must not appear (it stays a link, no litter after a run).
    fs.symlinkSync('nowhere', path.join(root, '.mcp.json'))
    const dangling = setFor(policy)
    expect(dangling.mustNotAppear).toContain(path.join(root, 'nowhere'))
    expect(dangling.mustNotAppear).not.toContain(path.join(root, '.mcp.json'))
    expect(dangling.mustStay).toContainEqual({ path: path.join(root, '.mcp.json'), target: 'nowhere' })
    // Opted out by its name: the link may change.
    const out = setFor({ ...policy, unprotectedPaths: ['.vscode', '.envrc', '.mcp.json'] })
    expect(out.mustStay ?? []).toEqual([])
    // A link retargeted later makes the set stale.
    fs.symlinkSync('real/tasks.json', path.join(root, 'next'))
    fs.renameSync(path.join(root, 'next'), path.join(root, '.envrc'))
    expect(protectedSetCurrent(set)).toBe(false)
  })

  it('a .git symlink is followed: its hooks and config are protected, the link must stay', () => {
    const root = repo('linked-git')
    fs.renameSync(path.join(root, '.git'), path.join(root, 'real.git'))
    fs.symlinkSync('real.git', path.join(root, '.git'))
    const set = setFor({ mode: 'workspace-write', workspaceRoot: root })
    expect(set.paths.map((p) => path.relative(root, p.path))).toEqual(
      expect.arrayContaining(['real.git/hooks', 'real.git/config']),
    )
    expect(set.mustStay).toContainEqual({ path: path.join(root, '.git'), target: 'real.git' })
  })

  it('notices a new .git or hooks dir (stale stamps)', () => {
    const root = path.join(base, 'later-repo')
    fs.mkdirSync(root)
    const set = setFor({ mode: 'workspace-write', workspaceRoot: root })
    expect(protectedSetCurrent(set)).toBe(true)
    git(root, 'init', '-q')
    expect(protectedSetCurrent(set)).toBe(false)
  })
})
