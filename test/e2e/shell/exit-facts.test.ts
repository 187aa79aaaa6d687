// Exit facts of a confined run are the unconfined run's: a command killed by a signal is that
// signal (bash execs the last command of `bash -c` unconfined; the confined shell must too, or the
// signal reaches the host as the shell's 128+N), a code that looks like one stays a code, and
// cordon's own kill keeps its own flags. Real processes, the real kernel and real bwrap; each
// confined row is held to the same command run unconfined through the same executor.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { renderResult } from '../../../src/shell/exit-status.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-exit-facts')
mkdirSync(join(root, 'sub'), { recursive: true })
const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')

/** Each command and what bash -c gives for it unconfined (the rows' control, checked too). */
const ROWS: ReadonlyArray<{ command: string; exitCode: number | null; signal: NodeJS.Signals | null }> = [
  { command: `sh -c 'kill -USR1 $$'`, exitCode: null, signal: 'SIGUSR1' },
  { command: `cd sub && sh -c 'kill -TERM $$'`, exitCode: null, signal: 'SIGTERM' },
  { command: `echo ran; cd sub; sh -c 'kill -KILL $$'`, exitCode: null, signal: 'SIGKILL' },
  { command: `false || sh -c 'kill -SEGV $$'`, exitCode: null, signal: 'SIGSEGV' },
  { command: 'kill -USR1 $$', exitCode: null, signal: 'SIGUSR1' },
  { command: 'kill -KILL $$', exitCode: null, signal: 'SIGKILL' },
  { command: 'kill -TERM $$', exitCode: null, signal: 'SIGTERM' },
  // Codes that look like signals stay codes: an exit on purpose, a child killed and waited for,
  // and a last command bash does not exec (a group), unconfined as confined.
  { command: 'exit 138', exitCode: 138, signal: null },
  { command: `cd sub && sh -c 'exit 138'`, exitCode: 138, signal: null },
  { command: 'sleep 9 & kill -9 $!; wait $!', exitCode: 137, signal: null },
  { command: `{ sh -c 'kill -USR1 $$'; }`, exitCode: 138, signal: null },
  { command: `sh -c 'kill -USR1 $$'; true`, exitCode: 0, signal: null },
]

const VARIANTS: ReadonlyArray<{ name: string; backend: SandboxBackendName; resident?: boolean }> = [
  { name: 'landlock', backend: 'landlock' },
  { name: 'bubblewrap (resident instance)', backend: 'bubblewrap', resident: true },
  { name: 'bubblewrap (a bwrap per run)', backend: 'bubblewrap', resident: false },
]

const control = new LocalShellExecutor({ cwd: root, graceMs: 500 })
const sandboxes: LocalSandbox[] = []
afterAll(async () => {
  await control.dispose()
  await Promise.all(sandboxes.map((s) => s.dispose()))
})

/** An executor confined to `mode` by the variant's backend. */
async function confinedExecutor(
  variant: (typeof VARIANTS)[number],
  mode: 'read-only' | 'workspace-write',
): Promise<LocalShellExecutor> {
  const sandbox = await LocalSandbox.create({ backends: [variant.backend], residentInstances: variant.resident })
  sandboxes.push(sandbox)
  return new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, defaultMode: mode, graceMs: 500 })
}

