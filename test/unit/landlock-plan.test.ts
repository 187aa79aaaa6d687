// The Landlock side of a plan, without the kernel: rights per ABI, rules cut by kind and ABI, the
// (dev, ino) cache key, the plan builder (read view + writable set + devices, namespaces, steps),
// the ruleset cache's handles (fail closed once closed), and the class accounts.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isInvalidRequestError } from '../../src/policy/errors.js'
import { grantsFor } from '../../src/policy/grants.js'
import { bubblewrapAccount, landlockAccount, promisedClasses } from '../../src/sandbox/enforcement.js'
import {
  FILE_RIGHTS,
  FS,
  handledFsFor,
  handledNetFor,
  type LandlockSyscalls,
  NET,
  type PathInspector,
  planRuleset,
  READ_TREE,
  RulesetBuildError,
  type RulesetEntry,
  rightsFor,
  rulesetArgs,
  rulesetAttrSize,
  SCOPE,
  scopedFor,
} from '../../src/sandbox/landlock.js'
import { initArgs, landlockPlan, type PlanHost, RLIMIT, rlimitsFor } from '../../src/sandbox/plan.js'
import { readEntries } from '../../src/sandbox/read-view.js'
import { RulesetCache } from '../../src/sandbox/ruleset-cache.js'
import { scratchDir } from '../support/scratch.js'

const dirs = new Map<string, number>([
  ['/', 2],
  ['/usr', 3],
  ['/work/ws', 100],
  ['/work/extra', 101],
  ['/tmp/cordon-tmp-s-abc', 102],
])
const files = new Map<string, number>([
  ['/dev/null', 5],
  ['/dev/zero', 6],
  ['/dev/urandom', 7],
])
const fakeFs: PathInspector = (p) => {
  const d = dirs.get(p)
  if (d !== undefined) return { dev: 1, ino: d, directory: true }
  const f = files.get(p)
  if (f !== undefined) return { dev: 9, ino: f, directory: false }
  return undefined
}
const MASKS = { abi: 7, handledFs: handledFsFor(7), handledNet: 0, scoped: scopedFor(7) }
const VIEW: RulesetEntry[] = [
  { path: '/', rights: FS.READ_DIR, origin: 'read' },
  { path: '/usr', rights: READ_TREE, origin: 'read' },
]
const HOST: PlanHost = {
  arch: 'x86_64',
  abi: 7,
  seccomp: true,
  supervisor: true,
  setpcap: true,
  capLast: 40,
  uid: 0,
  namespaces: { available: true, viaUserNamespace: false },
}

describe('Landlock rights per ABI', () => {
  it('handles bits 0..12 at ABI 1, adds REFER (2), TRUNCATE (3), IOCTL_DEV (5)', () => {
    expect([0, 1, 2, 3, 4, 5, 7].map(handledFsFor)).toEqual([0, 0x1fff, 0x3fff, 0x7fff, 0x7fff, 0xffff, 0xffff])
  })

  it('handles TCP only when denied without a private network, from ABI 4; scopes from ABI 6', () => {
    expect(handledNetFor(3, 'deny', false)).toBe(0)
    expect(handledNetFor(4, 'deny', false)).toBe(NET.BIND_TCP | NET.CONNECT_TCP)
    expect(handledNetFor(7, 'deny', true)).toBe(0)
    expect(handledNetFor(7, 'inherit', false)).toBe(0)
    expect(scopedFor(5)).toBe(0)
    expect(scopedFor(6)).toBe(SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL)
  })

  it('sizes the ruleset attr for the ABI, and maps access words to rights', () => {
    expect([1, 3, 4, 5, 6, 7].map(rulesetAttrSize)).toEqual([8, 8, 16, 16, 24, 24])
    expect(rightsFor(['read', 'execute'])).toBe(FS.READ_FILE | FS.READ_DIR | FS.EXECUTE)
    expect(rightsFor(['remove'])).toBe(FS.REMOVE_DIR | FS.REMOVE_FILE)
  })
})

