/**
 * Confined spawn cost through the PUBLIC path a caller uses (issue 10, "Budget"): spawn + wait of
 * `/bin/true`, stdin ignored, stdout/stderr collected (`{ maxBytes }` each), timed from the
 * confine() call to `done` (which waits for the exit and both collected pipes). Peers,
 * interleaved in one process with the order rotated each iteration, 3 rounds (20 warm-up + 100
 * measured per peer per round by default):
 *
 *   node.spawn        child_process.spawn('/bin/true'), stdio ['ignore','pipe','pipe'], both
 *                     streams resumed, until 'close': the peer every ratio is taken against
 *   cordon.ro         rt.spawn(sb.confine(spec, read-only).spec), LocalSandbox({ backends:
 *                     ['landlock'] }) with its defaults (protective mounts, lifetime, run-as)
 *   cordon.ww         the same under workspace-write (no goal)
 *   rt.unconfined     rt.spawn(spec) without a sandbox: the public path's own cost (no goal)
 *   floor.startChild  FLOOR, one level down, NOT a public path: the native startChild of
 *                     /bin/true, unconfined, pipes resumed until closed (no goal)
 *   floor.direct.ro   FLOOR, NOT a public path: startChild with cordon.ro's own steps (rlimits,
 *                     caps, no_new_privs, the Landlock ruleset, the seccomp program) applied by
 *                     the child between clone and exec, but no supervisor, no namespaces and no
 *                     lifetime containment: what the launcher/supervisor path costs on top of
 *                     the confinement itself (no goal)
 *   bwrap             child_process.spawn of `bwrap --ro-bind / / --dev /dev --proc /proc
 *                     --die-with-parent -- /bin/true` (skipped when bwrap is missing/unusable)
 *   probe.landlock    probeLandlock() fresh (no per-process cache): ms per probe
 *   probe.bubblewrap  probeBubblewrap() fresh: ms per probe (skipped when bwrap is unusable)
 *
 * Goal (issue 10): cordon.ro ≤ 0.75× node.spawn. Also kept from ARCHITECTURE.md: cordon.ro ≤ 0.2×
 * bwrap and ≤ 1.10× rt.unconfined (the public path without a sandbox); and issue 10's probe
 * canaries within 30 ms.
 *
 * Where cordon.ro's time went when this was written (strace and performance.now(), load 8-15): of
 * ~1.8 ms, confine() ~50 µs; rt.spawn() returns after ~1.2 ms (unconfined: ~0.5 ms) because it
 * waits synchronously for the launcher's reply, which the pre-forked supervisor sends only after
 * the command has applied its steps and exec'd (clone(CLONE_VFORK)); meanwhile the zygote forks
 * the next idle supervisor on the same 2 cores. After the exit, done waits for the supervisor's
 * "exit" status line and its own exit (lifetime containment). floor.direct.ro shows the same
 * steps without the supervisor.
 *
 * The "until the spawn call returned" line splits each peer's time (2026-12-01, load 2-5): the
 * confined public path has two cross-process wake-ups more on its critical path than a direct
 * spawn (the idle supervisor at the start, its status line at the end); on 2 shared cores the
 * supervisor often gets no CPU until the command has run, so rt.spawn returns after ~1.4 of
 * ~1.5 ms (interleaved here) or ~0.5 of ~1.0 ms (back to back). That is the gap between
 * cordon.ro (~0.79-0.84x) and floor.direct.ro (~0.62x), and why 0.75x was missed.
 *
 * Since the launcher runs as SCHED_BATCH (native/zygote.cc: its fork of the next idle supervisor
 * no longer preempts the supervisor sending the answer), cordon.ro is ~0.73-0.76x here. What is
 * left: in this interleaved bench the host's wake-up for the answer often comes only once the
 * command is done (marks: ~0.6-1 ms after the answer was sent), the scheduler keeping the host
 * behind the command on 2 cores.
 *
 *   node --expose-gc bench/confined-spawn.mjs
 *   (CONFINED_WARMUP, CONFINED_ITERS, CONFINED_ROUNDS, PROBE_ITERS override)
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  dist,
  fmt,
  gc,
  goalLine,
  measureRounds,
  median,
  noiseNote,
  now,
  p90,
  printRounds,
  ratioLine,
  requireBuilt,
  skipLine,
  timeNodeSpawn,
  usSince,
} from './lib.mjs'

requireBuilt()
const { LocalSandbox, LocalSubprocessRuntime } = await dist('index.js')
const { startChild } = await dist('subprocess/process/child.js')
const { Slot } = await dist('subprocess/native.js')
const { nativePlanOf } = await dist('subprocess/process/launch-kind.js')
const { probeLandlock } = await dist('sandbox/landlock/probe.js')
const { probeBubblewrap } = await dist('sandbox/bubblewrap/probe.js')

const WARMUP = Number(process.env.CONFINED_WARMUP ?? 20)
const ITERS = Number(process.env.CONFINED_ITERS ?? 100)
const ROUNDS = Number(process.env.CONFINED_ROUNDS ?? 3)
const PROBE_ITERS = Number(process.env.PROBE_ITERS ?? 20)
const TRUE = '/bin/true'
const envArray = Object.entries(process.env).map(([k, v]) => `${k}=${v}`)
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-ws-')))

const sandbox = await LocalSandbox.create({ backends: ['landlock'] })
const cap = sandbox.capabilities.backends.landlock
if (!cap?.usable) {
  console.error(`confined-spawn: Landlock is unusable here: ${cap?.reason}`)
  process.exit(2)
}
const rt = new LocalSubprocessRuntime()
const bwrapArgs = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--die-with-parent', '--', TRUE]
const bwrapOk = spawnSync('bwrap', bwrapArgs, { stdio: 'ignore' }).status === 0
if (!bwrapOk)
  console.log('confined-spawn: bwrap missing or unusable; its row is skipped (apt-get install -y bubblewrap)')

const collect = { maxBytes: 65536 }
const spec = {
  argv: [TRUE],
  cwd: workspace,
  stdio: { stdin: 'ignore', stdout: collect, stderr: collect },
  graceMs: 5000,
}
const ro = { mode: 'read-only', workspaceRoot: workspace }
const ww = { mode: 'workspace-write', workspaceRoot: workspace, sessionId: 'bench' }

// Each peer's time until its spawn call returned (the rest is the wait for the exit and the pipes):
// where a confined spawn's extra goes, the launcher's round trip or the end.
const returned = {}
const noteReturn = (who, us) => {
  returned[who] ??= []
  returned[who].push(us)
}

/** The public path: confine (when a policy is given) and spawn, until done. */
async function cordon(policy, who) {
  const t0 = now()
  const h = rt.spawn(policy ? sandbox.confine(spec, policy).spec : spec)
  noteReturn(who, usSince(t0))
  const out = await h.done
  const us = usSince(t0)
  if (out.exitCode !== 0) throw new Error(`${who}: unexpected outcome ${JSON.stringify(out)}`)
  return us
}
const drained = (s) =>
  s === undefined || s.closed
    ? Promise.resolve()
    : new Promise((r) => {
        s.resume()
        s.once('close', r)
      })

