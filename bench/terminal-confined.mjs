/**
 * Confined terminal spawn: the time from asking for a terminal running `/bin/true` to its exit,
 * through the public path (LocalSandbox.confineTerminal + LocalSubprocessRuntime.spawnTerminal),
 * against node-pty spawning the same program unconfined. Peers, interleaved in one process with
 * the order rotated each iteration, 3 rounds (10 warm-up + 40 measured per peer per round by
 * default):
 *
 *   node-pty        node-pty's spawn of /bin/true, unconfined, until its exit event
 *   cordon.plain    spawnTerminal of /bin/true, unconfined (danger-full-access: no sandbox asked)
 *   cordon.landlock confineTerminal(read-only) pinned to Landlock + spawnTerminal: cordon-exec
 *                   init --terminal inherits a ruleset the host built for it (handed over
 *                   around node-pty's fork), enters the plan's namespaces, forks /bin/true,
 *                   which confines itself
 *   cordon.bwrap    the same pinned to bubblewrap: bwrap, then cordon-exec init inside
 *                   (skipped when bubblewrap is unusable)
 *
 * Every peer waits for node-pty's exit event, so the pty's own teardown is in every number.
 * What confinement adds is mostly structural: a second exec (cordon-exec, then the program), a
 * fork, the namespaces and the seccomp load, and a second exit. Building the ruleset from its
 * ~180 rules inside (the default hidden set's read view) cost ~1 ms a terminal: handing a
 * host-built one over (a new one per spawn, built ahead once the last terminal is done) took
 * cordon.landlock from 1.45-1.58x to 1.16-1.27x (2026-12-01, load 2-5).
 * cordon.bwrap is ~13-17x as root: bwrap lays a shell over /etc to hide its shadow files (~130
 * bind mounts, ~35 ms), whoever the user (see ARCHITECTURE.md, "The cost of a shell").
 *
 * Goal (issue 13): cordon.landlock ≤ 1.3× node-pty (the issue states it for spawn → first output;
 * /bin/true prints nothing, so this times spawn → exit, which includes the same start).
 *
 *   node --expose-gc bench/terminal-confined.mjs      (TCONF_WARMUP, TCONF_ITERS, TCONF_ROUNDS override)
 */
import { createRequire } from 'node:module'
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
  skipLine,
  root,
  usSince,
} from './lib.mjs'

requireBuilt()
const { LocalSandbox, LocalSubprocessRuntime, scrubbedParentEnv } = await dist('index.js')
let pty
try {
  pty = createRequire(`${root}/package.json`)('node-pty')
} catch (error) {
  console.error(`bench/terminal-confined: node-pty does not load (${error.message}); npm install node-pty@^1.1`)
  process.exit(2)
}

const WARMUP = Number(process.env.TCONF_WARMUP ?? 10)
const ITERS = Number(process.env.TCONF_ITERS ?? 40)
const ROUNDS = Number(process.env.TCONF_ROUNDS ?? 3)
const TRUE = '/bin/true'
const env = { ...scrubbedParentEnv(), TERM: 'dumb' }
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'cordon-bench-tconf-')))
const policy = { mode: 'read-only', workspaceRoot: workspace }

const rt = new LocalSubprocessRuntime()
const landlock = await LocalSandbox.create({ backends: ['landlock'] })
if (!landlock.capabilities.backends.landlock?.usable) {
  console.error(
    `bench/terminal-confined: Landlock is unusable here: ${landlock.capabilities.backends.landlock?.reason}`,
  )
  process.exit(2)
}
const bwrap = await LocalSandbox.create({ backends: ['bubblewrap'] })
const bwrapUsable = bwrap.capabilities.backends.bubblewrap?.usable === true
if (!bwrapUsable)
  console.log(
    `bench/terminal-confined: bubblewrap unusable (${bwrap.capabilities.backends.bubblewrap?.reason}); skipped`,
  )

const spec = () => ({ argv: [TRUE], cwd: workspace, cols: 80, rows: 24, graceMs: 1000, env: { TERM: 'dumb' } })

async function cordonPeer(name, confine) {
  const t0 = now()
  const t = await rt.spawnTerminal(confine(spec()))
  const exit = await t.done
  const us = usSince(t0)
  if (exit.exitCode !== 0) throw new Error(`${name}: unexpected exit ${JSON.stringify(exit)}`)
  await t.terminate()
  return us
}

const peers = {
  'node-pty': async () => {
    const t0 = now()
    const p = pty.spawn(TRUE, [], { name: 'dumb', cols: 80, rows: 24, cwd: workspace, env })
    const exit = await new Promise((resolve) => p.onExit(resolve))
    const us = usSince(t0)
    if (exit.exitCode !== 0) throw new Error(`node-pty: unexpected exit ${JSON.stringify(exit)}`)
    return us
  },
  'cordon.plain': () => cordonPeer('cordon.plain', (s) => s),
  'cordon.landlock': () => cordonPeer('cordon.landlock', (s) => landlock.confineTerminal(s, policy).spec),
}
if (bwrapUsable) peers['cordon.bwrap'] = () => cordonPeer('cordon.bwrap', (s) => bwrap.confineTerminal(s, policy).spec)

gc()
const started = Date.now()
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: WARMUP, iterations: ITERS })
const seconds = (Date.now() - started) / 1000
await rt.dispose()
await landlock.dispose()
await bwrap.dispose()
rmSync(workspace, { recursive: true, force: true })

console.log(
  `terminal spawn → exit of ${TRUE} (read-only where confined), ${ROUNDS} rounds × (${WARMUP} warm-up + ${ITERS} measured) per peer, interleaved (${seconds.toFixed(1)} s)`,
)
noiseNote(ROUNDS)
printRounds(res, 'node-pty')
console.log()
console.log('goal (issue 13): cordon.landlock ≤ 1.3× node-pty')
goalLine('terminal_confined_landlock_vs_nodepty', res.ratio('cordon.landlock', 'node-pty'), '<=', 1.3)
if (bwrapUsable) ratioLine('terminal_confined_bwrap_vs_nodepty', res.ratio('cordon.bwrap', 'node-pty'))
else
  skipLine(
    'terminal_confined_bwrap_vs_nodepty',
    `bubblewrap unusable: ${bwrap.capabilities.backends.bubblewrap?.reason}`,
  )
