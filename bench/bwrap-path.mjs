/**
 * cordon's bubblewrap path against Node spawning the IDENTICAL bwrap argv (issue 10, "Budget").
 * `/bin/true`, stdin ignored, stdout/stderr collected. Peers, interleaved in one process with the
 * order rotated each iteration, 3 rounds (15 warm-up + 80 measured per peer per round by default):
 *
 *   cordon.bwrap.ro   rt.spawn(sb.confine(spec, read-only).spec) on LocalSandbox({ backends:
 *                     ['bubblewrap'], residentInstances: false }), until done; timed from
 *                     confine(): a bwrap per run, the path `cordon run` and the portable path
 *                     take (a resident instance has no identical argv: bench/workspace-write.mjs)
 *   node.identical.ro child_process.spawn of that very spec's argv (bwrap … -- cordon-exec init …
 *                     -- /bin/true) with its env, cwd and fds; argv taken from confine() outside
 *                     the timed region; until 'close'
 *   cordon.bwrap.ww / node.identical.ww   the same under workspace-write
 *   bwrap.bare        child_process.spawn of `bwrap --ro-bind / / /bin/true` (the floor of any
 *                     bwrap sandbox: printed beside, no goal)
 *
 * The identical argv needs fds 3, 4 and 5: cordon-exec reports on `--status-fd 3`, bwrap writes
 * `--json-status-fd 4`, and `--ruleset-fd 5` is the host-built Landlock ruleset. Node gets the
 * same fds: stdio slots 3 and 4 are pipes (Node makes them socketpairs; both are drained, as
 * cordon drains its own), slot 5 is the spec's own ruleset fd (`confinement.wrapper.ruleset.fd`,
 * which Node dup2s into place). What Node cannot do is the spec's wrapper steps
 * (`confinement.steps`: no_new_privs and a small seccomp program on bwrap itself, applied between
 * clone and exec): its peer runs bwrap without them, which is the closest honest equivalent (the
 * command's own confinement is cordon-exec's, inside, and identical). cordon's portable spawn
 * path does exactly the same when the addon cannot load. Nor can Node make the run's cgroup
 * leaves (a root host's pids, memory and cpu bounds): its argv drops `--cgroup-fd`, so cordon's
 * side alone pays for making, joining and removing them.
 *
 * Goal: cordon.bwrap.<mode> ≤ 1.15× node.identical.<mode>.
 *
 *   node --expose-gc bench/bwrap-path.mjs     (BWRAP_WARMUP, BWRAP_ITERS, BWRAP_ROUNDS override)
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  dist,
  gc,
  goalLine,
  measureRounds,
  noiseNote,
  now,
  printRounds,
  ratioLine,
  requireBuilt,
  timeNodeSpawn,
  usSince,
} from './lib.mjs'

requireBuilt()
const { LocalSandbox, LocalSubprocessRuntime, scrubbedParentEnv } = await dist('index.js')

const WARMUP = Number(process.env.BWRAP_WARMUP ?? 15)
const ITERS = Number(process.env.BWRAP_ITERS ?? 80)
const ROUNDS = Number(process.env.BWRAP_ROUNDS ?? 3)
const TRUE = '/bin/true'
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-bwrap-')))

const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], residentInstances: false })
const cap = sandbox.capabilities.backends.bubblewrap
if (!cap?.usable) {
  console.error(`bench/bwrap-path: bubblewrap is unusable here: ${cap?.reason}`)
  process.exit(2)
}
const bareArgs = ['--ro-bind', '/', '/', TRUE]
if (spawnSync('bwrap', bareArgs, { stdio: 'ignore' }).status !== 0) {
  console.error('bench/bwrap-path: `bwrap --ro-bind / / /bin/true` fails here')
  process.exit(2)
}
const rt = new LocalSubprocessRuntime()

const collect = { maxBytes: 65536 }
const spec = {
  argv: [TRUE],
  cwd: workspace,
  stdio: { stdin: 'ignore', stdout: collect, stderr: collect },
  graceMs: 5000,
}
const policies = {
  ro: { mode: 'read-only', workspaceRoot: workspace },
  ww: { mode: 'workspace-write', workspaceRoot: workspace, sessionId: 'bench' },
}

async function cordon(policy, who) {
  const t0 = now()
  const out = await rt.spawn(sandbox.confine(spec, policy).spec).done
  const us = usSince(t0)
  if (out.exitCode !== 0) throw new Error(`${who}: unexpected outcome ${JSON.stringify(out)}`)
  return us
}

/** The argv without its `--cgroup-fd N` pairs: the fds of leaves only cordon's runtime makes. */
function withoutCgroups(argv) {
  return argv.filter((word, i) => word !== '--cgroup-fd' && argv[i - 1] !== '--cgroup-fd')
}

/** Node spawning the confined spec's own argv, env, cwd and fds 3–5 (see the header). */
function identical(policy) {
  const confined = sandbox.confine(spec, policy).spec
  const [file, ...args] = withoutCgroups(confined.argv)
  if (!file.endsWith('bwrap')) throw new Error(`bench/bwrap-path: not a bwrap argv: ${confined.argv.join(' ')}`)
  const ruleset = confined.confinement?.wrapper?.ruleset
  const stdio = ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', ...(ruleset ? [ruleset.fd] : [])]
  const env = { ...scrubbedParentEnv(), ...confined.env }
  return () => timeNodeSpawn(file, args, { cwd: confined.cwd, env, stdio })
}

const peers = {
  'bwrap.bare': () => timeNodeSpawn('bwrap', bareArgs),
  'cordon.bwrap.ro': () => cordon(policies.ro, 'cordon.bwrap.ro'),
  'node.identical.ro': () => identical(policies.ro)(),
  'cordon.bwrap.ww': () => cordon(policies.ww, 'cordon.bwrap.ww'),
  'node.identical.ww': () => identical(policies.ww)(),
}
gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS, between: gc })
const seconds = (Date.now() - started) / 1000
await rt.dispose()
await sandbox.dispose()
rmSync(workspace, { recursive: true, force: true })

console.log(
  `bwrap-path: ${TRUE} under bubblewrap (${cap.version ?? 'bwrap'}), cordon vs Node spawning the identical argv; ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'bwrap.bare')
console.log()
console.log('goal (issue 10): cordon.bwrap.<mode> ≤ 1.15× node.identical.<mode>; × bwrap.bare printed beside')
for (const m of ['ro', 'ww']) {
  goalLine(`bwrap_${m}_cordon_vs_node_identical`, res.ratio(`cordon.bwrap.${m}`, `node.identical.${m}`), '<=', 1.15)
  ratioLine(`bwrap_${m}_cordon_vs_bare_bwrap`, res.ratio(`cordon.bwrap.${m}`, 'bwrap.bare'))
}