describe('exit facts: confined as unconfined', () => {
  it('the unconfined control gives each row its expected facts', async () => {
    for (const row of ROWS) {
      const r = await control.run(control.resolve({ command: row.command }))
      expect({ command: row.command, exitCode: r.exitCode, signal: r.signal }).toEqual(row)
    }
  })

  for (const variant of VARIANTS) {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      it(`${variant.name}, ${mode}: every row as unconfined; the text names the signal`, async (ctx) => {
        await needBackend(ctx, variant.backend)
        const ex = await confinedExecutor(variant, mode)
        for (const row of ROWS) {
          const r = await ex.run(ex.resolve({ command: row.command }))
          expect(r.sandbox?.backend).toBe(variant.backend)
          expect({ command: row.command, exitCode: r.exitCode, signal: r.signal }).toEqual(row)
          expect(r).toMatchObject({ timedOut: false, aborted: false })
          expect(r.sandbox?.denied).toBe(false)
          const text = renderResult(r)
          if (row.signal) expect(text.endsWith(`[killed by signal: ${row.signal}]`)).toBe(true)
          else if (row.exitCode) expect(text.endsWith(`[exit code: ${row.exitCode}]`)).toBe(true)
        }
        await ex.dispose()
      })
    }

    it(`${variant.name}: a background job killed by a signal settles killed with it; a code stays a code`, async (ctx) => {
      await needBackend(ctx, variant.backend)
      const ex = await confinedExecutor(variant, 'workspace-write')
      const killed = ex.start(ex.resolve({ command: `cd sub && sh -c 'kill -USR1 $$'` }))
      const coded = ex.start(ex.resolve({ command: `sh -c 'exit 138'` }))
      await Promise.all([killed.done, coded.done])
      expect({ status: killed.status, exitCode: killed.exitCode, signal: killed.signal }).toEqual({
        status: 'killed',
        exitCode: null,
        signal: 'SIGUSR1',
      })
      expect({ status: coded.status, exitCode: coded.exitCode, signal: coded.signal }).toEqual({
        status: 'completed',
        exitCode: 138,
        signal: null,
      })
      await ex.dispose()
    })

    it(`${variant.name}: cordon's own kill keeps its flags (abort, timeout); a pre-aborted run spawns nothing`, async (ctx) => {
      await needBackend(ctx, variant.backend)
      const ex = await confinedExecutor(variant, 'workspace-write')
      // Aborted once the command has started (a bwrap per run takes a while to start it).
      const ac = new AbortController()
      const started = { onOutput: () => ac.abort() }
      const aborted = await ex.run(ex.resolve({ command: 'echo up; sleep 30', signal: ac.signal }), started)
      expect(aborted).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGTERM', exitCode: null })
      const timedOut = await ex.run(ex.resolve({ command: 'sleep 30', timeoutMs: 1500 }))
      expect(timedOut).toMatchObject({ aborted: false, timedOut: true, signal: 'SIGTERM', exitCode: null })
      const marker = join(root, `pre-aborted-${variant.backend}-${variant.resident}`)
      const pre = await ex.run(ex.resolve({ command: `touch ${marker}`, signal: ac.signal }))
      expect(pre).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: null })
      expect(pre.stdout.text + pre.stderr.text).toBe('')
      expect(pre.sandbox).toBeUndefined()
      expect(existsSync(marker)).toBe(false)
      // The control: the same command, not aborted, does run.
      await ex.run(ex.resolve({ command: `touch ${marker}` }))
      expect(existsSync(marker)).toBe(true)
      await ex.dispose()
    })
  }
})

describe('exit facts through `cordon run --json`', () => {
  for (const backend of ['landlock', 'bubblewrap'] as const) {
    it(`${backend}: the JSON says the signal and the CLI exits 128+N; a code of 138 stays a code`, async (ctx) => {
      await needBackend(ctx, backend)
      const run = (script: string) => {
        const argv = [
          bin,
          'run',
          '--json',
          '--backend',
          backend,
          '--mode',
          'workspace-write',
          '--',
          'bash',
          '-c',
          script,
        ]
        const r = spawnSync(process.execPath, argv, { cwd: root, encoding: 'utf8', timeout: 60_000 })
        const json = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { exitCode: unknown; signal: unknown }
        return { status: r.status, exitCode: json.exitCode, signal: json.signal }
      }
      expect(run(`sh -c 'kill -USR1 $$'`)).toEqual({ status: 138, exitCode: null, signal: 'SIGUSR1' })
      expect(run(`cd sub && sh -c 'kill -KILL $$'`)).toEqual({ status: 137, exitCode: null, signal: 'SIGKILL' })
      expect(run(`sh -c 'exit 138'`)).toEqual({ status: 138, exitCode: 138, signal: null })
      expect(run('sleep 9 & kill -9 $!; wait $!')).toEqual({ status: 137, exitCode: 137, signal: null })
    })
  }
})
