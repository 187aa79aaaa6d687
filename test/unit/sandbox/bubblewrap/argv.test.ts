// The bubblewrap argv, pinned: a pure function of the grants, checked without privileges and
// without running bwrap. The mount order is the invariant written in src/sandbox/bubblewrap/argv.ts.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { type BubblewrapMounts, bubblewrapArgv } from '../../../../src/sandbox/bubblewrap/argv.js'
import { scratchDir } from '../../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-bwrap-argv'))
const root = path.join(base, 'root')
const extra = path.join(base, 'extra')
const temp = path.join(base, 'tmp-session')
for (const d of [root, extra, temp]) fs.mkdirSync(d)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const BWRAP = '/usr/bin/bwrap'
const PROCESS = [
  '--die-with-parent',
  '--new-session',
  '--unshare-user',
  '--disable-userns',
  '--unshare-pid',
  '--as-pid-1',
  '--unshare-ipc',
]
const STATUS = ['--json-status-fd', '4']
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
      ...STATUS,
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
      ...STATUS,
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
      ...STATUS,
      '--',
      'true',
    ])
  })

  it('a terminal keeps its session: no --new-session', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: root })
    const argv = bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', command: ['bash'], terminal: true })
    expect(argv).not.toContain('--new-session')
    expect(argv).toContain('--as-pid-1')
  })

  it('layered mounts go parents first; at one depth binds, protected parents, masks, hidden, kept, protected', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: root })
    const hooks = path.join(root, '.git', 'hooks')
    const config = path.join(root, '.git', 'config')
    const mounts: BubblewrapMounts = {
      hidden: [
        { kind: 'dir', path: path.join(base, 'home', '.ssh') },
        { kind: 'keep', path: path.join(base, 'home', '.ssh', 'known_hosts') },
        { kind: 'file', path: path.join(root, '.env') },
      ],
      protected: {
        paths: [
          { path: hooks, kind: 'missing-dir', origin: 'git' },
          { path: config, kind: 'file', origin: 'git' },
        ],
        parents: [path.join(root, '.git')],
        stamps: [],
      },
      socketMasks: ['/run'],
      keep: ['/run/resolv.conf'],
      emptyFile: '/private/empty',
    }
    const argv = bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', command: ['true'], mounts })
    const layered = argv.slice(argv.indexOf('/proc') + 1, argv.indexOf('--json-status-fd'))
    expect(layered).toEqual([
      '--tmpfs',
      '/run',
      '--ro-bind',
      '/run/resolv.conf',
      '/run/resolv.conf',
      '--bind',
      root,
      root,
      '--bind',
      path.join(root, '.git'),
      path.join(root, '.git'),
      '--tmpfs',
      path.join(base, 'home', '.ssh'),
      '--ro-bind',
      '/private/empty',
      path.join(root, '.env'),
      '--ro-bind-try',
      path.join(base, 'home', '.ssh', 'known_hosts'),
      path.join(base, 'home', '.ssh', 'known_hosts'),
      '--tmpfs',
      hooks,
      '--ro-bind',
      config,
      config,
      '--remount-ro',
      '/run',
      '--remount-ro',
      path.join(base, 'home', '.ssh'),
      '--remount-ro',
      hooks,
      ...SEAL,
    ])
  })

  it('sealDevices: the init keeps what sealing needs, and is told to seal', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: root })
    const command = ['/x/cordon-exec', 'init', '--status-fd', '3', '--', 'true']
    const argv = bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', command, sealDevices: true })
    expect(argv).toEqual([
      BWRAP,
      ...PROCESS,
      '--cap-drop',
      'ALL',
      '--cap-add',
      'CAP_SYS_ADMIN',
      '--cap-add',
      'CAP_SETPCAP',
      ...MOUNTS,
      ...SEAL,
      ...STATUS,
      '--',
      '/x/cordon-exec',
      'init',
      '--seal-devices',
      '--status-fd',
      '3',
      '--',
      'true',
    ])
    // Without it nothing is kept.
    const plain = bubblewrapArgv(grants, { bwrapPath: BWRAP, network: 'inherit', command })
    expect(plain).not.toContain('--cap-add')
    expect(plain).not.toContain('--seal-devices')
  })

  it('sealDevices only for the init of a per-run sandbox', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: root })
    const options = { bwrapPath: BWRAP, network: 'inherit' as const, sealDevices: true }
    expect(() => bubblewrapArgv(grants, { ...options, command: ['bash', '-c', 'true'] })).toThrow(/sealDevices/)
    expect(() =>
      bubblewrapArgv(grants, { ...options, command: ['/x/cordon-exec', 'instance'], resident: true }),
    ).toThrow(/sealDevices/)
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
    expect(() =>
      bubblewrapArgv(grantsFor({ mode: 'read-only', workspaceRoot: root }, { tempDir: temp }), {
        bwrapPath: BWRAP,
        network: 'inherit',
        tempDir: temp,
        command: ['true'],
      }),
    ).not.toThrow()
    expect(() => bubblewrapArgv(ro, { bwrapPath: BWRAP, network: 'inherit', command: [] })).toThrow(/empty command/)
    const full = grantsFor({ mode: 'danger-full-access', workspaceRoot: root })
    expect(() => bubblewrapArgv(full, { bwrapPath: BWRAP, network: 'inherit', command: ['true'] })).toThrow(
      /never confined/,
    )
  })
})
