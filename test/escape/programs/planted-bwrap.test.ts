// A planted `bwrap` never runs as the host: not found through PATH (a harness started by npm has
// <project>/node_modules/.bin there, writable under workspace-write), not when configured in a
// directory others may write or owned by another user, and not when swapped in after the probe.
// Each attack's control runs the very plant the way it would have been run without the check
// (by PATH lookup, or by its path) and sees its marker written.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isSandboxUnavailableError } from '../../../src/policy/errors.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { clearProbeCache } from '../../../src/sandbox/probe.js'
import { probeCacheKey, readProbeCache, writeProbeCache } from '../../../src/sandbox/probe/disk-cache.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const cli = path.join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
let marker: string

/** An executable `bwrap` in a fresh dir (mode `dirMode`) that writes `marker` when it runs. */
function plant(dirMode = 0o755, owner?: number): string {
  const dir = scratchDir('cordon-planted-bwrap')
  const file = path.join(dir, 'bwrap')
  fs.writeFileSync(file, `#!/bin/sh\necho "$0 $*" >> ${marker}\necho 'bubblewrap 0.11.0'\n`)
  fs.chmodSync(file, 0o755)
  if (owner !== undefined) fs.chownSync(file, owner, owner)
  fs.chmodSync(dir, dirMode)
  return file
}

/** `cordon probe` (the built CLI) with `env` over the host's. */
function cordonProbe(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [cli, 'probe', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  })
}

beforeEach(() => {
  marker = path.join(scratchDir('cordon-planted-marker'), 'ran')
  clearProbeCache()
})
afterEach(() => clearProbeCache())

describe('a bwrap planted first on PATH', () => {
  it('is never run by the probe (cordon probe through the CLI), while a PATH lookup runs it', () => {
    const bwrap = plant()
    const PATH = `${path.dirname(bwrap)}:${process.env.PATH}`
    const probe = cordonProbe(['--json'], { PATH, CORDON_BWRAP: '' })
    expect(probe.status, probe.stderr).toBe(0)
    const caps = JSON.parse(probe.stdout) as { backends: { bubblewrap?: { executable?: string } } }
    expect(caps.backends.bubblewrap?.executable).not.toBe(bwrap)
    expect(fs.existsSync(marker)).toBe(false)
    // Control: the plant is found and run by the lookup the probe used to make.
    spawnSync('bwrap', ['--version'], { env: { PATH } })
    expect(fs.readFileSync(marker, 'utf8')).toContain('--version')
  })
})

describe('a configured bwrap that fails the check', () => {
  it('in a directory others may write: refused, reported by cordon probe, never run; run by path it runs', () => {
    const bwrap = plant(0o777)
    const probe = cordonProbe([], { CORDON_BWRAP: bwrap })
    expect(probe.status, probe.stderr).toBe(0)
    expect(probe.stdout).toMatch(/bubblewrap: NOT usable/)
    expect(probe.stdout).toContain(`refused program: ${bwrap} (${path.dirname(bwrap)} is writable by others)`)
    expect(probe.stdout).toMatch(/why: the configured bwrap \S+ is refused/)
    expect(fs.existsSync(marker)).toBe(false)
    spawnSync(bwrap, ['--version'])
    expect(fs.existsSync(marker)).toBe(true)
  })

  it('owned by another user: refused by LocalSandbox.create (no fallback to another bwrap); run by path it runs', async () => {
    const bwrap = plant(0o755, 65534)
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], programs: { bwrap } })
    try {
      const cap = sandbox.capabilities.backends.bubblewrap!
      expect(cap.usable).toBe(false)
      expect(cap.executable).toBeUndefined()
      expect(cap.refusedPrograms).toEqual([{ path: bwrap, reason: expect.stringMatching(/owned by uid 65534/) }])
    } finally {
      await sandbox.dispose()
    }
    expect(fs.existsSync(marker)).toBe(false)
    spawnSync(bwrap, ['--version'])
    expect(fs.existsSync(marker)).toBe(true)
  })
})

describe('a bwrap swapped after the probe', () => {
  it('is refused before any spawn, piped or terminal (SANDBOX_UNAVAILABLE); the swapped-in file runs when run by path', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const dir = scratchDir('cordon-swapped-bwrap')
    fs.chmodSync(dir, 0o755)
    const bwrap = path.join(dir, 'bwrap')
    fs.copyFileSync('/usr/bin/bwrap', bwrap)
    fs.chmodSync(bwrap, 0o755)
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'], programs: { bwrap } })
    try {
      const cap = sandbox.capabilities.backends.bubblewrap!
      if (!cap.usable) ctx.skip(`a copy of /usr/bin/bwrap is not usable here: ${cap.reason}`)
      expect(cap.executable).toBe(bwrap)
      const root = scratchDir('cordon-swapped-root')
      const stdio = { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' } as const
      const spec = { argv: ['/bin/true'], cwd: root, graceMs: 1000, stdio }
      const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
      expect(sandbox.confine(spec, policy).backend).toBe('bubblewrap') // the control: unchanged, it confines
      const terminal = { argv: ['/bin/true'], cwd: root, cols: 80, rows: 24, graceMs: 1000 }
      expect(sandbox.confineTerminal(terminal, policy).backend).toBe('bubblewrap')
      const planted = plant()
      fs.renameSync(planted, bwrap) // the same path, another file
      let error: unknown
      try {
        sandbox.confine(spec, policy)
      } catch (e) {
        error = e
      }
      expect(isSandboxUnavailableError(error), String(error)).toBe(true)
      expect((error as Error).message).toMatch(/bwrap was replaced since the probe checked it/)
      expect(() => sandbox.confineTerminal(terminal, policy)).toThrow(/bwrap was replaced since the probe checked it/)
      expect(fs.existsSync(marker)).toBe(false)
      spawnSync(bwrap, ['--version'])
      expect(fs.existsSync(marker)).toBe(true)
    } finally {
      await sandbox.dispose()
    }
  })
})

describe('a probe verdict on disk that names a bwrap', () => {
  it('is ignored once that bwrap fails the check; the same verdict naming a trusted one is read back', () => {
    const bwrap = plant()
    const key = probeCacheKey(['bubblewrap'], bwrap, 'native')
    const caps = (executable: string) => ({
      platform: process.platform,
      chain: ['bubblewrap' as const],
      backends: {
        bubblewrap: { backend: 'bubblewrap' as const, usable: true, executable, limitations: [], probeMs: 1 },
      },
    })
    writeProbeCache(key, caps(bwrap))
    expect(readProbeCache(key)?.backends.bubblewrap?.executable).toBe(bwrap) // the control
    fs.chmodSync(path.dirname(bwrap), 0o777)
    expect(readProbeCache(key)).toBeUndefined()
    expect(fs.existsSync(marker)).toBe(false)
  })
})
