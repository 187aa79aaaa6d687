/**
 * Running one workload: fresh project dirs per run, the command unconfined (`bash -c`) and
 * through the real CLI (`bin/cordon.js run` over dist/, as root or as uid 65534 by setpriv), in a
 * clean environment both share, and what a run leaves behind: live processes carrying the run's
 * marker, files in the host TMPDIR it was given, its session dir in cordon's private layout, and
 * new /dev/shm entries.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { alive, eventually } from '../subprocess/processes.js'

/** The unprivileged uid (nobody). */
export const NOBODY = 65534

/** A run dir's name is `NN-xyz-XXXXXX`: fixed width, so outputs that pad paths compare. */
export const RUN_DEPTH_NAME = '00-fix-000000'

const BIN = path.join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')

/** The dirs of one run: `dir/{root,out,home,tmp}`. */
export interface RunDirs {
  dir: string
  root: string
  out: string
  home: string
  /** The host TMPDIR of the run (cordon's own and the unconfined command's): must stay empty. */
  tmp: string
  uid: number
}

/** Fresh run dirs under `runs` named `label-XXXXXX` (label: 6 chars), owned by `uid`. */
export function makeRunDirs(runs: string, label: string, uid: number): RunDirs {
  const dir = fs.mkdtempSync(path.join(runs, `${label}-`))
  fs.chmodSync(dir, 0o755)
  const dirs = { dir, root: `${dir}/root`, out: `${dir}/out`, home: `${dir}/home`, tmp: `${dir}/tmp`, uid }
  for (const d of [dirs.root, dirs.out, dirs.home, dirs.tmp]) {
    fs.mkdirSync(d)
    fs.chownSync(d, uid, uid)
  }
  return dirs
}

/** Per-run values besides the dirs. */
export interface Places {
  fix: string
  port?: number
  hostport?: number
}

/** `text` with the corpus placeholders filled for this run. */
export function fill(text: string, dirs: RunDirs, places: Places): string {
  return text
    .replaceAll('{root}', dirs.root)
    .replaceAll('{out}', dirs.out)
    .replaceAll('{home}', dirs.home)
    .replaceAll('{fix}', places.fix)
    .replaceAll('{py}', '/usr/bin/python3')
    .replaceAll('{port}', String(places.port ?? 0))
    .replaceAll('{hostport}', String(places.hostport ?? 0))
}

/** Output made comparable across runs: the run's dir, the fixtures dir and durations replaced. */
export function normalize(text: string, dirs: RunDirs, fix: string): string {
  return text
    .replaceAll(dirs.dir, '<RUN>')
    .replaceAll(fix, '<FIX>')
    .replace(/duration_ms:? [\d.]+/g, 'duration_ms <T>')
    .replace(/\b\d+(\.\d+)?\s?m?s\b/g, '<T>')
}

/** The environment every run of the corpus shares (no ambient config of this host's shell). */
export function baseEnv(home: string, tmp: string): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: home,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    GIT_AUTHOR_NAME: 'Work Load',
    GIT_AUTHOR_EMAIL: 'workload@example.invalid',
    GIT_COMMITTER_NAME: 'Work Load',
    GIT_COMMITTER_EMAIL: 'workload@example.invalid',
    // Fixed dates: commit ids are the same in every run.
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
    GIT_CONFIG_NOSYSTEM: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    PYTHONDONTWRITEBYTECODE: '1',
  }
}

/** One run's environment: the base one, cordon's private dir of this uid, and the run's marker. */
export function runEnv(dirs: RunDirs, privateDir: string, mark: string): Record<string, string> {
  return { ...baseEnv(dirs.home, dirs.tmp), CORDON_PRIVATE_DIR: privateDir, WL_MARK: mark }
}

/** A finished child. */
export interface Exited {
  pid: number
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
}

/** Runs `argv` as `uid` (setpriv for another uid), collecting everything; SIGKILL after `timeoutMs`; `stdin` fed through a pipe. */
export function spawnAs(
  uid: number,
  argv: readonly string[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number; stdin?: string | undefined },
): Promise<Exited> {
  const full =
    uid === process.getuid?.()
      ? [...argv]
      : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...argv]
  return new Promise((resolve, reject) => {
    const child = spawn(full[0]!, full.slice(1), {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    child.stdin?.on('error', () => {}) // a command may exit without reading it
    child.stdin?.end(opts.stdin)
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout?.on('data', (c: Buffer) => out.push(c))
    child.stderr?.on('data', (c: Buffer) => err.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000)
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({
        pid: child.pid ?? 0,
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      })
    })
  })
}

