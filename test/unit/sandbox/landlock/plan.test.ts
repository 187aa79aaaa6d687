// The Landlock plan builder without the kernel: read view + writable set + devices, namespaces,
// the command's steps, and the cordon-exec init arguments.
import fs from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { NET } from '../../../../src/sandbox/ruleset/landlock.js'
import { initArgs, RLIMIT, rlimitsFor } from '../../../../src/sandbox/confinement/plan.js'
import { landlockPlan } from '../../../../src/sandbox/landlock/plan.js'
import { HOST, VIEW } from '../../../support/sandbox/landlock-fixtures.js'
import { scratchDir } from '../../../support/scratch.js'

describe('landlockPlan', () => {
  const view = { epoch: 1, entries: VIEW }
  const temp = scratchDir('cordon-plan-tmp')
  afterAll(() => fs.rmSync(temp, { recursive: true, force: true }))
  it('read-only as root: private IPC, the temp dir writable, the whole set of steps', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: '/usr' }, { tempDir: temp })
    const plan = landlockPlan({ mode: 'read-only', workspaceRoot: '/usr' }, grants, HOST, view)
    // A read-only view of the host but for the temp dir: metadata is left to the mounts.
    expect(plan.namespaces).toEqual({ ipc: true, net: false, user: false, keys: true, view: [temp] })
    expect(plan.seccomp.input.metadataByMounts).toBe(true)
    expect(plan.account.classes.metadata?.how).toMatch(/mount namespace/)
    expect(plan.writable).toContain(temp)
    expect(plan.steps).toMatchObject({ dropCaps: true, dropBounding: true, noNewPrivs: true })
    expect(plan.steps.rlimits).toEqual([{ resource: RLIMIT.CORE, soft: 0, hard: 0 }])
    expect(plan.seccomp.input).toMatchObject({ privateIpc: true, privateNet: false })
    expect(plan.account.enforcement).toBe('full')
  })

  it('network deny: a private network (no TCP rules); without namespaces, TCP handled and socket() refused', () => {
    const policy = { mode: 'read-only' as const, workspaceRoot: '/usr', network: 'deny' as const }
    const grants = grantsFor(policy, { tempDir: temp })
    const withNs = landlockPlan(policy, grants, HOST, view)
    expect(withNs.namespaces.net).toBe(true)
    expect(withNs.ruleset!.handledNet).toBe(0)
    const noNs = landlockPlan(
      policy,
      grants,
      { ...HOST, namespaces: { available: false, viaUserNamespace: false } },
      view,
    )
    expect(noNs.namespaces).toEqual({ ipc: false, net: false, user: false, keys: false })
    expect(noNs.ruleset!.handledNet).toBe(NET.BIND_TCP | NET.CONNECT_TCP)
    expect(noNs.seccomp.input.privateNet).toBe(false)
  })

  it('an unprivileged host takes a user namespace only for a denied network or a read-only view', () => {
    const user = { ...HOST, uid: 1000, setpcap: false, namespaces: { available: true, viaUserNamespace: true } }
    const ro = { mode: 'read-only' as const, workspaceRoot: '/usr' }
    const grants = grantsFor(ro, { tempDir: temp })
    expect(landlockPlan(ro, grants, user, view).namespaces).toEqual({
      ipc: false,
      net: false,
      user: true,
      keys: false,
      view: [temp],
    })
    const ww = { mode: 'workspace-write' as const, workspaceRoot: '/usr' }
    expect(landlockPlan(ww, grantsFor(ww, { tempDir: temp }), user, view).namespaces).toEqual({
      ipc: false,
      net: false,
      user: false,
      keys: false,
    })
    // No namespaces at all: the metadata family is refused whole by seccomp instead.
    const none = { ...HOST, namespaces: { available: false, viaUserNamespace: false } }
    const flat = landlockPlan(ro, grants, none, view)
    expect(flat.namespaces.view).toBeUndefined()
    expect(flat.seccomp.input.metadataByMounts).toBe(false)
    const deny = { ...ro, network: 'deny' as const }
    expect(landlockPlan(deny, grantsFor(deny, { tempDir: temp }), user, view).namespaces).toEqual({
      ipc: true,
      net: true,
      user: true,
      keys: false,
      view: [temp],
    })
  })

  it('limits become rlimits, and cordon-exec init arguments carry every step', () => {
    expect(rlimitsFor({ processes: 64, fileSizeBytes: 1 << 20 })).toEqual([
      { resource: RLIMIT.CORE, soft: 0, hard: 0 },
      { resource: RLIMIT.NPROC, soft: 64, hard: 64 },
      { resource: RLIMIT.FSIZE, soft: 1 << 20, hard: 1 << 20 },
    ])
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: '/usr' }, { tempDir: temp })
    const plan = landlockPlan({ mode: 'read-only', workspaceRoot: '/usr' }, grants, HOST, view)
    const args = initArgs(plan, { statusFd: 3, graceMs: 500, background: true, ruleset: ['--ruleset-fd', '5'] })
    expect(args.slice(0, 6)).toEqual(['init', '--status-fd', '3', '--grace-ms', '500', '--background'])
    expect(args).toEqual(
      expect.arrayContaining(['--drop-caps', '--no-new-privs', '--unshare-ipc', '--ruleset-fd', '5']),
    )
    expect(args[args.indexOf('--seccomp-hex') + 1]).toBe(plan.steps.filter!.toString('hex'))
  })
})