/** startChild of /bin/true, with the native form of `steps` when given; pipes drained. */
async function floor(steps, who) {
  const t0 = now()
  const confinement = steps ? nativePlanOf(sandbox.confine(spec, steps).spec.confinement.steps) : undefined
  const c = startChild({
    argv: [TRUE],
    env: envArray,
    cwd: workspace,
    stdio: [Slot.Null, Slot.Pipe, Slot.Pipe],
    confinement,
  })
  noteReturn(who, usSince(t0))
  const [exit] = await Promise.all([c.exit, drained(c.stdout), drained(c.stderr)])
  const us = usSince(t0)
  if (exit.exitCode !== 0) throw new Error(`${who}: unexpected exit ${JSON.stringify(exit)}`)
  return us
}

const peers = {
  'node.spawn': () => timeNodeSpawn(TRUE, []),
  'cordon.ro': () => cordon(ro, 'cordon.ro'),
  'cordon.ww': () => cordon(ww, 'cordon.ww'),
  'rt.unconfined': () => cordon(undefined, 'rt.unconfined'),
  'floor.startChild': () => floor(undefined, 'floor.startChild'),
  'floor.direct.ro': () => floor(ro, 'floor.direct.ro'),
  ...(bwrapOk ? { bwrap: () => timeNodeSpawn('bwrap', bwrapArgs) } : {}),
}
gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
const seconds = (Date.now() - started) / 1000

