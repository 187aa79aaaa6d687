// The bubblewrap argv, pinned: a pure function of the grants, checked without privileges and
// without running bwrap. The mount order is the invariant written in src/sandbox/bubblewrap.ts.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { grantsFor } from '../../src/policy/grants.js'
import { bubblewrapArgv } from '../../src/sandbox/bubblewrap.js'
import { bwrapRunnerFailure } from '../../src/sandbox/runner-failure.js'
import { scratchDir } from '../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-bwrap-argv'))
const root = path.join(base, 'root')
const extra = path.join(base, 'extra')
const temp = path.join(base, 'tmp-session')
for (const d of [root, extra, temp]) fs.mkdirSync(d)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const BWRAP = '/usr/bin/bwrap'
const PROCESS = ['--die-with-parent', '--new-session', '--unshare-user', '--disable-userns', '--unshare-pid']
const MOUNTS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']
const SEAL = ['--remount-ro', '/dev', '--remount-ro', '/proc']

describe('bubblewrapArgv', () => {
  it('read-only: the whole host read-only, no writable bind, command after --', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: root })
    expect(
      bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', cwd: root, command: ['bash', '-c', 'echo hi'] }),
    ).toEqual([
      BWRAP,
      ...PROCESS,
      '--cap-drop',
      'ALL',
      ...MOUNTS,
      ...SEAL,
      '--chdir',
      root,
      '--',
      'bash',
      '-c',
      'echo hi',
    ])
  })

  it('workspace-write with extra roots: binds root, extra roots, then the temp dir, before sealing /dev and /proc', () => {
    const grants = grantsFor(
      { mode: 'workspace-write', workspaceRoot: root, writableRoots: [extra] },
      { tempDir: temp },
    )
    expect(
      bubblewrapArgv(grants, {
        bwrapPath: BWRAP,
        network: 'inherit',
        tempDir: temp,
        cwd: root,
        command: ['make', 'test'],
      }),
    ).toEqual([
      BWRAP,
      ...PROCESS,
      '--cap-drop',
      'ALL',
      ...MOUNTS,
      '--bind',
      root,
      root,
      '--bind',
      extra,
      extra,
      '--bind',
      temp,
      temp,
      ...SEAL,
      '--setenv',
      'TMPDIR',
      temp,
      '--chdir',
      root,
      '--',
      'make',
      'test',
    ])
  })

  it('network deny adds --unshare-net with the other namespaces, before any mount', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: root, network: 'deny' })
    expect(bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'deny', command: ['true'] })).toEqual([
      BWRAP,
      ...PROCESS,
      '--unshare-net',
      '--cap-drop',
      'ALL',
      ...MOUNTS,
      '--bind',
      root,
      root,
      ...SEAL,
      '--',
      'true',
    ])
  })

  it('protected paths are bound read-only again after the writable binds', () => {
    const protectedDir = path.join(root, '.git')
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: root, protectedPaths: [protectedDir] })
    const argv = bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', command: ['true'] })
    expect(argv.slice(argv.indexOf('--bind'), argv.indexOf('--remount-ro'))).toEqual([
      '--bind',
      root,
      root,
      '--ro-bind-try',
      protectedDir,
      protectedDir,
    ])
  })

  it('a command argument that looks like a bwrap option stays after --', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: root })
    const argv = bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', command: ['--bind', '/', '/'] })
    expect(argv.slice(argv.indexOf('--'))).toEqual(['--', '--bind', '/', '/'])
    expect(argv.filter((a) => a === '--bind')).toHaveLength(1)
  })

  it('refuses a temp dir that is not granted, an empty command and danger-full-access', () => {
    const ro = grantsFor({ mode: 'read-only', workspaceRoot: root })
    expect(() =>
      bubblewrapArgv(ro, { bwrapPath: BWRAP, network: 'inherit', tempDir: temp, command: ['true'] }),
    ).toThrow(/not a writable grant/)
    expect(() => bubblewrapArgv(ro, { bwrapPath: BWRAP, network: 'inherit', command: [] })).toThrow(/empty command/)
    const full = grantsFor({ mode: 'danger-full-access', workspaceRoot: root })
    expect(() => bubblewrapArgv(full, { bwrapPath: BWRAP, network: 'inherit', command: ['true'] })).toThrow(
      /never confined/,
    )
  })
})

describe('bwrapRunnerFailure', () => {
  it("is bwrap's own first stderr line with exit 1", () => {
    const line =
      'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.'
    expect(bwrapRunnerFailure(1, `${line}\n`)).toBe(line)
    expect(bwrapRunnerFailure(1, 'bwrap: setting up uid map: Permission denied')).toBe(
      'bwrap: setting up uid map: Permission denied',
    )
  })

  it("is not the command's own output, exit code, or a command bwrap could not find", () => {
    expect(bwrapRunnerFailure(0, 'bwrap: Creating new namespace failed')).toBeUndefined()
    expect(bwrapRunnerFailure(2, 'bwrap: Creating new namespace failed')).toBeUndefined()
    expect(bwrapRunnerFailure(null, 'bwrap: Creating new namespace failed')).toBeUndefined()
    expect(bwrapRunnerFailure(1, 'make: *** error\nbwrap: Creating new namespace failed')).toBeUndefined()
    expect(bwrapRunnerFailure(1, 'bwrap: execvp nosuch: No such file or directory')).toBeUndefined()
    expect(bwrapRunnerFailure(1, '')).toBeUndefined()
  })
})
