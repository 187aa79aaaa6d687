// The CLI on the portable path and for Seatbelt, as a person runs it (bin/cordon.js over dist/):
// `probe` names the spawn path and why; `explain --backend seatbelt` prints the exact profile on
// any platform, unverified; `run --backend seatbelt` off macOS refuses and runs nothing.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../../src/policy/grants.js'
import { seatbeltHiddenSet } from '../../../src/sandbox/local-sandbox.js'
import { renderSeatbeltProfile } from '../../../src/sandbox/seatbelt/profile.js'
import { darwinCanonicalPath } from '../../../src/sandbox/seatbelt/literal.js'
import { scratchDir } from '../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-portable-cli')

function cordon(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, CORDON_SPAWN: undefined, CORDON_ADDON: undefined, ...env },
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('cordon probe: the spawn path', () => {
  it('names the native path and the addon file here', () => {
    const r = cordon(['probe'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^spawn path: native \(the native addon loaded from .*cordon(\.glibc)?\.node\)$/m)
    expect(r.stdout).toMatch(/^seatbelt: .*unverified until its canary has run on a Mac/m)
  })

  it('names the portable path and why when the addon cannot load, and Landlock as unusable through it', () => {
    const r = cordon(['probe'], { CORDON_ADDON: 'off' })
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(
      /^spawn path: portable, node:child_process \(the native addon is disabled \(CORDON_ADDON=off\)\)$/m,
    )
    expect(r.stdout).toMatch(/^ {2}supervised runs: cordon-exec init \(/m)
    expect(r.stdout).toMatch(/^landlock: NOT usable/m)
    const json = JSON.parse(cordon(['probe', '--json'], { CORDON_SPAWN: 'portable' }).stdout) as {
      spawnPath: { path: string; reason: string }
      backends: { landlock: { usable: boolean; reason: string } }
    }
    expect(json.spawnPath).toMatchObject({ path: 'portable', reason: 'forced (CORDON_SPAWN=portable)' })
    expect(json.backends.landlock).toMatchObject({ usable: false })
  })

  it('refuses a CORDON_SPAWN it does not know', () => {
    const r = cordon(['probe'], { CORDON_SPAWN: 'fast' })
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(/CORDON_SPAWN: must be native, portable or auto/)
  })
})

describe('cordon explain --backend seatbelt (any platform)', () => {
  const example = join(tmpdir(), 'cordon-tmp-example')

  it.each([
    ['read-only', 'inherit'],
    ['read-only', 'deny'],
    ['workspace-write', 'inherit'],
    ['workspace-write', 'deny'],
  ] as const)('%s, network %s: the exact profile a Mac would apply, unverified', (mode, network) => {
    const text = cordon(['explain', '--backend', 'seatbelt', '--mode', mode, '--network', network])
    expect(text.status).toBe(0)
    expect(text.stdout).toMatch(/^backend: seatbelt \(partial\), unverified \(its canary has not run on a Mac\)$/m)
    expect(text.stdout).toMatch(/^seatbelt launch: \/usr\/bin\/sandbox-exec -p <profile> -- bash -c <command>$/m)
    expect(text.stdout).toMatch(/^ {2}NOT governed: lifetime: macOS has no subreaper/m)
    const json = JSON.parse(
      cordon(['explain', '--json', '--backend', 'seatbelt', '--mode', mode, '--network', network]).stdout,
    ) as { backend: string; verified: boolean; seatbelt: { profile: string } }
    expect(json).toMatchObject({ backend: 'seatbelt', verified: false })
    const policy = { mode, workspaceRoot: root, network }
    // The run's own profile: the default hidden set and cordon's dir are denied by path too.
    const hiddenPaths = seatbeltHiddenSet(policy, process.env)
    expect(hiddenPaths).toContain(join(homedir(), '.aws'))
    const expected = renderSeatbeltProfile(grantsFor(policy, { tempDir: example }), {
      tempDir: example,
      hiddenPaths,
    }).profile
    expect(json.seatbelt.profile).toBe(expected)
    expect(expected).toContain(`(require-not (subpath "${darwinCanonicalPath(join(homedir(), '.aws'))}"))`)
    expect(text.stdout).toContain(expected.trimEnd())
    expect(expected.includes(`(subpath "${darwinCanonicalPath(root)}")`)).toBe(mode === 'workspace-write')
  })

  it('danger-full-access has nothing to explain for Seatbelt', () => {
    expect(cordon(['explain', '--backend', 'seatbelt', '--mode', 'danger-full-access']).stdout).toMatch(
      /^backend: none$/m,
    )
  })
})

describe('cordon run --backend seatbelt off macOS', () => {
  it.skipIf(process.platform === 'darwin')('refuses with SANDBOX_UNAVAILABLE (125) and runs nothing', () => {
    const marker = join(root, 'ran')
    const r = cordon(['run', '--backend', 'seatbelt', '--', 'sh', '-c', `echo ran > ${marker}`])
    expect(r.status).toBe(125)
    expect(r.stderr).toMatch(/Seatbelt is macOS-only/)
    expect(existsSync(marker)).toBe(false)
  })
})