describe('planRuleset', () => {
  it('cuts file-only rights on non-directories, never grants device creation, skips missing devices', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: '/work/ws' })
    const plan = planRuleset(
      [
        ...VIEW,
        ...grants.writable.map((w) => ({ path: w.path, rights: rightsFor(w.access), origin: 'writable' as const })),
        { path: '/dev/null', rights: 0xffff, origin: 'device' },
        { path: '/dev/tty', rights: FS.READ_FILE, origin: 'device' },
      ],
      MASKS,
      fakeFs,
    )
    expect(plan.rules.map((r) => r.path)).toEqual(['/', '/usr', '/work/ws', '/dev/null'])
    for (const rule of plan.rules) {
      if (!rule.directory) expect(rule.allowed & ~FILE_RIGHTS).toBe(0)
      expect(rule.allowed & (FS.MAKE_CHAR | FS.MAKE_BLOCK)).toBe(0)
    }
    expect(plan.rules[0]!.allowed).toBe(FS.READ_DIR)
  })

  it('cuts rights to what is handled (an older ABI, or a write-only domain)', () => {
    const plan = planRuleset(VIEW, { abi: 1, handledFs: handledFsFor(1), handledNet: 0, scoped: 0 }, fakeFs)
    expect(plan.attrSize).toBe(8)
    for (const rule of plan.rules) expect(rule.allowed & ~0x1fff).toBe(0)
  })

  it('never skips a missing writable root', () => {
    try {
      planRuleset([{ path: '/work/gone', rights: FS.WRITE_FILE, origin: 'writable' }], MASKS, fakeFs)
      expect.unreachable()
    } catch (error) {
      expect(isInvalidRequestError(error)).toBe(true)
      expect(String(error)).toContain('/work/gone')
    }
  })

  it('keys the cache by (dev, ino): a recreated root is a different ruleset', () => {
    const entries: RulesetEntry[] = [{ path: '/work/ws', rights: FS.WRITE_FILE, origin: 'writable' }]
    const before = planRuleset(entries, MASKS, fakeFs).key
    expect(planRuleset(entries, MASKS, fakeFs).key).toBe(before)
    const recreated: PathInspector = (p) => (p === '/work/ws' ? { dev: 1, ino: 999, directory: true } : fakeFs(p))
    expect(planRuleset(entries, MASKS, recreated).key).not.toBe(before)
    expect(planRuleset(entries, { ...MASKS, handledNet: 3 }, fakeFs).key).not.toBe(before)
  })

  it('renders as cordon-exec rules, each with the inode it must still be', () => {
    const plan = planRuleset([{ path: '/work/ws', rights: FS.WRITE_FILE, origin: 'writable' }], MASKS, fakeFs)
    expect(rulesetArgs(plan)).toEqual(['--landlock', 'ffff:0:3:24', '--rule', '2:1:100:/work/ws'])
  })
})

describe('the read view', () => {
  const base = scratchDir('cordon-read-view')
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

  it('grants every sibling along the way to a closed place, not the place, and no symlink', () => {
    const home = path.join(base, 'home')
    for (const d of ['home/.ssh', 'home/src', 'other']) fs.mkdirSync(path.join(base, d), { recursive: true })
    fs.writeFileSync(path.join(base, 'home/.ssh/id_ed25519'), 'secret')
    fs.writeFileSync(path.join(base, 'home/.ssh/known_hosts'), 'hosts')
    fs.writeFileSync(path.join(base, 'home/notes'), 'n')
    fs.symlinkSync(path.join(home, '.ssh'), path.join(home, 'sshlink'))
    const watched: string[] = []
    const { entries } = readEntries([{ name: 'policy', path: path.join(home, '.ssh', 'id_ed25519') }], (d) =>
      watched.push(d),
    )
    const paths = entries.map((e) => e.path)
    expect(entries[0]).toEqual({ path: '/', rights: FS.READ_DIR, origin: 'read' })
    expect(paths).toContain(path.join(home, '.ssh', 'known_hosts'))
    expect(paths).toContain(path.join(home, 'src'))
    expect(paths).toContain(path.join(home, 'notes'))
    expect(paths).toContain(path.join(base, 'other'))
    expect(paths).not.toContain(path.join(home, '.ssh', 'id_ed25519'))
    expect(paths).not.toContain(path.join(home, '.ssh'))
    expect(paths).not.toContain(path.join(home, 'sshlink'))
    expect(paths).not.toContain(home)
    expect(entries.filter((e) => e.path === '/')).toEqual([{ path: '/', rights: FS.READ_DIR, origin: 'read' }])
    expect(watched).toEqual(expect.arrayContaining(['/', home, path.join(home, '.ssh')]))
  })
})

