// The host's device nodes inside a bubblewrap sandbox. bwrap's --dev (and a resident instance's
// own /dev) binds the host's null, zero, full, random, urandom and tty in (console too, the host's
// pty, under a terminal); a host /dev/null also arrives as an inherited stdio descriptor. Owning a
// node is enough to chmod it, set its times or its ACL, no capability needed, and the sandbox's
// root is the host's root: through read-write binds that changed the host's /dev/null. Now every
// such call fails EROFS (the init remounts the binds read-only and replaces an inherited host node
// with the sandbox's own), in both confined modes, through a resident instance, a bwrap per run
// and a confined terminal, as root and as uid 65534, and the nodes still work.
// The control runs the very same calls unconfined, as the same user, on copies of the same devices
// (same major:minor, owned by that user, made with mknod outside): they succeed, so what refuses
// them confined is the mount, not the kind of file or a missing capability. Copies, not the real
// nodes: a chmod of the host's /dev/null, even undone at once, would break whatever else runs here.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { backendStatus, gateFor } from '../../support/sandbox/backends.js'
import { ptyStatus } from '../../support/subprocess/terminal.js'
import type { AttackUser } from '../attacks/attack.js'
import { NOBODY, runScriptAs, USERS } from '../host/run-as.js'
import type { DeviceAttackCase, DeviceAttackResult } from './device-nodes-host.js'
import { scratchDirAs } from '../../support/scratch.js'

const HOST = path.join(import.meta.dirname, 'device-nodes-host.ts')
const EROFS = 30
const MODES = ['read-only', 'workspace-write'] as const
const PATHS = ['resident', 'per-run', 'terminal'] as const
/** The nodes bwrap binds in, with their device numbers (for the copies). */
const DEVICES: ReadonlyArray<[string, number, number]> = [
  ['null', 1, 3],
  ['zero', 1, 5],
  ['full', 1, 7],
  ['random', 1, 8],
  ['urandom', 1, 9],
  ['tty', 5, 0],
]
const OPS = ['chmod', 'utime', 'acl'] as const
const NODES = DEVICES.map(([name]) => `/dev/${name}`)
// Piped: stdout is the host's /dev/null itself. A terminal: console is the host's pty (bound by
// bwrap), and fd 0 the pty itself, on the host's devpts mount.
const PIPED_TARGETS = [...NODES, '/proc/self/fd/1']
const TERMINAL_TARGETS = [...NODES, '/dev/console', '/proc/self/fd/0']

const bwrapStatus = await backendStatus('bubblewrap')
const bwrapGate = gateFor(bwrapStatus)
const pty = await ptyStatus()
const CASES: DeviceAttackCase[] = MODES.flatMap((mode) =>
  PATHS.filter((how) => how !== 'terminal' || pty.usable).map((how) => ({ how, mode })),
)

/** Runs `cases` as `user` in one host, whose stdout is the host's /dev/null. */
async function attack(
  user: AttackUser,
  cases: DeviceAttackCase[],
  targets: string[],
  terminalTargets?: string[],
): Promise<DeviceAttackResult[]> {
  const base = scratchDirAs(user, 'cordon-devnodes')
  const root = path.join(base, 'ws')
  fs.mkdirSync(root)
  if (user === 'nobody') fs.chownSync(root, NOBODY, NOBODY)
  const resultFile = path.join(base, 'result.json')
  const devNull = fs.openSync('/dev/null', 'w')
  try {
    const input = JSON.stringify({ cases, root, targets, terminalTargets, resultFile })
    const r = await runScriptAs(user, HOST, [input], { stdoutFd: devNull, timeoutMs: 400_000 })
    const parsed = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as { result?: DeviceAttackResult[]; error?: string }
    if (parsed.result === undefined) throw new Error(`the host failed (exit ${r.code}): ${parsed.error ?? r.stderr}`)
    return parsed.result
  } finally {
    fs.closeSync(devNull)
  }
}

/** The same calls, unconfined, on copies of the devices that `user` owns. */
function control(user: AttackUser): { targets: string[]; run: Promise<DeviceAttackResult[]> } {
  const dir = scratchDirAs(user, 'cordon-devnodes-copies')
  const targets = DEVICES.map(([name, major, minor]) => {
    const copy = path.join(dir, name)
    const made = spawnSync('mknod', ['-m', '0666', copy, 'c', String(major), String(minor)])
    if (made.status !== 0) throw new Error(`mknod ${copy}: ${made.stderr}`)
    if (user === 'nobody') fs.chownSync(copy, NOBODY, NOBODY)
    return copy
  })
  return { targets, run: attack(user, [{ how: 'none', mode: 'workspace-write' }], targets) }
}

