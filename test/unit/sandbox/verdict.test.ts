// Runner-failure mapping and the run verdict, as pure decisions: a spawn failure at a confinement
// stage is the sandbox's (SANDBOX_UNAVAILABLE, nothing ran, the stage and errno kept), anything
// else stays the caller's error; a finished run's facts come from its plan, its stderr and what
// the runtime took away, and computing them changes nothing on disk.
import os from 'node:os'
import path from 'node:path'
import fs from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { CONFINEMENT_STAGES, SPAWN_STAGES, SpawnError } from '../../../src/policy/errors.js'
import type { ConfinementPlan } from '../../../src/sandbox/confinement/plan.js'
import { isRunnerFailure, runnerFailureToError, runVerdict } from '../../../src/sandbox/verdict.js'
import * as mustNotAppear from '../../../src/subprocess/process/must-not-appear.js'
import { scratchDir } from '../../support/scratch.js'

vi.mock('../../../src/subprocess/process/must-not-appear.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/subprocess/process/must-not-appear.js')>()
  return { ...real, takeAwayAppeared: vi.fn(real.takeAwayAppeared) }
})

const { EPERM, ENOENT, EACCES } = os.constants.errno

describe('isRunnerFailure', () => {
  it('is a SpawnError at a confinement stage, and nothing else', () => {
    for (const stage of SPAWN_STAGES) {
      const confinement = (CONFINEMENT_STAGES as readonly string[]).includes(stage)
      expect(isRunnerFailure(new SpawnError({ stage, errno: EPERM })), stage).toBe(confinement)
    }
    expect(isRunnerFailure(new Error('landlock'))).toBe(false)
    expect(isRunnerFailure({ name: 'SpawnError', code: 'EPERM', stage: 'seccomp', errno: EPERM })).toBe(true)
  })
})

describe('runnerFailureToError', () => {
  it('a confinement stage becomes SANDBOX_UNAVAILABLE under the mode, with the stage and errno', () => {
    const cause = new SpawnError({ stage: 'landlock', errno: EPERM })
    const error = runnerFailureToError(cause, 'read-only')
    expect(error).toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
      mode: 'read-only',
      reason: 'the sandbox runner failed to confine the command at landlock (EPERM)',
      detail: { stage: 'landlock', errno: EPERM },
      cause,
    })
    expect(error.message).toContain('Nothing was run')
    expect(error.message).toContain('danger-full-access')
  })

  it("a launcher failure quotes the wrapper's own words when it said any", () => {
    const said = runnerFailureToError(
      new SpawnError({ stage: 'launcher', errno: 0, detail: 'bwrap: setting up uid map: Permission denied' }),
      'workspace-write',
    )
    expect(said).toMatchObject({
      reason: 'the sandbox runner could not start the command (bwrap: setting up uid map: Permission denied)',
      detail: 'bwrap: setting up uid map: Permission denied',
    })
    const silent = runnerFailureToError(new SpawnError({ stage: 'launcher', errno: ENOENT }), 'workspace-write')
    expect(silent).toMatchObject({
      reason: 'the sandbox runner could not start the command (ENOENT)',
      detail: { stage: 'launcher', errno: ENOENT },
    })
  })

  it('a stage of the command itself (chdir, exec) and any other error come back as they were', () => {
    const chdir = new SpawnError({ stage: 'chdir', errno: ENOENT, path: '/missing' })
    expect(runnerFailureToError(chdir, 'read-only')).toBe(chdir)
    const exec = new SpawnError({ stage: 'exec', errno: EACCES })
    expect(runnerFailureToError(exec, 'read-only')).toBe(exec)
    const other = new TypeError('x')
    expect(runnerFailureToError(other, 'read-only')).toBe(other)
  })
})