describe('landlockPlan', () => {
  const view = { epoch: 1, entries: VIEW }
  const temp = scratchDir('cordon-plan-tmp')
  afterAll(() => fs.rmSync(temp, { recursive: true, force: true }))
  it('read-only as root: private IPC, the temp dir writable, the whole set of steps', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: '/usr' }, { tempDir: temp })
    const plan = landlockPlan({ mode: 'read-only', workspaceRoot: '/usr' }, grants, HOST, view)
    expect(plan.namespaces).toEqual({ ipc: true, net: false, user: false })
    expect(plan.writable).toContain(temp)
    expect(plan.steps).toMatchObject({ dropCaps: true, dropBounding: true, noNewPrivs: true })
    expect(plan.steps.rlimits).toEqual([{ resource: RLIMIT.CORE, soft: 0, hard: 0 }])
    expect(plan.seccomp.input).toMatchObject({ privateIpc: true, privateNet: false, privatePid: false })
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
    expect(noNs.namespaces).toEqual({ ipc: false, net: false, user: false })
    expect(noNs.ruleset!.handledNet).toBe(NET.BIND_TCP | NET.CONNECT_TCP)
    expect(noNs.seccomp.input.privateNet).toBe(false)
  })

  it('an unprivileged host takes a user namespace only when the network is denied', () => {
    const user = { ...HOST, uid: 1000, setpcap: false, namespaces: { available: true, viaUserNamespace: true } }
    const ro = { mode: 'read-only' as const, workspaceRoot: '/usr' }
    const grants = grantsFor(ro, { tempDir: temp })
    expect(landlockPlan(ro, grants, user, view).namespaces).toEqual({ ipc: false, net: false, user: false })
    const deny = { ...ro, network: 'deny' as const }
    expect(landlockPlan(deny, grantsFor(deny, { tempDir: temp }), user, view).namespaces).toEqual({
      ipc: true,
      net: true,
      user: true,
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

describe('RulesetCache', () => {
  function fakeSys() {
    let next = 100
    const open = new Set<number>()
    const sys: LandlockSyscalls & { open: Set<number>; failOn?: string } = {
      open,
      landlockCreateRuleset: () => {
        open.add(next)
        return next++
      },
      landlockAddPathRule: (_fd, path) => (path === sys.failOn ? -22 : 0),
      closeFd: (fd) => {
        if (!open.delete(fd)) throw new Error(`double close ${fd}`)
      },
    }
    return sys
  }
  const plan = (ino: number) =>
    planRuleset([{ path: `/p${ino}`, rights: FS.WRITE_FILE, origin: 'writable' }], MASKS, () => ({
      dev: 1,
      ino,
      directory: true,
    }))

  it('hits, evicts the least recently used (still open while held), and closes everything on clear', () => {
    const sys = fakeSys()
    const cache = new RulesetCache(sys, { capacity: 2 })
    const a = cache.get(plan(1))
    expect(cache.get(plan(1))).toBe(a)
    const b = cache.get(plan(2))
    cache.get(plan(1))
    cache.get(plan(3)) // evicts b, which we still hold: it stays open
    expect(b.closed).toBe(false)
    expect(sys.open.has(b.fd)).toBe(true)
    expect(cache.openFds).toBe(3)
    cache.clear()
    expect(sys.open.size).toBe(0)
    // A handle closed by its sandbox reads closed: a spec holding it fails closed at spawn.
    expect(a.closed && b.closed).toBe(true)
    expect(() => cache.get(plan(1))).toThrow(/after clear/)
  })

  it('closes a half-built ruleset when the kernel refuses a rule', () => {
    const sys = fakeSys()
    sys.failOn = '/p1'
    const cache = new RulesetCache(sys)
    expect(() => cache.get(plan(1))).toThrow(RulesetBuildError)
    expect(sys.open.size).toBe(0)
  })
})

describe('class accounts', () => {
  const facts = { abi: 7, seccomp: true, supervisor: true, namespaces: { ipc: true, net: false }, uid0: true }
  it('every confined run promises the process, IPC, keyring, terminal and lifetime classes', () => {
    expect(promisedClasses({ mode: 'read-only' })).toEqual([
      'content',
      'names',
      'metadata',
      'processes',
      'ipc',
      'keyrings',
      'terminals',
      'lifetime',
    ])
    expect(promisedClasses({ mode: 'read-only', network: 'deny', limits: { processes: 10 } })).toEqual(
      expect.arrayContaining(['network', 'resources']),
    )
  })

  it('Landlock: read-only full with ABI 7, seccomp and the supervisor; each missing piece names its class', () => {
    expect(landlockAccount(facts, { mode: 'read-only' }).enforcement).toBe('full')
    expect(landlockAccount(facts, { mode: 'read-only' }).governed).toContain('signals')
    expect(landlockAccount(facts, { mode: 'workspace-write' }).ungoverned).toEqual(['metadata'])
    expect(landlockAccount({ ...facts, seccomp: false }, { mode: 'read-only' }).ungoverned).toEqual([
      'metadata',
      'processes',
      'keyrings',
      'terminals',
    ])
    expect(landlockAccount({ ...facts, abi: 5 }, { mode: 'read-only' }).ungoverned).toEqual(['processes'])
    expect(landlockAccount({ ...facts, supervisor: false }, { mode: 'read-only' }).ungoverned).toEqual(['lifetime'])
    // RLIMIT_NPROC does not bind uid 0.
    expect(landlockAccount(facts, { mode: 'read-only', limits: { processes: 5 } }).ungoverned).toEqual(['resources'])
    expect(
      landlockAccount({ ...facts, uid0: false }, { mode: 'read-only', limits: { processes: 5 } }).enforcement,
    ).toBe('full')
  })

  it('bubblewrap: full in both modes; without Landlock inside, content is not', () => {
    expect(bubblewrapAccount(facts, { mode: 'workspace-write', network: 'deny' }).enforcement).toBe('full')
    expect(bubblewrapAccount({ ...facts, abi: 0 }, { mode: 'workspace-write' }).ungoverned).toEqual(['content'])
  })
})