/** The `cordon run` argv (node + bin/cordon.js + args). */
export function cordonArgv(args: readonly string[]): string[] {
  return [process.execPath, BIN, 'run', ...args]
}

/** Pids of live (non-zombie) processes whose environment carries `WL_MARK=mark`. */
export function markedProcesses(mark: string): number[] {
  const needle = Buffer.from(`WL_MARK=${mark}\0`)
  const found: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let environ: Buffer
    try {
      environ = fs.readFileSync(`/proc/${name}/environ`)
    } catch {
      continue
    }
    if (environ.includes(needle) && alive(Number(name))) found.push(Number(name))
  }
  return found
}

/** The names in /dev/shm now. */
export function shmEntries(): Set<string> {
  return new Set(fs.readdirSync('/dev/shm'))
}

/** What one finished run left behind (empty: nothing). */
export async function leftovers(run: {
  dirs: RunDirs
  mark: string
  privateDir: string
  shmBefore: Set<string>
  /** Whose session dirs must be gone: the CLI's (by its pid), or every one (a private dir of this run alone). */
  sessions?: { pid: number } | 'all'
}): Promise<string[]> {
  const left: string[] = []
  // A leaked server lives on; a tree still being torn down is gone within the grace.
  await eventually(() => markedProcesses(run.mark).length === 0, 3000)
  for (const pid of markedProcesses(run.mark)) {
    let cmd = ''
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
    } catch {
      cmd = '?'
    }
    left.push(`process ${pid} (${cmd}) is still running`)
  }
  const tmp = fs.readdirSync(run.dirs.tmp)
  if (tmp.length > 0) left.push(`the host TMPDIR holds ${tmp.join(', ')}`)
  if (run.sessions !== undefined) {
    const sessions = path.join(run.privateDir, 'sessions')
    const which = run.sessions
    const mine = fs.existsSync(sessions)
      ? fs.readdirSync(sessions).filter((n) => which === 'all' || n.startsWith(`${which.pid}-`))
      : []
    if (mine.length > 0) left.push(`session dirs left in ${sessions}: ${mine.join(', ')}`)
  }
  // Another suite's transient entries come and go; one that stays is a leak.
  const fresh = () => [...shmEntries()].filter((n) => !run.shmBefore.has(n))
  if (fresh().length > 0) await new Promise((r) => setTimeout(r, 1000))
  const shm = fresh()
  if (shm.length > 0) left.push(`/dev/shm holds new entries: ${shm.join(', ')}`)
  return left
}

/** The denial line `cordon run` prints on stderr: the paths and the remedy flags (without the last resort). */
export function denialLineOf(stderr: string): { paths: string; remedy: string } | undefined {
  const m =
    /^cordon: sandbox denied a write to (.*) under \S+ mode; to allow it: (.*?)(?: \(or --mode danger-full-access\))?$/m.exec(
      stderr,
    )
  if (m) return { paths: m[1]!, remedy: m[2]! }
  // A path no writable root can reach: the mode the line names is the way out.
  const none =
    /^cordon: sandbox denied a write to (.*) under \S+ mode; no writable root can allow .*, or use (--mode danger-full-access)\)$/m.exec(
      stderr,
    )
  return none ? { paths: none[1]!, remedy: none[2]! } : undefined
}

/** Words of a POSIX-shell-quoted flag string (bare words and '…' quoting, as the CLI prints them). */
export function shellWords(text: string): string[] {
  const words: string[] = []
  for (const m of text.matchAll(/(?:'((?:[^']|'\\'')*)'|(\S+))/g)) words.push(m[1]?.replaceAll("'\\''", "'") ?? m[2]!)
  return words
}

/** Whether `candidate` matches `pattern` (`*` matches within one path component). */
export function pathMatches(pattern: string, candidate: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map(escapeRegExp).join('[^/]*')}$`)
  return re.test(candidate)
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The paths matching `pattern` on disk now (a `*` only in the last component). */
export function pathsMatching(pattern: string): string[] {
  if (!pattern.includes('*')) return fs.existsSync(pattern) || isLink(pattern) ? [pattern] : []
  const dir = path.dirname(pattern)
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  return names.map((n) => path.join(dir, n)).filter((p) => pathMatches(pattern, p))
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink()
  } catch {
    return false
  }
}

/** A content fingerprint of `file` (undefined when absent; a dir's is its listing). */
export function fingerprint(file: string): string | undefined {
  try {
    const st = fs.lstatSync(file)
    const body = st.isDirectory() ? fs.readdirSync(file).sort().join('\n') : fs.readFileSync(file)
    return createHash('sha256').update(body).digest('hex')
  } catch {
    return undefined
  }
}

/** A loopback port free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
}
