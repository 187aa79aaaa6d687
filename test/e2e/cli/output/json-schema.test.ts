// `cordon schema run` publishes the JSON Schema of `cordon run --json`'s output; here real runs,
// one per situation a result can describe, are validated against that published schema (with ajv,
// test/support/json-schema.ts). Each run also shows it is the situation named (a field only it
// sets), so a schema that let everything through, or a run that went otherwise, fails.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { type RunOutputResult, runOutputJsonSchema } from '../../../../src/cli/schema/run-output.js'
import { needBackend, requireBackend } from '../../../support/sandbox/backends.js'
import { validatorOf } from '../../../support/json-schema.js'
import { eventually } from '../../../support/subprocess/processes.js'
import { scratchDir } from '../../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-json-schema')
const outside = scratchDir('cordon-json-schema-out')

function cordon(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

let validate: (value: unknown) => string[]

/** `cordon run --json ARGS`: its one line, parsed and validated against the published schema. */
function runJson(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = cordon(['run', '--json', ...args], env)
  const lines = r.stdout.split('\n')
  expect(lines, r.stderr).toHaveLength(2)
  const output = JSON.parse(lines[0] as string) as RunOutputResult
  expect(validate(output), r.stdout).toEqual([])
  return { status: r.status, output }
}

beforeAll(() => {
  const published = cordon(['schema', 'run'])
  expect(published.status).toBe(0)
  const schema = JSON.parse(published.stdout) as Record<string, unknown>
  expect(schema).toEqual(runOutputJsonSchema())
  validate = validatorOf(schema)
})

describe('cordon run --json against `cordon schema run`', async () => {
  const usable = await requireBackend('landlock')

  it('a real result passes; with a field renamed or added it fails (the control)', () => {
    const r = runJson(['--mode', 'danger-full-access', '--', 'true'])
    expect(r.output).toMatchObject({ exitCode: 0, sandbox: { mode: 'danger-full-access', denied: false } })
    const { timedOut, ...renamed } = r.output
    expect(validate({ ...renamed, timed_out: timedOut })).not.toEqual([])
    expect(validate({ ...r.output, stdout: { ...r.output.stdout, extra: 1 } })).not.toEqual([])
  })

  it.skipIf(!usable)('a success, a non-zero exit, a signal', () => {
    expect(runJson(['--', 'echo', 'hi'])).toMatchObject({
      status: 0,
      output: { exitCode: 0, stdout: { text: 'hi\n' }, sandbox: { backend: 'landlock', enforcement: 'full' } },
    })
    expect(runJson(['--', 'sh', '-c', 'echo err >&2; exit 3'])).toMatchObject({
      status: 3,
      output: { exitCode: 3, stderr: { text: 'err\n' } },
    })
    expect(runJson(['--', 'sh', '-c', 'kill -USR1 $$'])).toMatchObject({
      status: 128 + 10,
      output: { exitCode: null, signal: 'SIGUSR1' },
    })
  })

  it.skipIf(!usable)('a denial, with the class the backend closes whole; a scrubbed variable on a failure', () => {
    const denied = runJson([
      '--backend',
      'landlock',
      '--',
      'sh',
      '-c',
      `echo x > ${outside}/f; echo x > /dev/shm/cordon-t-x`,
    ])
    expect(denied.output.sandbox).toMatchObject({
      denied: true,
      deniedFor: ['files'],
      deniedPaths: expect.arrayContaining([`${outside}/f`]),
      refusedPaths: expect.arrayContaining([`${outside}/f`]),
      refusalSource: 'messages',
      closedClasses: [expect.objectContaining({ class: 'shared-memory' })],
    })
    const scrubbed = runJson(['--', 'sh', '-c', 'exit 1'], { GITHUB_TOKEN: 'cordon-t-secret' })
    expect(scrubbed.output.sandbox?.removedEnv).toEqual(['GITHUB_TOKEN'])
  })

  it.skipIf(!usable)('a timeout, and output past the in-memory tail with its spill file', () => {
    expect(runJson(['--timeout', '300', '--', 'sleep', '30'])).toMatchObject({
      status: 124,
      output: { timedOut: true, aborted: false, timeoutMs: 300 },
    })
    const spilled = runJson(['-c', "head -c 200000 /dev/zero | tr '\\0' a"])
    expect(spilled.output.stdout).toMatchObject({ truncated: true, spillPath: expect.stringMatching(/^\//) })
    rmSync(spilled.output.stdout.spillPath as string)
  })

  it('an interrupted run (SIGINT to cordon once the command runs): aborted', async () => {
    const started = join(outside, 'started')
    const child = spawn(
      process.execPath,
      [bin, 'run', '--json', '--mode', 'danger-full-access', '-c', `touch ${started}; sleep 30`],
      { cwd: root },
    )
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const closed = new Promise((resolve) => child.once('close', resolve))
    expect(await eventually(() => existsSync(started), 30_000)).toBe(true)
    child.kill('SIGINT')
    await closed
    const output = JSON.parse(stdout) as Record<string, unknown>
    expect(validate(output)).toEqual([])
    expect(output).toMatchObject({ aborted: true, timedOut: false })
  })

  it('a refused host under an allow-list: the proxy facts', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    // bash speaks CONNECT to the proxy itself: no client program, no DNS, no outside network.
    const connect =
      'exec 3<>/dev/tcp/127.0.0.1/3128; printf "CONNECT blocked.example:443 HTTP/1.1\\r\\nHost: blocked.example:443\\r\\n\\r\\n" >&3; head -1 <&3; exit 1'
    const r = runJson(['--backend', 'bubblewrap', '--allow-host', 'allowed.example', '-c', connect])
    expect(r.output.sandbox).toMatchObject({
      denied: true,
      deniedFor: ['network'],
      network: { refused: [{ host: 'blocked.example', port: 443, count: 1, reason: 'not-allowed' }], allowed: [] },
    })
  })

  it('the errors: a usage mistake and a sandbox that cannot be had', () => {
    expect(runJson(['--timeout', '3000000000', '--', 'true'])).toMatchObject({
      status: 125,
      output: { error: { name: 'UsageError', code: 'CORDON_USAGE' } },
    })
    const unavailable = runJson(['--backend', 'bubblewrap', '--', 'true'], { CORDON_BWRAP: '/nonexistent/bwrap' })
    expect(unavailable).toMatchObject({ status: 125, output: { error: { code: 'SANDBOX_UNAVAILABLE' } } })
  })
})
