/**
 * Where the time of LocalSubprocessRuntime.spawn goes (diagnostic, no goal): the synchronous
 * pieces it runs per spawn, each timed in a tight loop, next to a full rt.spawn and a bare
 * startChild of /bin/true. Not part of run-all; run `node bench/breakdown.mjs`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dist, fmt, median, now, p90, printTable, requireBuilt, usSince } from './lib.mjs'

requireBuilt()
const { startChild } = await dist('subprocess/process/child.js')
const { Slot } = await dist('subprocess/native.js')
const { LocalSubprocessRuntime } = await dist('index.js')
const { validateSpawnSpec } = await dist('subprocess/spec/schema.js')
const { envToArray, mergeEnv, scrubbedParentEnv } = await dist('subprocess/env/scrub.js')
const { groupAlive } = await dist('subprocess/process/group.js')

const N = Number(process.env.BREAKDOWN_ITERS ?? 300)
const spec = {
  argv: ['/bin/true'],
  cwd: process.cwd(),
  stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  graceMs: 5000,
}
const envArray = Object.entries(process.env).map(([k, v]) => `${k}=${v}`)
const closed = (s) =>
  s === undefined || s.closed
    ? Promise.resolve()
    : new Promise((r) => {
        s.resume()
        s.once('close', r)
      })

function timeSync(fn) {
  for (let i = 0; i < 50; i++) fn()
  const xs = []
  for (let i = 0; i < N; i++) {
    const t0 = now()
    fn()
    xs.push(usSince(t0))
  }
  return xs
}

const rows = []
const add = (name, xs) => rows.push([name, fmt(median(xs), 9, 1), fmt(p90(xs), 9, 1)])
add(
  'validateSpawnSpec (zod)',
  timeSync(() => validateSpawnSpec(spec)),
)
add(
  'scrubbedParentEnv+merge+toArray',
  timeSync(() => envToArray(mergeEnv(scrubbedParentEnv(), undefined))),
)
add(
  `groupAlive(pid) (/proc scan)`,
  timeSync(() => groupAlive(999999)),
)
add(
  '  of which readdirSync(/proc)',
  timeSync(() => readdirSync('/proc')),
)
add(
  '  of which one readFileSync(/proc/<pid>/stat)',
  timeSync(() => readFileSync(`/proc/${process.pid}/stat`, 'latin1')),
)
add(
  'kill(-pgid, 0) on a gone group (ESRCH)',
  timeSync(() => {
    try {
      process.kill(-999999, 0)
    } catch {}
  }),
)

// Synchronous part of startChild vs rt.spawn, and their full spawn+wait, interleaved.
const rt = new LocalSubprocessRuntime()
const sync = { startChild: [], 'rt.spawn': [] }
const full = { startChild: [], 'rt.spawn': [] }
for (let i = 0; i < N + 30; i++) {
  const order = i % 2 ? ['startChild', 'rt.spawn'] : ['rt.spawn', 'startChild']
  for (const who of order) {
    const t0 = now()
    let waitAll
    if (who === 'startChild') {
      const c = startChild({
        argv: ['/bin/true'],
        env: envArray,
        stdio: [Slot.Null, Slot.Pipe, Slot.Pipe],
      })
      const ts = usSince(t0)
      if (i >= 30) sync[who].push(ts)
      waitAll = Promise.all([c.exit, closed(c.stdout), closed(c.stderr)])
    } else {
      const h = rt.spawn(spec)
      const ts = usSince(t0)
      if (i >= 30) sync[who].push(ts)
      waitAll = Promise.all([h.done, closed(h.stdout), closed(h.stderr)])
    }
    await waitAll
    if (i >= 30) full[who].push(usSince(t0))
  }
}
await rt.dispose()
for (const who of Object.keys(sync)) add(`${who}: synchronous call`, sync[who])
for (const who of Object.keys(full)) add(`${who}: spawn+wait total`, full[who])
console.log(
  `per-spawn pieces, ${N} samples each (µs); /proc has ${readdirSync('/proc').filter((e) => /^\d/.test(e)).length} pids`,
)
printTable(['piece', 'median µs', 'p90 µs'], rows)
