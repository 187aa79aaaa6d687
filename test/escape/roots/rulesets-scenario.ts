/**
 * Ruleset lifetime (issue 10, class 7), run inside a scenario host as root or nobody, per
 * backend: with a cache of ONE ruleset, a read-only spec is confined, then a workspace-write spec
 * over the same root evicts its ruleset; the read-only spec must still run read-only (never under
 * the wider ruleset), the wider one really writes (the control of that), and after the sandbox's
 * dispose() — with the old fd numbers reused by other files — both specs fail closed at spawn and
 * nothing runs. confine() after dispose() throws.
 */
import fs from 'node:fs'
import path from 'node:path'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { runSpec } from '../../support/sandbox/run-confined.js'

/** One spawn attempt of a confined spec. */
export interface SpawnAttempt {
  ran: boolean
  stdout: string
  stderr: string
  exitCode: number | null
  /** The spawn was refused: the error's name, code and message. */
  refused?: string
  /** Files the attempt left in the root. */
  wrote: string[]
}

/** The whole sequence for one backend. */
export interface RulesetOutcome {
  readOnlyAfterEviction: SpawnAttempt
  widerAfterEviction: SpawnAttempt
  readOnlyAfterDispose: SpawnAttempt
  widerAfterDispose: SpawnAttempt
  /** What confine() after dispose() threw. */
  confineAfterDispose: string
  /** Ruleset fds the sandbox held after the evicting confine (the cache holds one). */
  openRulesets: number
}

const writer = (root: string, name: string): SubprocessSpawnSpec => ({
  argv: ['/bin/sh', '-c', `echo ran; echo x > "${root}/${name}" && echo WROTE`],
  cwd: root,
  graceMs: 500,
  stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
})

async function attempt(spec: SubprocessSpawnSpec, root: string): Promise<SpawnAttempt> {
  const before = new Set(fs.readdirSync(root))
  try {
    const r = await runSpec(spec, 10_000)
    const wrote = fs.readdirSync(root).filter((n) => !before.has(n))
    return { ran: r.stdout.includes('ran'), stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, wrote }
  } catch (e) {
    const err = e as { name?: string; code?: string; message?: string }
    const wrote = fs.readdirSync(root).filter((n) => !before.has(n))
    return {
      ran: false,
      stdout: '',
      stderr: '',
      exitCode: null,
      refused: `${err.name} ${err.code}: ${err.message}`,
      wrote,
    }
  }
}

/** The sequence above for `backend`, in `root` (an empty dir this user owns). */
export async function rulesetLifetime(backend: SandboxBackendName, root: string): Promise<RulesetOutcome> {
  const sandbox = await LocalSandbox.create({ backends: [backend], rulesetCacheSize: 1 })
  const readOnly = sandbox.confine(writer(root, 'from-read-only'), {
    mode: 'read-only',
    workspaceRoot: root,
    sessionId: 'rulesets',
  }).spec
  const wider = sandbox.confine(writer(root, 'from-workspace-write'), {
    mode: 'workspace-write',
    workspaceRoot: root,
    sessionId: 'rulesets',
  }).spec
  const openRulesets = sandbox.openRulesets
  const readOnlyAfterEviction = await attempt(readOnly, root)
  const widerAfterEviction = await attempt(wider, root)
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { force: true })
  await sandbox.dispose()
  // the numbers of the closed ruleset fds now name other files
  const reused = Array.from({ length: 32 }, () => fs.openSync(root, 'r'))
  const readOnlyAfterDispose = await attempt(readOnly, root)
  const widerAfterDispose = await attempt(wider, root)
  for (const fd of reused) fs.closeSync(fd)
  let confineAfterDispose = 'did not throw'
  try {
    sandbox.confine(writer(root, 'late'), { mode: 'read-only', workspaceRoot: root })
  } catch (e) {
    confineAfterDispose = String(e)
  }
  return {
    readOnlyAfterEviction,
    widerAfterEviction,
    readOnlyAfterDispose,
    widerAfterDispose,
    confineAfterDispose,
    openRulesets,
  }
}