// The probe: fresh each time (probeLandlock itself has no cache).
const probeMs = []
for (let i = 0; i < PROBE_ITERS; i++) {
  const t0 = now()
  const p = await probeLandlock()
  probeMs.push(usSince(t0) / 1000)
  if (!p.usable) throw new Error(`probe unusable: ${p.reason}`)
}
const bwrapProbeMs = []
for (let i = 0; bwrapOk && i < PROBE_ITERS; i++) {
  const t0 = now()
  const p = await probeBubblewrap()
  bwrapProbeMs.push(usSince(t0) / 1000)
  if (!p.usable) throw new Error(`bubblewrap probe unusable: ${p.reason}`)
}
await rt.dispose()
await sandbox.dispose()
rmSync(workspace, { recursive: true, force: true })

console.log(
  `confined-spawn: ${TRUE} through rt.spawn(sb.confine(spec, policy).spec), collect-mode stdio; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s); ${cap.version}`,
)
noiseNote(ROUNDS)
printRounds(res, 'node.spawn')
console.log(
  `until the spawn call returned (median µs, warm-ups included): ${Object.entries(returned)
    .map(([who, us]) => `${who} ${fmt(median(us), 0, 0)}`)
    .join(', ')}; the rest of each peer's time is the wait for its exit and pipes`,
)
console.log(
  `probe.landlock (fresh, ${PROBE_ITERS}×): median ${fmt(median(probeMs), 0, 1)} ms, p90 ${fmt(p90(probeMs), 0, 1)} ms`,
)
if (bwrapOk)
  console.log(
    `probe.bubblewrap (fresh, ${PROBE_ITERS}×): median ${fmt(median(bwrapProbeMs), 0, 1)} ms, p90 ${fmt(p90(bwrapProbeMs), 0, 1)} ms`,
  )
console.log()
console.log(
  'goals: cordon.ro (public path, Landlock read-only) ≤ 0.75× node.spawn (issue 10), ≤ 0.2× bwrap and ≤ 1.10× rt.unconfined (ARCHITECTURE.md); probe ≤ 30 ms (issue 10)',
)
goalLine('confined_ro_public_vs_node', res.ratio('cordon.ro', 'node.spawn'), '<=', 0.75)
const bwrapWhy = 'bwrap missing or unusable here'
if (bwrapOk) goalLine('confined_ro_public_vs_bwrap', res.ratio('cordon.ro', 'bwrap'), '<=', 0.2)
else skipLine('confined_ro_public_vs_bwrap', bwrapWhy)
goalLine('confined_ro_vs_rt_unconfined', res.ratio('cordon.ro', 'rt.unconfined'), '<=', 1.1)
goalLine('probe_landlock_ms', median(probeMs), '<=', 30)
if (bwrapOk) goalLine('probe_bubblewrap_ms', median(bwrapProbeMs), '<=', 30)
else skipLine('probe_bubblewrap_ms', bwrapWhy)
ratioLine('confined_ww_public_vs_node', res.ratio('cordon.ww', 'node.spawn'))
ratioLine('rt_unconfined_collect_vs_node', res.ratio('rt.unconfined', 'node.spawn'))
ratioLine('floor_startChild_vs_node', res.ratio('floor.startChild', 'node.spawn'))
ratioLine('floor_direct_ro_vs_node', res.ratio('floor.direct.ro', 'node.spawn'))
ratioLine('confined_ro_vs_floor_direct_ro', res.ratio('cordon.ro', 'floor.direct.ro'))
