// The probe verdict on disk, forged: a verdict naming a planted runner, or a lowered Landlock ABI,
// is dropped on read and the probe runs again, so the planted program never runs (its marker stays
// absent). Controls: the planted program does run when invoked, and a verdict whose records still
// match is used as it is (revalidation, not luck, drops the forged ones). Real files, real probe.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { SandboxCapabilities } from '../../../../src/policy/backends.js'
import { clearProbeCache, probeBackends } from '../../../../src/sandbox/probe.js'
import { programIdentities } from '../../../../src/sandbox/probe/cached-programs.js'
import { probeCacheKey, readProbeCache, writeProbeCache } from '../../../../src/sandbox/probe/disk-cache.js'
import { helperPath, loadNative } from '../../../../src/subprocess/native.js'
import { processSpawnPath } from '../../../../src/subprocess/portable/spawn-path.js'
import { needBackend } from '../../../support/sandbox/backends.js'
import { scratchDir } from '../../../support/scratch.js'

const base = scratchDir('cordon-disk-cache')
fs.chmodSync(base, 0o755)
const saved = process.env.CORDON_PRIVATE_DIR
process.env.CORDON_PRIVATE_DIR = path.join(base, 'private')
afterAll(() => {
  if (saved === undefined) delete process.env.CORDON_PRIVATE_DIR
  else process.env.CORDON_PRIVATE_DIR = saved
  clearProbeCache()
})

const cacheFile = () => path.join(base, 'private', `probe-${process.getuid?.() ?? 'user'}.json`)
const marker = path.join(base, 'planted-ran')

/** A runner a confined run could have planted: it leaves a marker when it runs. */
function plantRunner(): string {
  const dir = path.join(base, 'bin')
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 })
  const p = path.join(dir, 'bwrap')
  fs.rmSync(p, { force: true })
  fs.writeFileSync(p, `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/bwrap "$@"\n`, { mode: 0o755 })
  return p
}

const forged = (executable: string): SandboxCapabilities => ({
  platform: 'linux',
  chain: ['bubblewrap'],
  backends: { bubblewrap: { backend: 'bubblewrap', usable: true, executable, limitations: [], probeMs: 0 } },
})

function forge(key: string, capabilities: SandboxCapabilities, programs?: unknown): void {
  fs.mkdirSync(path.dirname(cacheFile()), { recursive: true, mode: 0o700 })
  fs.writeFileSync(cacheFile(), JSON.stringify({ key, capabilities, programs }), { mode: 0o600 })
}

describe('a forged probe cache', () => {
  const spawnPath = processSpawnPath()
  const key = probeCacheKey(['bubblewrap'], undefined, spawnPath.path)

  it('naming a planted runner it did not record: dropped, the probe redoes, the runner never runs', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    fs.rmSync(marker, { force: true })
    const planted = plantRunner()
    forge(key, forged(planted))
    expect(readProbeCache(key)).toBeUndefined()
    clearProbeCache()
    const caps = await probeBackends(['bubblewrap'], { spawnPath, diskCache: 'use' })
    expect(caps.backends.bubblewrap?.usable).toBe(true)
    expect(caps.backends.bubblewrap?.executable).not.toBe(planted)
    expect(fs.existsSync(marker)).toBe(false)
    // The file now holds the verdict just proved, with the identity of what it names.
    const written = JSON.parse(fs.readFileSync(cacheFile(), 'utf8'))
    expect(written.capabilities.backends.bubblewrap.executable).toBe(caps.backends.bubblewrap?.executable)
    expect(written.programs[0].ino).toBe(fs.statSync(caps.backends.bubblewrap?.executable as string).ino)
  })

  it('control: the planted runner runs when invoked, and a record that still matches is used', () => {
    fs.rmSync(marker, { force: true })
    const planted = plantRunner()
    const caps = forged(planted)
    forge(key, caps, programIdentities(caps))
    expect(readProbeCache(key)?.backends.bubblewrap?.executable).toBe(planted)
    // Replaced after it was recorded (a new inode): dropped.
    plantRunner()
    expect(readProbeCache(key)).toBeUndefined()
    fs.rmSync(path.join(base, 'bin', 'bwrap'))
    fs.writeFileSync(path.join(base, 'bin', 'bwrap'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 })
    const { status } = spawnSync(path.join(base, 'bin', 'bwrap'))
    expect(status).toBe(0)
    expect(fs.existsSync(marker)).toBe(true)
  })

  it('with a lowered Landlock ABI: dropped; with the kernel’s: kept', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const abi = loadNative().landlockAbi()
    const helper = helperPath() as string
    const landlockKey = probeCacheKey(['landlock'], undefined, spawnPath.path)
    const at = (n: number): SandboxCapabilities => ({
      platform: 'linux',
      chain: ['landlock'],
      backends: { landlock: { backend: 'landlock', usable: true, abi: n, limitations: [], probeMs: 0 } },
      spawnPath: { path: 'native', reason: 'test', helper },
    })
    writeProbeCache(landlockKey, at(abi))
    expect(readProbeCache(landlockKey)?.backends.landlock?.abi).toBe(abi)
    forge(landlockKey, at(1), programIdentities(at(1)))
    expect(readProbeCache(landlockKey)).toBeUndefined()
  })

  it('a cache file open to its group is ignored, whatever it says', () => {
    const caps = forged('/usr/bin/env')
    writeProbeCache(key, caps)
    expect(readProbeCache(key)).toBeDefined()
    fs.chmodSync(cacheFile(), 0o660)
    expect(readProbeCache(key)).toBeUndefined()
  })
})
