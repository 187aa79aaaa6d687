// The backend chain on a host without the addon, for real: a child Node host imports cordon (dist/)
// where the addon cannot load, probes, confines and runs an attack that writes outside every
// grant. With the cordon-exec helper (CORDON_ADDON=off: the addon alone is gone, as on another
// libc with a static helper) the chain falls to bubblewrap, layered by cordon-exec inside, and the
// attack is refused; in a copy of the package with no native build at all, every confined mode
// fails closed with SANDBOX_UNAVAILABLE and nothing runs. Never unconfined; the control (the same
// attack under danger-full-access) succeeds in both hosts, so the attack is real.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { requireBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const repo = join(import.meta.dirname, '..', '..', '..')

interface ModeResult {
  backend?: string
  enforcement?: string
  exitCode?: number | null
  stdout?: string
  stderr?: string
  attackLanded: boolean
  error?: { name: string; code: string; message: string }
}

interface HostReport {
  spawnPath: { path: string; reason: string; helper?: string }
  landlock: { usable: boolean; reason?: string }
  bubblewrap: { usable: boolean; reason?: string; enforcement?: unknown }
  results: Record<'read-only' | 'workspace-write' | 'danger-full-access', ModeResult>
  background: { exitCode: number | null } | { error: string }
}

// The host: probe, then the attack in each mode, then a background (supervised) job.
const HOST = `
import { existsSync, rmSync } from 'node:fs'
const { LocalSandbox, LocalSubprocessRuntime } = await import(process.env.CORDON_INDEX)
const [root, outside] = JSON.parse(process.env.CORDON_DIRS)
const rt = new LocalSubprocessRuntime()
const sandbox = await LocalSandbox.create()
const caps = sandbox.capabilities.backends
const results = {}
for (const mode of ['read-only', 'workspace-write', 'danger-full-access']) {
  const target = outside + '/' + mode
  const spec = { argv: ['/bin/sh', '-c', 'echo attack > ' + target + '; echo ran'], cwd: root, graceMs: 1000,
    stdio: { stdin: 'ignore', stdout: { maxBytes: 4096 }, stderr: { maxBytes: 4096 } } }
  try {
    const c = sandbox.confine(spec, { mode, workspaceRoot: root })
    const h = rt.spawn(c.spec)
    const o = await h.done
    await h.waitForExit()
    results[mode] = { backend: c.backend, enforcement: c.enforcement, exitCode: o.exitCode,
      stdout: h.collected.stdout.readFrom(0).text, stderr: h.collected.stderr.readFrom(0).text, attackLanded: existsSync(target) }
  } catch (e) {
    results[mode] = { error: { name: e.name, code: e.code, message: e.message }, attackLanded: existsSync(target) }
  }
}
let background
try {
  const h = rt.spawn({ argv: ['sh', '-c', 'exit 5'], cwd: root, graceMs: 500, supervise: true, stdio: { stdin: 'ignore', stdout: 'inherit', stderr: 'inherit' } })
  background = await h.done
} catch (e) { background = { error: String(e) } }
await rt.dispose()
await sandbox.dispose()
const pick = (c) => c && { usable: c.usable, reason: c.reason, enforcement: c.enforcement }
process.stdout.write(JSON.stringify({ spawnPath: sandbox.capabilities.spawnPath, landlock: pick(caps.landlock), bubblewrap: pick(caps.bubblewrap), results, background }))
`

function host(packageRoot: string, env: NodeJS.ProcessEnv = {}): HostReport {
  const root = scratchDir('cordon-chain-root')
  const outside = scratchDir('cordon-chain-out')
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', HOST], {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      CORDON_SPAWN: undefined,
      ...env,
      CORDON_INDEX: join(packageRoot, 'dist', 'index.js'),
      CORDON_DIRS: JSON.stringify([root, outside]),
    },
  })
  if (r.status !== 0) throw new Error(`host failed (${r.status}): ${r.stderr}`)
  return JSON.parse(r.stdout) as HostReport
}

/** A copy of the package as an install without any native build has it: no build/, no prebuilds/. */
function packageWithoutBuild(): string {
  const copy = scratchDir('cordon-nobuild')
  for (const part of ['package.json', 'bin', 'dist', 'profiles'])
    cpSync(join(repo, part), join(copy, part), { recursive: true })
  symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'))
  mkdirSync(join(copy, 'build')) // an empty build dir: a failed build leaves one
  return copy
}

describe('the chain on a host where the addon does not load', async () => {
  const bubblewrap = await requireBackend('bubblewrap')

  it.skipIf(!bubblewrap)(
    'with cordon-exec (CORDON_ADDON=off): bubblewrap, layered inside; the attack is refused',
    () => {
      const r = host(repo, { CORDON_ADDON: 'off' })
      expect(r.spawnPath.path).toBe('portable')
      expect(r.spawnPath.reason).toMatch(/CORDON_ADDON=off/)
      expect(r.spawnPath.helper).toMatch(/cordon-exec$/)
      expect(r.landlock.usable).toBe(false)
      expect(r.landlock.reason).toMatch(/portable spawn path/)
      expect(r.bubblewrap.usable).toBe(true)
      for (const mode of ['read-only', 'workspace-write'] as const) {
        const m = r.results[mode]
        expect(m.backend).toBe('bubblewrap')
        // Every class proved by the canary through this very path: cordon-exec layers what the addon would.
        expect(m.enforcement).toBe('full')
        expect(m.stdout).toBe('ran\n') // the command ran…
        expect(m.stderr).toMatch(/Read-only file system/)
        expect(m.attackLanded).toBe(false) // …and its write outside was refused
      }
      expect(r.results['danger-full-access']).toMatchObject({ backend: 'none', attackLanded: true }) // control
      expect(r.background).toEqual({ exitCode: 5, signal: null })
    },
  )

  it('with no native build at all: every confined mode fails closed and runs nothing', () => {
    const copy = packageWithoutBuild()
    expect(existsSync(join(copy, 'build', 'Release', 'cordon-exec'))).toBe(false)
    const r = host(copy)
    expect(r.spawnPath.path).toBe('portable')
    expect(r.spawnPath.helper).toBeUndefined()
    expect(r.landlock.usable).toBe(false)
    expect(r.bubblewrap.usable).toBe(false)
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const m = r.results[mode]
      expect(m.error).toMatchObject({ name: 'SandboxUnavailableError', code: 'SANDBOX_UNAVAILABLE' })
      expect(m.error?.message).toMatch(/refusing to run the command unconfined/)
      expect(m.backend).toBeUndefined()
      expect(m.attackLanded).toBe(false)
    }
    expect(r.results['danger-full-access']).toMatchObject({ backend: 'none', exitCode: 0, attackLanded: true }) // control
    // A background job still runs: without a helper it is its process group (subprocess/portable/spawner.ts).
    expect(r.background).toEqual({ exitCode: 5, signal: null })
  })
})
