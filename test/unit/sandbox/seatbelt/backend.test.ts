// Seatbelt in the backend chain, on any platform: the chain each platform offers, and what
// LocalSandbox does on a darwin host (its capabilities injected, as the probe on a Mac would give
// them): the sandbox-exec spec around the command with exactly the rendered profile, `partial`
// with the classes Seatbelt cannot hold named, and SANDBOX_UNAVAILABLE whenever Seatbelt cannot
// run (unusable, `full` demanded, no backend for the platform). Nothing here runs sandbox-exec.
import { afterAll, describe, expect, it } from 'vitest'
import type { BackendCapability, SandboxCapabilities } from '../../../../src/policy/backends.js'
import { isSandboxUnavailableError } from '../../../../src/policy/errors.js'
import { grantsFor } from '../../../../src/policy/grants.js'
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import { renderSeatbeltProfile } from '../../../../src/sandbox/seatbelt/profile.js'
import { darwinCanonicalPath } from '../../../../src/sandbox/seatbelt/literal.js'
import { sandboxExecProblem } from '../../../../src/sandbox/seatbelt/backend.js'
import { SANDBOX_EXEC } from '../../../../src/sandbox/seatbelt/launch.js'
import type { SeatbeltPlan } from '../../../../src/sandbox/seatbelt/plan.js'
import { defaultChain } from '../../../../src/sandbox/select.js'
import type { SubprocessSpawnSpec } from '../../../../src/subprocess/types.js'
import { scratchDir } from '../../../support/scratch.js'

const root = scratchDir('cordon-seatbelt-select')
const spec: SubprocessSpawnSpec = {
  argv: ['sh', '-c', 'make test'],
  cwd: root,
  graceMs: 1000,
  stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  env: { PATH: '/usr/bin:/bin' },
}

function seatbelt(cap: Partial<BackendCapability> = {}): SandboxCapabilities {
  return {
    platform: 'darwin',
    chain: ['seatbelt'],
    backends: { seatbelt: { backend: 'seatbelt', usable: true, verified: false, limitations: [], probeMs: 0, ...cap } },
  }
}

const sandboxes: LocalSandbox[] = []
afterAll(() => Promise.all(sandboxes.map((s) => s.dispose())))
async function sandboxWith(capabilities: SandboxCapabilities): Promise<LocalSandbox> {
  const s = await LocalSandbox.create({ capabilities })
  sandboxes.push(s)
  return s
}

function refusal(fn: () => unknown): { message: string } {
  try {
    fn()
  } catch (error) {
    if (isSandboxUnavailableError(error)) return error
    throw error
  }
  throw new Error('expected SANDBOX_UNAVAILABLE')
}

describe('the chain each platform offers', () => {
  it('linux: landlock then bubblewrap; darwin: seatbelt; elsewhere none', () => {
    expect(defaultChain('linux')).toEqual(['landlock', 'bubblewrap'])
    expect(defaultChain('darwin')).toEqual(['seatbelt'])
    expect(defaultChain('win32')).toEqual([])
  })

  it('a platform without a backend refuses every confined mode, naming the platform', async () => {
    const s = await sandboxWith({ platform: 'win32', chain: [], backends: {} })
    const e = refusal(() => s.confine(spec, { mode: 'read-only', workspaceRoot: root }))
    expect(e.message).toMatch(/no sandbox backend is configured for this platform \(win32\)/)
    expect(s.confine(spec, { mode: 'danger-full-access', workspaceRoot: root }).backend).toBe('none')
  })
})

