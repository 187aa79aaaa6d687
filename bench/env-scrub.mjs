/**
 * The per-spawn environment scrub: µs per scrubbedParentEnv over a realistic developer env (42
 * variables, ~2.9 KB of values with LS_COLORS, a few planted secrets), next to the old name-only
 * rule (KEY | SECRET | TOKEN | PASSWORD substrings + DSH_*), re-implemented here as the baseline.
 * Peers run interleaved in one process, order rotated each iteration, 3 rounds (30 warm-up + 100
 * measured per peer per round); each sample is the mean of a batch of scrubs. Goal: the widened scrub over process.env (what a spawn pays) ≤ 1.25× the old.
 *
 *   old.plain       the old rule over a plain object holding the env
 *   new.plain       scrubbedParentEnv(plain): names and clean values memoised (the steady state)
 *   new.plain.cold  the same with every value changed since the last scrub (every value rescanned)
 *   new.minimal     scrubbedParentEnv(plain, 'minimal')
 *   old.process     the old rule over process.env (set to the same env): the real per-spawn path
 *   new.process     scrubbedParentEnv() over process.env
 *
 *   node bench/env-scrub.mjs        (ENV_BENCH_ITERS, ENV_BENCH_ROUNDS, ENV_BENCH_BATCH override)
 */
import {
  dist,
  fmt,
  goalLine,
  measureRounds,
  noiseNote,
  now,
  printTable,
  ratioLine,
  requireBuilt,
  usSince,
} from './lib.mjs'

requireBuilt()
const { scrubbedParentEnv } = await dist('subprocess/env/scrub.js')

const ITERS = Number(process.env.ENV_BENCH_ITERS ?? 100)
const ROUNDS = Number(process.env.ENV_BENCH_ROUNDS ?? 3)
const BATCH = Number(process.env.ENV_BENCH_BATCH ?? 100)

const fake = (n) => 'aB3dE5gH7jK9mN2pQ4sT6vW8yZ0cF1'.repeat(Math.ceil(n / 30)).slice(0, n)
const realistic = {
  PATH: '/home/dev/.local/bin:/home/dev/.cargo/bin:/home/dev/.nvm/versions/node/v22.11.0/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/home/dev',
  USER: 'dev',
  LOGNAME: 'dev',
  SHELL: '/bin/bash',
  LANG: 'en_US.UTF-8',
  LC_ALL: 'en_US.UTF-8',
  TERM: 'xterm-256color',
  COLORTERM: 'truecolor',
  TZ: 'Europe/Berlin',
  PWD: '/home/dev/src/app',
  OLDPWD: '/home/dev/src',
  SHLVL: '2',
  EDITOR: 'nvim',
  PAGER: 'less',
  LESS: '-R',
  LS_COLORS: 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:'.repeat(26),
  XDG_RUNTIME_DIR: '/run/user/1000',
  XDG_SESSION_TYPE: 'wayland',
  XDG_CONFIG_DIRS: '/etc/xdg/xdg-ubuntu:/etc/xdg',
  XDG_DATA_DIRS: '/usr/share/ubuntu:/usr/local/share/:/usr/share/:/var/lib/snapd/desktop',
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
  DISPLAY: ':0',
  WAYLAND_DISPLAY: 'wayland-0',
  SSH_AUTH_SOCK: '/run/user/1000/keyring/ssh',
  GIT_AUTHOR_NAME: 'Dev Eloper',
  GIT_AUTHOR_EMAIL: 'dev@example.com',
  NVM_DIR: '/home/dev/.nvm',
  NVM_BIN: '/home/dev/.nvm/versions/node/v22.11.0/bin',
  CARGO_HOME: '/home/dev/.cargo',
  GOPATH: '/home/dev/go',
  VIRTUAL_ENV: '/home/dev/src/app/.venv',
  NODE_OPTIONS: '--max-old-space-size=8192',
  HTTPS_PROXY: 'http://proxy.corp:3128',
  NO_PROXY: 'localhost,127.0.0.1,.corp',
  TOKENIZERS_PARALLELISM: 'false',
  OPENAI_API_KEY: `sk-proj-${fake(48)}`,
  GITHUB_TOKEN: `ghp_${fake(36)}`,
  DATABASE_URL: 'postgres://app:devpw@localhost:5432/app',
  AWS_PROFILE: 'dev',
  DSH_HOME: '/home/dev/.dsh',
  _: '/usr/bin/node',
}

const OLD_MARKERS = ['KEY', 'SECRET', 'TOKEN', 'PASSWORD']
/** The rule cordon shipped before the widening: name substrings only. */
function oldScrub(parent) {
  const out = Object.create(null)
  for (const name of Object.keys(parent)) {
    const value = parent[name]
    if (typeof value !== 'string') continue
    const upper = name.toUpperCase()
    if (OLD_MARKERS.some((m) => upper.includes(m)) || upper.startsWith('DSH_')) continue
    out[name] = value
  }
  return out
}

// The runtime reads process.env; give it exactly the realistic env.
for (const name of Object.keys(process.env)) delete process.env[name]
Object.assign(process.env, realistic)

const plain = { ...realistic }
// Cold: a ring of envs whose every value differs from the previous scrub's.
const coldRing = Array.from({ length: 8 }, (_, k) =>
  Object.fromEntries(Object.entries(realistic).map(([n, v]) => [n, `${v}${k}`])),
)
let coldTurn = 0
let sink = 0

const batch = (fn) => async () => {
  const t0 = now()
  for (let i = 0; i < BATCH; i++) sink += Object.keys(fn()).length
  return usSince(t0) / BATCH
}
const peers = {
  'old.plain': batch(() => oldScrub(plain)),
  'new.plain': batch(() => scrubbedParentEnv(plain)),
  'new.plain.cold': batch(() => scrubbedParentEnv(coldRing[coldTurn++ % coldRing.length])),
  'new.minimal': batch(() => scrubbedParentEnv(plain, 'minimal')),
  'old.process': batch(() => oldScrub(process.env)),
  'new.process': batch(() => scrubbedParentEnv()),
}
const res = await measureRounds(peers, { rounds: ROUNDS, warmup: 30, iterations: ITERS })
if (sink === 0) throw new Error('unreachable: every scrub keeps PATH')

const baseOf = (name) => (name.endsWith('.process') ? 'old.process' : 'old.plain')
const rows = res.names.map((name) => [
  name,
  fmt(res.median(name), 8, 2),
  fmt(res.p90(name), 8, 2),
  fmt(res.ratio(name, baseOf(name)), 7, 2),
  res.spread(name, baseOf(name)),
])
const valueBytes = Object.values(realistic).reduce((n, v) => n + v.length, 0)
console.log(
  `env-scrub: ${Object.keys(realistic).length} variables, ${valueBytes} value bytes, batch ${BATCH}; ${ROUNDS} rounds × (30 warm-up + ${ITERS} measured) per peer`,
)
noiseNote(ROUNDS)
printTable(['peer', 'µs med', 'µs p90', '× old', 'per-round ×'], rows)
console.log()
console.log('goal: the widened scrub over process.env (new.process) ≤ 1.25× the old rule (old.process)')
goalLine('env-scrub.process.vs-old', res.ratio('new.process', 'old.process'), '<=', 1.25)
ratioLine('env-scrub.plain-cold.vs-old', res.ratio('new.plain.cold', 'old.plain'))
