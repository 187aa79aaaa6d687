/**
 * Confined spawn cost. Spawn + wait of `/bin/true` with stdout/stderr piped (stdin ignored);
 * every peer waits for the exit AND both pipes to close. Peers, interleaved in one process with
 * the order rotated each iteration (40 warm-up + 300 measured each by default):
 *
 *   cordon.plain     cordon's native startChild, unconfined
 *   cordon.ro        LocalSandbox.confine(read-only) + startChild with the plan (cached ruleset)
 *   cordon.ww        the same under workspace-write (partial enforcement under Landlock)
 *   cordon.bwrap.ro  LocalSandbox pinned to bubblewrap: confine(read-only) + startChild of the
 *                    bwrap argv it returns (with its launch plan: no_new_privs + seccomp)
 *   cordon.bwrap.ww  the same under workspace-write (full enforcement under bubblewrap)
 *   node.spawn       child_process.spawn, unconfined, awaiting 'close'
 *   bwrap            child_process.spawn of `bwrap --ro-bind / / --dev /dev --proc /proc
 *                    --die-with-parent -- /bin/true` (skipped when bwrap is missing/unusable)
 *
 * Goals: cordon.ro ≤ 0.75× node.spawn and ≤ 0.2× bwrap; cordon.ro ≤ 1.10× cordon.plain.
 * Also printed: the probe's cost as a multiple of one cordon.plain spawn.
 *
 *   npx tsc -p tsconfig.build.json && node --expose-gc bench/confined-spawn.mjs
 *   (CONFINED_WARMUP, CONFINED_ITERS, PROBE_ITERS override)
 */
import { spawn as nodeSpawn, spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dist, fmt, gc, interleave, median, now, p90, printTable, ratioLine, requireBuilt, usSince } from './lib.mjs'

requireBuilt()
const { startChild } = await dist('subprocess/child.js')
const { StdioKind } = await dist('subprocess/native.js')
const { LocalSandbox } = await dist('sandbox/local-sandbox.js')
const { probeLandlock } = await dist('sandbox/probe.js')

const WARMUP = Number(process.env.CONFINED_WARMUP ?? 40)
const ITERS = Number(process.env.CONFINED_ITERS ?? 300)
const PROBE_ITERS = Number(process.env.PROBE_ITERS ?? 30)
const TRUE = '/bin/true'
const envArray = Object.entries(process.env).map(([k, v]) => `${k}=${v}`)
const root = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-ws-')))

const sandbox = await LocalSandbox.create({ backends: ['landlock'] })
const cap = sandbox.capabilities.backends.landlock
if (!cap?.usable) {
  console.error(`confined-spawn: Landlock is unusable here: ${cap?.reason}`)
  process.exit(2)
}
const bwrapArgs = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--die-with-parent', '--', TRUE]
const bwrapOk = spawnSync('bwrap', bwrapArgs, { stdio: 'ignore' }).status === 0
if (!bwrapOk)
  console.log('confined-spawn: bwrap missing or unusable; its column is skipped (apt-get install -y bubblewrap)')
const bwrapSandbox = await LocalSandbox.create({ backends: ['bubblewrap'] })
const bwrapBackend = bwrapSandbox.capabilities.backends.bubblewrap?.usable === true

const closed = (s) => (s === undefined || s.closed ? Promise.resolve() : new Promise((r) => s.once('close', r)))
const drain = (s) => {
  if (s === undefined) return Promise.resolve()
  s.resume()
  return closed(s)
}
function check(exit, who) {
  if (exit.exitCode !== 0) throw new Error(`${who}: unexpected exit ${JSON.stringify(exit)}`)
}

