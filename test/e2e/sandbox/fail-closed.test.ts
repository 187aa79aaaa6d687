// Fail closed, for real: a harness process whose seccomp filter breaks the Landlock syscalls
// (ENOSYS) probes, finds no usable backend, and refuses every confined request with
// SANDBOX_UNAVAILABLE without running anything; runner failures at run time surface the same way;
// a policy demanding `full` refuses a `partial` backend; CI's CORDON_REQUIRE_BACKENDS gate.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isSandboxUnavailableError, isSpawnError, SpawnError } from '../../../src/policy/errors.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { BackendCapability, SandboxCapabilities } from '../../../src/policy/backends.js'
import { isBackendRequired, requiredBackends } from '../../../src/sandbox/require-backends.js'
import { runnerFailureToError } from '../../../src/sandbox/verdict.js'
import { compileSeccompRules, encodeBpf, hostSeccompArch, type SyscallName } from '../../../src/sandbox/seccomp/bpf.js'
import { loadNative } from '../../../src/subprocess/native.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { gateFor, needBackend } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const ENOSYS = 38
/** The kernel's own Landlock ABI (what the harness's probe must report, whatever the kernel). */
const HOST_ABI = loadNative().landlockAbi()
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

function workDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-failclosed-')))
  dirs.push(d)
  return d
}

interface HarnessReport {
  capability: BackendCapability
  required: boolean
  results: Record<
    string,
    { ran: boolean; code?: string; name?: string; message?: string; detail?: unknown; backend?: string }
  >
}

async function runHarness(
  broken: readonly SyscallName[],
  env: NodeJS.ProcessEnv = {},
  chain = 'landlock',
): Promise<{ report: HarnessReport; dir: string }> {
  const arch = hostSeccompArch()
  if (!arch) throw new Error('no seccomp table for this arch')
  const dir = workDir()
  const filter = encodeBpf(
    compileSeccompRules({ arch, rules: broken.map((name) => ({ name, refuse: true as const })), errno: ENOSYS }),
  )
  const host = loadNative().hostCapabilities()
  const spec: SubprocessSpawnSpec = {
    ...specFor(
      [
        process.execPath,
        '--import',
        path.join(repo, 'test/fixtures/ts-hooks.mjs'),
        path.join(repo, 'test/fixtures/fail-closed-harness.ts'),
        dir,
        chain,
      ],
      repo,
      { CORDON_REQUIRE_BACKENDS: undefined, ...env },
    ),
    // Only the seccomp step: the harness itself is an ordinary (root) host whose kernel "lacks" Landlock.
    confinement: {
      backend: 'landlock',
      mode: 'read-only',
      steps: { dropCaps: false, dropBounding: false, capLast: host.capLast, noNewPrivs: true, filter },
    },
  }
  const run = await runSpec(spec, 60_000)
  expect(run.exitCode, run.stderr).toBe(0)
  return { report: JSON.parse(run.stdout) as HarnessReport, dir }
}

describe('fail closed: a host whose Landlock syscalls fail with ENOSYS', () => {
  it('probes the backend unusable (never throws) and refuses every confined request with nothing run', async () => {
    const { report, dir } = await runHarness(['landlock_create_ruleset', 'landlock_add_rule', 'landlock_restrict_self'])
    expect(report.capability.usable).toBe(false)
    expect(report.capability.reason).toContain('ENOSYS')
    expect(report.capability.remedy).toMatch(/kernel/i)
    for (const mode of ['read-only', 'workspace-write']) {
      expect(report.results[mode]).toMatchObject({
        ran: false,
        name: 'SandboxUnavailableError',
        code: 'SANDBOX_UNAVAILABLE',
      })
      expect(report.results[mode]?.message).toContain(`"${mode}"`)
      expect(fs.existsSync(path.join(dir, `ran-${mode}`))).toBe(false)
    }
    // danger-full-access never asks a backend: it runs.
    expect(report.results['danger-full-access']).toMatchObject({ ran: true, exitCode: 0, backend: 'none' })
    expect(fs.existsSync(path.join(dir, 'ran-danger-full-access'))).toBe(true)
  })

  it('a kernel that builds rulesets but cannot restrict: the canary fails at the landlock stage', async () => {
    const { report, dir } = await runHarness(['landlock_restrict_self'])
    expect(report.capability).toMatchObject({
      usable: false,
      abi: HOST_ABI,
      failure: { stage: 'landlock', errno: ENOSYS, code: 'ENOSYS' },
    })
    expect(report.results['read-only']).toMatchObject({ ran: false, code: 'SANDBOX_UNAVAILABLE' })
    expect(fs.existsSync(path.join(dir, 'ran-read-only'))).toBe(false)
  })

  it('with bubblewrap in the chain, the same host falls back to it for both modes', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const { report, dir } = await runHarness(
      ['landlock_create_ruleset', 'landlock_add_rule', 'landlock_restrict_self'],
      {},
      'landlock,bubblewrap',
    )
    expect(report.capability.usable).toBe(false)
    expect(report.results['read-only']).toMatchObject({ ran: true, backend: 'bubblewrap' })
    expect(report.results['workspace-write']).toMatchObject({ ran: true, exitCode: 0, backend: 'bubblewrap' })
    expect(fs.existsSync(path.join(dir, 'ran-read-only'))).toBe(false)
    expect(fs.existsSync(path.join(dir, 'ran-workspace-write'))).toBe(true)
  })

  it('without namespaces (unshare fails), a network allow-list is refused while deny still runs', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { report, dir } = await runHarness(['unshare'])
    expect(report.capability.usable).toBe(true)
    expect(report.results['allow-list']).toMatchObject({ ran: false, code: 'SANDBOX_UNAVAILABLE' })
    expect(report.results['allow-list']?.message).toMatch(/network namespace/)
    expect(fs.existsSync(path.join(dir, 'ran-allow-list'))).toBe(false)
    // The control: the same host runs a denied network (partial: no namespace for it either).
    expect(report.results.deny).toMatchObject({ ran: true, exitCode: 0, backend: 'landlock' })
    expect(fs.existsSync(path.join(dir, 'ran-deny'))).toBe(true)
  })

  it('the harness sees CORDON_REQUIRE_BACKENDS', async () => {
    const { report } = await runHarness(['landlock_create_ruleset'], { CORDON_REQUIRE_BACKENDS: 'landlock' })
    expect(report.required).toBe(true)
    expect(report.capability.usable).toBe(false)
  })
})

