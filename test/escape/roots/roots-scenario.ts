/**
 * Root identity and dangerous roots (issue 10, class 8), run inside a scenario host as root or
 * nobody, per backend:
 * - a workspace root replaced by a symlink between two runs of one session: ROOT_CHANGED (not
 *   SANDBOX_UNAVAILABLE), and nothing lands where the symlink points;
 * - a workspace root inside another writable root, and a root reached through a symlink that lies
 *   inside a writable root: refused before anything runs;
 * - roots that are system directories, host temp dirs or pseudo-filesystems: refused, saying why;
 *   as root the host also runs in a private mount namespace with proc, sysfs, devpts and cgroup2
 *   mounted inside BASE, each of which must be refused where it is mounted.
 * The controls do with a plain shell what the refused policy would have allowed.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import type { SandboxPolicy } from '../../../src/policy/vocabulary.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'

/** What confine() (and, when it returned, the run) did with one policy. */
export interface RootAttempt {
  /** The error's name and code, or `accepted`. */
  verdict: string
  message: string
  /** Output of the run when confine() accepted the policy. */
  stdout?: string
}

/** The whole sequence for one backend. */
export interface RootsOutcome {
  firstRun: RootAttempt
  afterSwap: RootAttempt
  /** Whatever appeared where the swapped-in symlink points. */
  leakedToTarget: string[]
  nested: RootAttempt
  throughSymlink: RootAttempt
  refused: Record<string, RootAttempt>
  /** The same checks as writableRoots entries (workspace root a normal dir). */
  refusedAsExtra: Record<string, RootAttempt>
  /** A normal root, for contrast: accepted and run. */
  normal: RootAttempt
  /** Pseudo-filesystems mounted inside BASE (root only, in a private mount namespace). */
  mountedElsewhere: Record<string, RootAttempt>
  controls: { swapLandsInTarget: boolean; nestedSwapPossible: boolean; symlinkLandsInTarget: boolean }
}

/**
 * Directories that are never writable roots (those that exist here). /bin and /lib are cordon's
 * own system roots; on this merged-/usr host they are symlinks to /usr/bin and /usr/lib.
 */
export const REFUSED_ROOTS = [
  '/',
  '/etc',
  '/usr',
  '/boot',
  '/var',
  '/run',
  '/proc',
  '/proc/sys',
  '/sys',
  '/sys/fs/cgroup/cpu', // a cgroup mount (/sys/fs/cgroup itself is a tmpfs here)
  '/dev',
  '/dev/pts',
  '/dev/shm',
  '/tmp',
  '/var/tmp',
  '/home',
  '/root',
  '/opt',
  '/bin',
  '/lib',
].filter((p) => fs.existsSync(p))

async function tryPolicy(sandbox: LocalSandbox, policy: SandboxPolicy, command: string): Promise<RootAttempt> {
  try {
    const confined = sandbox.confine(specFor(['/bin/sh', '-c', command], '/', {}), policy)
    const r = await runSpec(confined.spec, 10_000)
    return { verdict: 'accepted', message: '', stdout: r.stdout + r.stderr }
  } catch (e) {
    const err = e as { name?: string; code?: string; message?: string }
    return { verdict: `${err.name} ${err.code}`, message: err.message ?? String(e) }
  }
}

function sh(command: string): void {
  spawnSync('/bin/sh', ['-c', command], { stdio: 'ignore' })
}

/** Mounts proc, sysfs, devpts and cgroup2 inside `base` (the host is in its own mount namespace); the mount points made. */
function mountPseudo(base: string): Record<string, string> {
  const points: Record<string, string> = {}
  for (const [type, extra] of [
    ['proc', ''],
    ['sysfs', ''],
    ['devpts', '-o newinstance'],
    ['cgroup2', ''],
  ] as const) {
    const dir = path.join(base, `mnt-${type}`)
    fs.mkdirSync(dir)
    const r = spawnSync('mount', ['-t', type, ...extra.split(' ').filter(Boolean), type, dir], { encoding: 'utf8' })
    if (r.status === 0) points[type] = dir
  }
  return points
}