describe('a darwin host: LocalSandbox confines through sandbox-exec', () => {
  it('wraps the command in sandbox-exec with exactly the rendered profile, partial, TMPDIR private', async () => {
    const s = await sandboxWith(seatbelt())
    const policy = { mode: 'read-only' as const, workspaceRoot: root }
    const c = s.confine(spec, policy)
    expect(c.backend).toBe('seatbelt')
    expect(c.enforcement).toBe('partial')
    const plan = c.plan as SeatbeltPlan
    const tempDir = c.tempDir!
    expect(c.spec.env?.TMPDIR).toBe(tempDir)
    // The plan's grants: the policy's, with the default hidden set and cordon's private dir denied by path.
    expect(plan.grants.hiddenPaths).toEqual(expect.arrayContaining([...grantsFor(policy, { tempDir }).hiddenPaths]))
    expect(plan.grants.hiddenPaths.some((p) => p.endsWith('.netrc'))).toBe(true)
    const expected = renderSeatbeltProfile(plan.grants, { tempDir }).profile
    expect(c.spec.argv).toEqual([SANDBOX_EXEC, '-p', expected, '--', '/usr/bin/sh', '-c', 'make test'])
    expect(c.spec.confinement).toEqual({ backend: 'seatbelt', mode: 'read-only' })
    expect(expected).toContain(`(subpath "${darwinCanonicalPath(tempDir)}")`)
    expect(plan.writable).toContain(darwinCanonicalPath(tempDir))
    expect(plan.verified).toBe(false)
    expect(plan.account.ungoverned).toEqual(expect.arrayContaining(['processes', 'lifetime']))
    expect(plan.account.classes.lifetime?.how).toMatch(/no subreaper/)
    expect(plan.account.governed).toEqual(expect.arrayContaining(['content', 'names', 'metadata', 'ipc', 'terminals']))
  })

  it('workspace-write with network deny: the roots writable, no network rule, network governed', async () => {
    const s = await sandboxWith(seatbelt({ verified: true }))
    const c = s.confine(spec, { mode: 'workspace-write', workspaceRoot: root, network: 'deny' })
    const plan = c.plan as SeatbeltPlan
    const profile = c.spec.argv[2]!
    expect(profile).toContain(`(subpath "${darwinCanonicalPath(root)}")`)
    expect(profile).not.toContain('(allow network*)')
    expect(plan.account.classes.network).toMatchObject({ governed: true })
    expect(plan.verified).toBe(true)
  })

  it('workspace-write: the default protected files are denied by path, present or not; --unprotect drops one', async () => {
    const s = await sandboxWith(seatbelt({ verified: true }))
    const profileOf = (unprotectedPaths?: string[]) =>
      s.confine(spec, {
        mode: 'workspace-write',
        workspaceRoot: root,
        ...(unprotectedPaths ? { unprotectedPaths } : {}),
      }).spec.argv[2]!
    const tasks = darwinCanonicalPath(`${root}/.vscode/tasks.json`)
    expect(profileOf()).toContain(`"${tasks}"`)
    expect(profileOf()).toContain(`"${darwinCanonicalPath(`${root}/.envrc`)}"`)
    expect(profileOf(['.vscode'])).not.toContain(`"${tasks}"`)
  })

  it('a policy that demands full is refused: Seatbelt never holds lifetime', async () => {
    const s = await sandboxWith(seatbelt())
    const e = refusal(() => s.confine(spec, { mode: 'read-only', workspaceRoot: root, requireEnforcement: 'full' }))
    expect(e.message).toMatch(/requires full enforcement/)
    expect(e.message).toMatch(/lifetime/)
  })

  it('an unusable Seatbelt (sandbox-exec missing) fails closed with the probe’s reason and remedy', async () => {
    const s = await sandboxWith(
      seatbelt({
        usable: false,
        reason: '/usr/bin/sandbox-exec is missing or not executable (ENOENT)',
        remedy: 'reinstall',
      }),
    )
    const e = refusal(() => s.confine(spec, { mode: 'workspace-write', workspaceRoot: root }))
    expect(e.message).toMatch(/seatbelt: \/usr\/bin\/sandbox-exec is missing/)
    expect(e.message).toMatch(/reinstall/)
  })

  it('a sandbox-exec that is not the file the probe checked is refused before anything is wrapped', async () => {
    const identity = { realPath: SANDBOX_EXEC, dev: 1, ino: 1, uid: 0, mode: 0o100755, size: 1, mtimeMs: 1, ctimeMs: 1 }
    const s = await sandboxWith(seatbelt({ executable: SANDBOX_EXEC, executableIdentity: identity }))
    const e = refusal(() => s.confine(spec, { mode: 'read-only', workspaceRoot: root }))
    expect(e.message).toMatch(/\/usr\/bin\/sandbox-exec (is refused|was replaced)/)
    // The control: a verdict without a recorded identity plans here (off macOS nothing is run).
    if (process.platform !== 'darwin') expect(sandboxExecProblem(seatbelt().backends.seatbelt)).toBeUndefined()
  })

  it('a command not on PATH is refused before anything is wrapped', async () => {
    const s = await sandboxWith(seatbelt())
    expect(() =>
      s.confine({ ...spec, argv: ['no-such-cordon-tool'] }, { mode: 'read-only', workspaceRoot: root }),
    ).toThrow(/was not found on PATH/)
  })
})

describe('seatbelt off macOS, probed for real', () => {
  it.skipIf(process.platform === 'darwin')('is unusable and unverified: a confined mode fails closed', async () => {
    const s = await LocalSandbox.create({ backends: ['seatbelt'] })
    sandboxes.push(s)
    expect(s.capabilities.backends.seatbelt).toMatchObject({ usable: false, verified: false })
    const e = refusal(() => s.confine(spec, { mode: 'read-only', workspaceRoot: root }))
    expect(e.message).toMatch(/Seatbelt is macOS-only/)
  })
})