describe('runVerdict', () => {
  const base = scratchDir('cordon-verdict')
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  fs.mkdirSync(root)
  fs.mkdirSync(outside)
  const plan = {
    backend: 'landlock',
    policy: { mode: 'read-only', workspaceRoot: root },
    account: { enforcement: 'full', classes: {}, governed: [], ungoverned: [] },
    writable: [path.join(base, 'tmp')],
  } as unknown as ConfinementPlan

  it("carries the plan's mode, backend and enforcement; denied with its paths", () => {
    const verdict = runVerdict(plan, {
      exitCode: 1,
      stderr: `touch: cannot touch '${outside}/x': Permission denied\n`,
      cwd: root,
    })
    expect(verdict).toEqual({
      mode: 'read-only',
      denied: true,
      backend: 'landlock',
      enforcement: 'full',
      deniedPaths: [path.join(outside, 'x')],
      deniedFor: ['files'],
      refusedPaths: [path.join(outside, 'x')],
      refusalSource: 'messages',
    })
  })

  it('a run that exits 0 is not denied, yet says what the sandbox refused and where that came from', () => {
    const lost = `error: could not write config file ${outside}/config: Permission denied\n`
    const verdict = runVerdict(plan, { exitCode: 0, stderr: lost, cwd: root })
    expect(verdict).toMatchObject({ denied: false, refusedPaths: [path.join(outside, 'config')] })
    expect(verdict.refusalSource).toBe('messages')
    expect(verdict.deniedPaths).toBeUndefined()
    expect(verdict.deniedFor).toBeUndefined()
  })

  it('a failed run the proxy refused is denied for the network; a run that passed is not, but keeps the facts', () => {
    const network = {
      refused: [{ host: 'evil.example', port: 443, count: 2, reason: 'not-allowed' as const }],
      allowed: [{ host: 'registry.example', port: 443, connections: 1, bytesSent: 10, bytesReceived: 20 }],
    }
    const failed = runVerdict(plan, {
      exitCode: 6,
      stderr: 'curl: (56) CONNECT tunnel failed, response 403',
      cwd: root,
      network,
    })
    expect(failed).toMatchObject({ denied: true, deniedFor: ['network'], network })
    const passed = runVerdict(plan, { exitCode: 0, stderr: '', cwd: root, network })
    expect(passed.denied).toBe(false)
    expect(passed.deniedFor).toBeUndefined()
    expect(passed.network).toEqual(network)
    // Nothing refused: a failure is the command's own.
    const own = runVerdict(plan, { exitCode: 1, stderr: '', cwd: root, network: { refused: [], allowed: [] } })
    expect(own.denied).toBe(false)
    // Both at once.
    const both = runVerdict(plan, {
      exitCode: 1,
      stderr: `touch: cannot touch '${outside}/x': Permission denied\n`,
      cwd: root,
      network,
    })
    expect(both.deniedFor).toEqual(['files', 'network'])
  })

  it('a clean run is not denied and names no paths; a runner failure says so and is never a denial', () => {
    expect(runVerdict(plan, { exitCode: 0, stderr: '', cwd: root })).toEqual({
      mode: 'read-only',
      denied: false,
      backend: 'landlock',
      enforcement: 'full',
    })
    const failed = runVerdict(plan, {
      exitCode: null,
      stderr: `touch: cannot touch '${outside}/x': Permission denied`,
      cwd: root,
      runnerFailed: true,
    })
    expect(failed).toMatchObject({ denied: false, runnerFailed: true })
    expect(failed.deniedPaths).toBeUndefined()
  })

  it('is pure: the same input gives the same verdict, and a path that must not appear is left where it is', () => {
    const commondir = path.join(root, '.git', 'commondir')
    fs.mkdirSync(path.dirname(commondir), { recursive: true })
    fs.writeFileSync(commondir, '../elsewhere\n')
    const guarded = {
      ...plan,
      backend: 'bubblewrap',
      mounts: { protected: { paths: [], parents: [], stamps: [], mustNotAppear: [commondir] } },
    } as unknown as ConfinementPlan
    const before = fs.readdirSync(path.dirname(commondir))
    const calls = vi.mocked(mustNotAppear.takeAwayAppeared).mock.calls.length
    const run = { exitCode: 0, stderr: '', cwd: root, refused: [path.join(root, '.git', 'config.worktree')] }
    const first = runVerdict(guarded, run)
    const second = runVerdict(guarded, run)
    expect(second).toEqual(first)
    // Only what the runtime reports as taken away is a denial; nothing is moved here.
    expect(first).toMatchObject({ denied: true, deniedPaths: run.refused })
    expect(fs.readdirSync(path.dirname(commondir))).toEqual(before)
    expect(fs.readFileSync(commondir, 'utf8')).toBe('../elsewhere\n')
    expect(vi.mocked(mustNotAppear.takeAwayAppeared).mock.calls.length).toBe(calls)
  })
})

describe('runVerdict: closed classes', () => {
  const plan = (privateDevpts: boolean) =>
    ({
      backend: privateDevpts ? 'bubblewrap' : 'landlock',
      policy: { mode: 'read-only', workspaceRoot: '/w' },
      account: { enforcement: 'full', classes: {}, governed: [], ungoverned: [] },
      writable: [],
      seccomp: { input: { network: 'inherit', privateNet: false, privateDevpts }, program: undefined },
    }) as unknown as ConfinementPlan
  const run = { exitCode: 1, stderr: 'script: failed to create pseudo-terminal: Permission denied\n', cwd: '/w' }

  it('a failed run that met a class the plan closes: the class, no file denial', () => {
    const verdict = runVerdict(plan(false), run)
    expect(verdict.denied).toBe(false)
    expect(verdict.closedClasses?.map((c) => [c.class, c.remedy])).toEqual([['terminals', '--backend bubblewrap']])
  })

  it('the same words under a plan that gives ptys: no closed class (the control)', () => {
    expect(runVerdict(plan(true), run).closedClasses).toBeUndefined()
  })
})