describe('fail closed: runner failures during a run', () => {
  it('a landlock-stage failure is SANDBOX_UNAVAILABLE with the stage and errno; nothing ran', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create()
    const dir = workDir()
    const notARuleset = fs.openSync('/dev/null', 'r')
    try {
      const confined = sandbox.confine(
        specFor(['/bin/sh', '-c', 'echo ran > "$1"', 'sh', path.join(dir, 'ran')], dir),
        {
          mode: 'read-only',
          workspaceRoot: dir,
        },
      )
      const steps = { ...confined.spec.confinement!.steps!, ruleset: { fd: notARuleset, closed: false } }
      const error = await runSpec({ ...confined.spec, confinement: { ...confined.spec.confinement!, steps } }).catch(
        (e: unknown) => e,
      )
      expect(isSpawnError(error)).toBe(true)
      const surfaced = runnerFailureToError(error, 'read-only')
      expect(isSandboxUnavailableError(surfaced)).toBe(true)
      expect(surfaced).toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        mode: 'read-only',
        detail: { stage: 'landlock', errno: 77 },
      })
      expect(String((surfaced as Error).message)).toMatch(/Runner failure: landlock: /)
      expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
    } finally {
      fs.closeSync(notARuleset)
      await sandbox.dispose()
    }
  })

  it('a seccomp-stage failure is SANDBOX_UNAVAILABLE too', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create()
    const dir = workDir()
    try {
      const confined = sandbox.confine(specFor(['/bin/true'], dir), { mode: 'read-only', workspaceRoot: dir })
      const bogus = encodeBpf([{ code: 0xff, jt: 0, jf: 0, k: 0 }]) // not a valid opcode: EINVAL
      const steps = { ...confined.spec.confinement!.steps!, filter: bogus }
      const error = await runSpec({ ...confined.spec, confinement: { ...confined.spec.confinement!, steps } }).catch(
        (e: unknown) => e,
      )
      expect(runnerFailureToError(error, 'read-only')).toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        detail: { stage: 'seccomp', errno: 22 },
      })
    } finally {
      await sandbox.dispose()
    }
  })

  it('chdir and exec failures stay ordinary SpawnErrors', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create()
    const dir = workDir()
    try {
      const badCwd = sandbox.confine(specFor(['/bin/true'], path.join(dir, 'missing')), {
        mode: 'read-only',
        workspaceRoot: dir,
      })
      const e1 = await runSpec(badCwd.spec).catch((e: unknown) => e)
      expect(runnerFailureToError(e1, 'read-only')).toBe(e1)
      expect(e1).toMatchObject({ name: 'SpawnError', stage: 'chdir' })
      const badExe = sandbox.confine(specFor(['/nonexistent/cmd'], dir), { mode: 'read-only', workspaceRoot: dir })
      const e2 = await runSpec(badExe.spec).catch((e: unknown) => e)
      expect(runnerFailureToError(e2, 'read-only')).toBe(e2)
      expect(e2).toMatchObject({ name: 'SpawnError', stage: 'exec', code: 'ENOENT' })
      const other = new Error('x')
      expect(runnerFailureToError(other, 'read-only')).toBe(other)
      expect(runnerFailureToError(new SpawnError({ stage: 'caps', errno: 1 }), 'workspace-write')).toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        detail: { stage: 'caps', errno: 1 },
      })
    } finally {
      await sandbox.dispose()
    }
  })
})