const spec = { argv: [TRUE], cwd: root, stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' }, graceMs: 5000 }
async function cordon(policy, who, sb = sandbox) {
  const t0 = now()
  const confined = policy ? sb.confine(spec, policy).spec : spec
  const c = startChild({
    argv: confined.argv,
    env: envArray,
    cwd: root,
    stdio: [StdioKind.Null, StdioKind.Pipe, StdioKind.Pipe],
    confinement: confined.confinement?.plan,
  })
  const [exit] = await Promise.all([c.exit, drain(c.stdout), drain(c.stderr)])
  check(exit, who)
  return usSince(t0)
}
function node(file, args, who) {
  return new Promise((resolve, reject) => {
    const t0 = now()
    const c = nodeSpawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    c.stdout.resume()
    c.stderr.resume()
    c.once('error', reject)
    c.once('close', (code, signal) => {
      try {
        check({ exitCode: code, signal }, who)
        resolve(usSince(t0))
      } catch (e) {
        reject(e)
      }
    })
  })
}

const peers = {
  'cordon.plain': () => cordon(undefined, 'cordon.plain'),
  'cordon.ro': () => cordon({ mode: 'read-only', workspaceRoot: root }, 'cordon.ro'),
  'cordon.ww': () => cordon({ mode: 'workspace-write', workspaceRoot: root, sessionId: 'bench' }, 'cordon.ww'),
  ...(bwrapBackend
    ? {
        'cordon.bwrap.ro': () => cordon({ mode: 'read-only', workspaceRoot: root }, 'cordon.bwrap.ro', bwrapSandbox),
        'cordon.bwrap.ww': () =>
          cordon({ mode: 'workspace-write', workspaceRoot: root, sessionId: 'bench' }, 'cordon.bwrap.ww', bwrapSandbox),
      }
    : {}),
  'node.spawn': () => node(TRUE, [], 'node.spawn'),
  ...(bwrapOk ? { bwrap: () => node('bwrap', bwrapArgs, 'bwrap') } : {}),
}
gc()
const samples = await interleave(peers, { warmup: WARMUP, iterations: ITERS, between: gc })

// The probe: fresh each time (no cache), measured against one unconfined cordon spawn.
const probeSamples = []
for (let i = 0; i < PROBE_ITERS; i++) {
  const t0 = now()
  const p = await probeLandlock()
  probeSamples.push(usSince(t0))
  if (!p.usable) throw new Error(`probe unusable: ${p.reason}`)
}

const m = (n) => median(samples[n])
const base = m('node.spawn')
const rows = Object.keys(samples).map((n) => [n, fmt(m(n)), fmt(p90(samples[n])), fmt(m(n) / base, 6, 3)])
rows.push([
  'probe (landlock)',
  fmt(median(probeSamples)),
  fmt(p90(probeSamples)),
  fmt(median(probeSamples) / base, 6, 3),
])
console.log(`confined-spawn: ${TRUE}, ${ITERS} measured (+${WARMUP} warm-up) per peer, interleaved; µs; ${cap.version}`)
printTable(['peer', 'median µs', 'p90 µs', '× node'], rows)
ratioLine('confined_ro_vs_node', m('cordon.ro') / base)
if (bwrapOk) ratioLine('confined_ro_vs_bwrap', m('cordon.ro') / m('bwrap'))
ratioLine('confined_ro_vs_cordon_plain', m('cordon.ro') / m('cordon.plain'))
ratioLine('confined_ww_vs_node', m('cordon.ww') / base)
ratioLine('confined_ww_vs_cordon_plain', m('cordon.ww') / m('cordon.plain'))
if (bwrapOk) ratioLine('bwrap_vs_node', m('bwrap') / base)
if (bwrapBackend) {
  ratioLine('bwrap_confined_ro_vs_landlock_ro', m('cordon.bwrap.ro') / m('cordon.ro'))
  ratioLine('bwrap_confined_ww_vs_landlock_ww', m('cordon.bwrap.ww') / m('cordon.ww'))
  ratioLine('bwrap_confined_ww_vs_cordon_plain', m('cordon.bwrap.ww') / m('cordon.plain'))
}
ratioLine('probe_vs_cordon_plain_spawn', median(probeSamples) / m('cordon.plain'))
await sandbox.dispose()
await bwrapSandbox.dispose()
rmSync(root, { recursive: true, force: true })
