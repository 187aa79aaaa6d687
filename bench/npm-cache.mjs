/**
 * Peers installed from the npm registry into ~/.cache/cordon-bench (never into the checkout), and
 * Anthropic's sandbox-runtime through its library, which bench/workspace-write.mjs and
 * bench/concurrent.mjs both run.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { now, usSince } from './lib.mjs'

/** Where the benchmarks keep what they install. */
export const CACHE = join(homedir(), '.cache', 'cordon-bench')

/**
 * `spec` (name@version) installed with `npm install --prefix` into CACHE/`dir` unless `entry`
 * (a path inside that dir) is there already: the entry's path, or a string saying why not.
 */
export function cachedInstall(dir, spec, entry) {
  const prefix = join(CACHE, dir)
  const path = join(prefix, entry)
  if (existsSync(path)) return path
  mkdirSync(prefix, { recursive: true })
  const npm = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', spec], {
    encoding: 'utf8',
    timeout: 300_000,
  })
  if (npm.status === 0 && existsSync(path)) return path
  return `npm could not install ${spec}: ${npmError(npm)}`
}

/** What a failed npm run said: its error code and first message line (not its stack or log path). */
function npmError(npm) {
  const said = `${npm.stderr ?? ''}`
    .split('\n')
    .filter((l) => l.startsWith('npm error '))
    .map((l) => l.slice('npm error '.length))
  const code = said.find((l) => l.startsWith('code '))?.slice('code '.length)
  const message = said.find((l) => !/^(code|syscall|errno) |^\s+at |^A complete log|^\s*[{}]/.test(l))
  const text = [code, message].filter(Boolean).join(': ')
  return text || `exit ${npm.status ?? npm.signal ?? npm.error?.message}`
}

/** The last sandbox-runtime whose engines accept Node 20 (later ones ask for Node ≥ 22.12). */
export const SRT_VERSION = '0.0.78'

/**
 * sandbox-runtime's manager, initialized once for workspace-write in `workspace` with no network
 * (installed into the cache when missing); a string says why it cannot run here.
 */
export async function sandboxRuntime(workspace) {
  for (const tool of ['socat', 'bwrap']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`
  }
  const entry = cachedInstall(
    `sandbox-runtime-${SRT_VERSION}`,
    `@anthropic-ai/sandbox-runtime@${SRT_VERSION}`,
    'node_modules/@anthropic-ai/sandbox-runtime/dist/index.js',
  )
  if (!entry.startsWith('/')) return entry
  const { SandboxManager } = await import(pathToFileURL(entry).href)
  try {
    await SandboxManager.initialize({
      network: { allowedDomains: [], deniedDomains: [] },
      filesystem: { denyRead: [], allowWrite: [workspace], denyWrite: [] },
    })
  } catch (error) {
    return `its initialize failed: ${error instanceof Error ? error.message : String(error)}`
  }
  return SandboxManager
}

/** One sandbox-runtime run of `command`: wrapWithSandbox, then a shell spawn of the result, until 'close'; µs. */
export async function timeSandboxRuntime(manager, command, cwd) {
  const t0 = now()
  const wrapped = await manager.wrapWithSandbox(command)
  await new Promise((resolve, reject) => {
    const c = spawn(wrapped, { shell: true, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    for (const s of [c.stdout, c.stderr]) s.resume()
    c.once('error', reject)
    c.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`sandbox-runtime: exit ${code}`))))
  })
  return usSince(t0)
}