describe('fail closed: selection', () => {
  const usable = (enforcement: 'full' | 'partial'): SandboxCapabilities => ({
    platform: 'linux',
    chain: ['landlock'],
    backends: {
      landlock: {
        backend: 'landlock',
        usable: true,
        abi: 7,
        // The account comes from the facts: without seccomp, read-only is partial.
        seccomp: enforcement === 'full',
        supervisor: true,
        namespaces: { ipc: true, net: true, user: false },
        enforcement: {
          'read-only': { inherit: enforcement, deny: enforcement },
          'workspace-write': { inherit: 'partial', deny: 'partial' },
        },
        limitations: [],
        probeMs: 0,
      },
    },
  })
  const unusable: SandboxCapabilities = {
    platform: 'linux',
    chain: ['landlock'],
    backends: {
      landlock: {
        backend: 'landlock',
        usable: false,
        reason: 'the kernel offers no Landlock (ENOSYS)',
        remedy: 'Boot a kernel with Landlock.',
        limitations: [],
        probeMs: 0,
      },
    },
  }

  it('no usable backend: every confined mode throws SANDBOX_UNAVAILABLE naming why and the remedy', async () => {
    const sandbox = await LocalSandbox.create({ capabilities: unusable })
    const dir = workDir()
    for (const mode of ['read-only', 'workspace-write'] as const) {
      try {
        sandbox.confine(specFor(['/bin/true'], dir), { mode, workspaceRoot: dir })
        expect.unreachable()
      } catch (error) {
        expect(isSandboxUnavailableError(error)).toBe(true)
        expect(String(error)).toContain('ENOSYS')
        expect(String(error)).toContain('Boot a kernel with Landlock.')
      }
    }
    expect(
      sandbox.confine(specFor(['/bin/true'], dir), { mode: 'danger-full-access', workspaceRoot: dir }),
    ).toMatchObject({ backend: 'none' })
    await sandbox.dispose()
  })

  it('an empty chain is unavailable', async () => {
    const sandbox = await LocalSandbox.create({ capabilities: { platform: 'linux', chain: [], backends: {} } })
    expect(() => sandbox.confine(specFor(['/bin/true'], '/'), { mode: 'read-only', workspaceRoot: '/' })).toThrow(
      /no sandbox backend/,
    )
  })

  it('requireEnforcement full: a partial backend fails closed, a full one runs', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const real = await LocalSandbox.create({ backends: ['landlock'] })
    const dir = workDir()
    try {
      expect(() =>
        real.confine(specFor(['/bin/true'], dir), {
          mode: 'workspace-write',
          workspaceRoot: dir,
          requireEnforcement: 'full',
        }),
      ).toThrow(/requires full enforcement/)
      expect(
        real.confine(specFor(['/bin/true'], dir), { mode: 'workspace-write', workspaceRoot: dir }).enforcement,
      ).toBe('partial')
      expect(
        real.confine(specFor(['/bin/true'], dir), { mode: 'read-only', workspaceRoot: dir, requireEnforcement: 'full' })
          .enforcement,
      ).toBe('full')
    } finally {
      await real.dispose()
    }
    const partialRo = await LocalSandbox.create({ capabilities: usable('partial') })
    expect(() =>
      partialRo.confine(specFor(['/bin/true'], dir), {
        mode: 'read-only',
        workspaceRoot: dir,
        requireEnforcement: 'full',
      }),
    ).toThrow(/SANDBOX|full/)
  })

  it('requireEnforcement full: with bubblewrap in the chain, the same demand is met by it', async (ctx) => {
    await needBackend(ctx, 'landlock')
    await needBackend(ctx, 'bubblewrap')
    const dir = workDir()
    const chain = await LocalSandbox.create()
    try {
      expect(
        chain.confine(specFor(['/bin/true'], dir), {
          mode: 'workspace-write',
          workspaceRoot: dir,
          requireEnforcement: 'full',
        }),
      ).toMatchObject({ backend: 'bubblewrap', enforcement: 'full' })
    } finally {
      await chain.dispose()
    }
  })
})

describe('CORDON_REQUIRE_BACKENDS', () => {
  it('parses a comma list', () => {
    expect(requiredBackends({ CORDON_REQUIRE_BACKENDS: ' landlock, Bubblewrap ,,' })).toEqual([
      'landlock',
      'bubblewrap',
    ])
    expect(requiredBackends({})).toEqual([])
    expect(isBackendRequired('landlock', { CORDON_REQUIRE_BACKENDS: 'landlock' })).toBe(true)
    expect(isBackendRequired('landlock', { CORDON_REQUIRE_BACKENDS: 'bubblewrap' })).toBe(false)
  })

  it('a required but unusable backend is a failure, never a skip', () => {
    expect(gateFor({ usable: false, required: true })).toBe('fail')
    expect(gateFor({ usable: false, required: false })).toBe('skip')
    expect(gateFor({ usable: true, required: true })).toBe('run')
  })
})
