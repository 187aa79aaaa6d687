/**
 * An installed copy of the cordon package inside a workspace (<root>/node_modules/cordon, with
 * bin/ and the dependencies beside it, as npm lays them out), a plant made in that workspace
 * unconfined (the control) or by a command the INSTALLED copy's CLI confines under
 * workspace-write (its PACKAGE_ROOT is what it protects), and whether a later unconfined run of
 * that CLI executes the planted code.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import type { AttackUser } from '../attacks/attack.js'
import { NOBODY, REPO } from './run-as.js'

/** How the installed copy is laid out before the plant. */
export interface LayoutOptions {
  /** node-pty (an optional dependency) installed beside cordon; default true. */
  nodePty?: boolean
  /** dist/cli/cordon.bundle.cache shipped; default true. */
  codeCache?: boolean
  /** npm's <root>/node_modules/.bin/cordon link to bin/cordon.js; default false. */
  binLink?: boolean
}

/** An installed copy: the workspace root and the package directory. */
export interface Installed {
  base: string
  root: string
  pkg: string
  /** The file the planted code writes when it runs. */
  marker: string
}

/** Lays out a fresh installed copy under `base`/`name`. */
export function installCopy(base: string, name: string, options: LayoutOptions = {}): Installed {
  const dir = path.join(base, name)
  fs.rmSync(dir, { recursive: true, force: true })
  const root = path.join(dir, 'project')
  const pkg = path.join(root, 'node_modules', 'cordon')
  fs.mkdirSync(path.join(pkg, 'build', 'Release'), { recursive: true })
  for (const part of ['package.json', 'dist', 'profiles', 'bin'])
    fs.cpSync(path.join(REPO, part), path.join(pkg, part), { recursive: true })
  for (const bin of ['cordon.node', 'cordon-exec'])
    fs.copyFileSync(path.join(REPO, 'build', 'Release', bin), path.join(pkg, 'build', 'Release', bin))
  fs.chmodSync(path.join(pkg, 'build', 'Release', 'cordon-exec'), 0o755)
  for (const dep of ['zod', 'node-gyp-build'])
    fs.cpSync(path.join(REPO, 'node_modules', dep), path.join(root, 'node_modules', dep), { recursive: true })
  if (options.nodePty !== false) {
    // What node-pty needs at run time (its 58 MB of prebuilds for other platforms are left out).
    for (const part of ['package.json', 'lib', 'build'])
      fs.cpSync(path.join(REPO, 'node_modules', 'node-pty', part), path.join(root, 'node_modules', 'node-pty', part), {
        recursive: true,
      })
  }
  if (options.codeCache === false) fs.rmSync(path.join(pkg, 'dist', 'cli', 'cordon.bundle.cache'), { force: true })
  if (options.binLink) {
    fs.mkdirSync(path.join(root, 'node_modules', '.bin'))
    fs.symlinkSync('../cordon/bin/cordon.js', path.join(root, 'node_modules', '.bin', 'cordon'))
  }
  return { base: dir, root, pkg, marker: path.join(dir, 'planted-code-ran') }
}

/** A CommonJS line that records that it ran (in the marker file). */
export function markerJs(installed: Installed): string {
  return `require("node:fs").writeFileSync(${JSON.stringify(installed.marker)}, "ran");`
}

/** What one plant did. */
export interface PlantResult {
  status: number | null
  output: string
}

const ENV = (base: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base })

/** `argv` run as `user` (uid 65534 through setpriv, no groups). */
function as(user: AttackUser, argv: readonly string[]): string[] {
  return user === 'root'
    ? [...argv]
    : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...argv]
}

/** Hands the whole installed copy (its base included: HOME, the host dirs beside it) to uid 65534. */
export function ownByNobody(installed: Installed): void {
  const r = spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, installed.base])
  if (r.status !== 0) throw new Error(`chown failed: ${r.stderr}`)
}

/** Runs the plant (sh) in the workspace as `user`: unconfined (`none`), or confined by the installed CLI. */
export function plant(
  installed: Installed,
  backend: SandboxBackendName | 'none',
  script: string,
  user: AttackUser = 'root',
): PlantResult {
  const argv =
    backend === 'none'
      ? ['/bin/sh', '-c', script]
      : [
          process.execPath,
          path.join(installed.pkg, 'bin', 'cordon.js'),
          'run',
          '--backend',
          backend,
          '--mode',
          'workspace-write',
          '--root',
          installed.root,
          '--',
          'sh',
          '-c',
          script,
        ]
  const run = as(user, argv)
  const r = spawnSync(run[0] as string, run.slice(1), {
    cwd: installed.root,
    env: ENV(installed.base),
    encoding: 'utf8',
    timeout: 120_000,
  })
  return { status: r.status, output: `${r.stdout}${r.stderr}` }
}

/** What a refused plan prints: a backend that cannot keep the package read-only inside the root (STATE_IN_GRANT). */
export const REFUSED_PLAN = /cannot keep it so inside a writable root/

/**
 * Whether the installed copy's protected class is governed by `backend` for this workspace (the
 * account's verdict for `user`), or `refused`: the backend cannot keep the package read-only, so
 * the plan is refused (STATE_IN_GRANT) and nothing runs.
 */
export function protectedGoverned(
  installed: Installed,
  backend: SandboxBackendName,
  user: AttackUser = 'root',
): boolean | 'refused' {
  const driver = `
const { LocalSandbox } = await import(${JSON.stringify(path.join(installed.pkg, 'dist', 'index.js'))})
const sb = await LocalSandbox.create({ backends: [${JSON.stringify(backend)}] })
try {
  const c = sb.confine({ argv: ['/bin/true'], cwd: ${JSON.stringify(installed.root)}, graceMs: 500,
    stdio: { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' } },
    { mode: 'workspace-write', workspaceRoot: ${JSON.stringify(installed.root)}, sessionId: 'host-fds' })
  process.stdout.write(JSON.stringify(c.plan.account.classes.protected))
} catch (e) {
  if (e.code !== 'STATE_IN_GRANT') throw e
  process.stdout.write(JSON.stringify({ governed: 'refused' }))
}
await sb.dispose()`
  const argv = as(user, [process.execPath, '--input-type=module', '-e', driver])
  const r = spawnSync(argv[0] as string, argv.slice(1), { env: ENV(installed.base), encoding: 'utf8', timeout: 60_000 })
  if (r.status !== 0) throw new Error(`the verdict driver failed (${r.status}): ${r.stderr}`)
  return (JSON.parse(r.stdout) as { governed: boolean | 'refused' }).governed
}

/** Runs the installed copy's CLI (or `argv` as given) unconfined as `user`; true when the planted code ran. */
export function laterRunExecutesPlant(
  installed: Installed,
  argv: readonly string[],
  user: AttackUser = 'root',
): boolean {
  fs.rmSync(installed.marker, { force: true })
  const run = as(user, argv)
  spawnSync(run[0] as string, run.slice(1), {
    cwd: installed.root,
    env: ENV(installed.base),
    encoding: 'utf8',
    timeout: 60_000,
    input: '',
  })
  return fs.existsSync(installed.marker)
}

/** `node <pkg>/bin/cordon.js ARGS…`. */
export function cli(installed: Installed, ...args: string[]): string[] {
  return [process.execPath, path.join(installed.pkg, 'bin', 'cordon.js'), ...args]
}