/** Each real node's mode, to prove the host's nodes kept theirs (and to put it back if not). */
const hostModes = () => new Map(NODES.map((n) => [n, fs.statSync(n).mode & 0o7777]))

/** Every confined case as `user`, the host's node modes compared (and put back) around them. */
async function confined(user: AttackUser): Promise<{ results: DeviceAttackResult[]; modesKept: boolean }> {
  const before = hostModes()
  let results: DeviceAttackResult[] = []
  let modesKept = false
  try {
    results = await attack(user, CASES, PIPED_TARGETS, TERMINAL_TARGETS)
  } finally {
    const after = hostModes()
    for (const [n, m] of before) if (after.get(n) !== m) fs.chmodSync(n, m)
    modesKept = [...before].every(([n, m]) => after.get(n) === m)
  }
  return { results, modesKept }
}

/** errno of `op` on `target` in a result (undefined: not attempted). */
function errnoOf(r: DeviceAttackResult, target: string, op: string): number | undefined {
  const line = r.lines.find((l) => l.startsWith(`${target} ${op} `))
  return line === undefined ? undefined : Number(line.split(' ')[2])
}

const needsRoot = process.getuid?.() !== 0
const runs = new Map(
  needsRoot
    ? []
    : USERS.map((u) => [u, { control: control(u), confined: bwrapGate === 'run' ? confined(u) : undefined }]),
)
for (const r of runs.values()) {
  r.control.run.catch(() => undefined)
  r.confined?.catch(() => undefined)
}

for (const user of USERS) {
  describe.skipIf(needsRoot)(
    `host device nodes as ${user}${needsRoot ? ' (skipped: needs a root test process)' : ''}`,
    () => {
      it(`control: unconfined, ${user} changes the mode, times and ACL of device nodes it owns`, async () => {
        const { targets, run } = runs.get(user)!.control
        const [r] = await run
        for (const t of targets) for (const op of OPS) expect(errnoOf(r!, t, op), `${t} ${op}\n${r!.output}`).toBe(0)
      })

      for (const mode of MODES) {
        for (const how of PATHS) {
          it(`bubblewrap, ${mode}, ${how}: every call on the host's nodes fails EROFS; the nodes still work`, async (ctx) => {
            if (bwrapGate === 'fail') throw new Error(`bubblewrap is required but unusable: ${bwrapStatus.reason}`)
            if (bwrapGate === 'skip') ctx.skip(`bubblewrap is unusable here: ${bwrapStatus.reason}`)
            if (how === 'terminal' && !pty.usable) {
              if (pty.required) throw new Error(`node-pty is required here but does not load: ${pty.reason}`)
              ctx.skip(`node-pty does not load here: ${pty.reason}`)
            }
            const { results, modesKept } = await runs.get(user)!.confined!
            expect(modesKept, 'the host nodes keep their modes').toBe(true)
            const r = results[CASES.findIndex((c) => c.how === how && c.mode === mode)]!
            const sealed = how === 'terminal' ? [...NODES, '/dev/console'] : PIPED_TARGETS
            for (const t of sealed) {
              if (errnoOf(r, t, 'absent') !== undefined) continue // no console without a host tty on stdout
              for (const op of OPS) expect(errnoOf(r, t, op), `BREAK ${t} ${op}:\n${r.output}`).toBe(EROFS)
            }
            expect(errnoOf(r, 'works', 'null-write'), r.output).toBe(0)
            expect(errnoOf(r, 'works', 'urandom-read'), r.output).toBe(0)
            // The path is the one named: a resident launcher, or an init that sealed its own bwrap.
            expect(r.init).toMatch(how === 'resident' ? / instance / : / init --seal-devices /)
            expect(r.metadata?.governed).toBe(true)
            // The pty a terminal is handed lives on the host's devpts mount: if its mode can change,
            // the account says so.
            if (how === 'terminal' && errnoOf(r, '/proc/self/fd/0', 'chmod') === 0)
              expect(r.metadata?.how).toMatch(/terminal the run is handed/)
          }, 400_000)
        }
      }
    },
  )
}