/** The sequence above for `backend` in `base` (an empty dir this user owns). */
export async function rootIdentity(
  backend: SandboxBackendName,
  base: string,
  privateMounts: boolean,
): Promise<RootsOutcome> {
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  const out = path.join(base, 'outside')
  const ws = path.join(base, 'ws')
  const extra = path.join(base, 'extra')
  for (const d of [out, ws, extra, path.join(base, 'normal')]) fs.mkdirSync(d)
  const write = (dir: string) => `echo ran; echo x > "${dir}/x" && echo WROTE`

  // the same session, the same policy, a swapped root
  const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: ws, sessionId: 'roots' }
  const firstRun = await tryPolicy(sandbox, policy, write(ws))
  fs.renameSync(ws, path.join(base, 'ws-moved'))
  fs.symlinkSync(out, ws)
  const afterSwap = await tryPolicy(sandbox, policy, write(ws))
  const leakedToTarget = fs.readdirSync(out)
  sh(`echo x > "${ws}/control"`)
  const swapLandsInTarget = fs.existsSync(path.join(out, 'control'))
  for (const n of fs.readdirSync(out)) fs.rmSync(path.join(out, n), { force: true })

  // a workspace root inside an extra writable root, and a root through a symlink inside one
  const inner = path.join(extra, 'inner')
  fs.mkdirSync(inner)
  const nested = await tryPolicy(
    sandbox,
    { mode: 'workspace-write', workspaceRoot: inner, writableRoots: [extra], sessionId: 'nested' },
    write(inner),
  )
  // control: a run granted `extra` may replace extra/inner by a symlink (the next run would follow it)
  const swapper = sandbox.confine(
    specFor(['/bin/sh', '-c', `rmdir "${inner}" && ln -s "${out}" "${inner}" && echo SWAPPED`], '/', {}),
    { mode: 'workspace-write', workspaceRoot: path.join(base, 'normal'), writableRoots: [extra], sessionId: 'swapper' },
  )
  const nestedSwapPossible = (await runSpec(swapper.spec, 10_000)).stdout.includes('SWAPPED')
  fs.mkdirSync(path.join(out, 'sub'))
  const link = path.join(extra, 'link')
  fs.rmSync(link, { force: true })
  fs.symlinkSync(out, link)
  const throughSymlink = await tryPolicy(
    sandbox,
    {
      mode: 'workspace-write',
      workspaceRoot: path.join(link, 'sub'),
      writableRoots: [extra],
      sessionId: 'through-symlink',
    },
    write(path.join(link, 'sub')),
  )
  sh(`echo x > "${link}/sub/control"`)
  const symlinkLandsInTarget = fs.existsSync(path.join(out, 'sub', 'control'))

  const refused: Record<string, RootAttempt> = {}
  const refusedAsExtra: Record<string, RootAttempt> = {}
  for (const root of REFUSED_ROOTS) {
    refused[root] = await tryPolicy(
      sandbox,
      { mode: 'workspace-write', workspaceRoot: root, sessionId: 'refused' },
      'echo ran',
    )
    refusedAsExtra[root] = await tryPolicy(
      sandbox,
      {
        mode: 'workspace-write',
        workspaceRoot: path.join(base, 'normal'),
        writableRoots: [root],
        sessionId: 'refused-extra',
      },
      'echo ran',
    )
  }
  const normal = await tryPolicy(
    sandbox,
    { mode: 'workspace-write', workspaceRoot: path.join(base, 'normal'), sessionId: 'normal' },
    write(path.join(base, 'normal')),
  )
  const mountedElsewhere: Record<string, RootAttempt> = {}
  if (privateMounts) {
    for (const [type, dir] of Object.entries(mountPseudo(base))) {
      mountedElsewhere[type] = await tryPolicy(
        sandbox,
        { mode: 'workspace-write', workspaceRoot: dir, sessionId: `mounted-${type}` },
        'echo ran',
      )
      spawnSync('umount', ['-l', dir])
    }
  }
  await sandbox.dispose()
  return {
    firstRun,
    afterSwap,
    leakedToTarget,
    nested,
    throughSymlink,
    refused,
    refusedAsExtra,
    normal,
    mountedElsewhere,
    controls: { swapLandsInTarget, nestedSwapPossible, symlinkLandsInTarget },
  }
}
