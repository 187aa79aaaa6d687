/**
 * Runs the network allow-list host (test/escape/network/allow-list/host.ts) as root or uid 65534
 * and reads back what it printed: each command's result and sandbox facts, and what the
 * stand-in hosts saw.
 */
import fs from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import type { NetworkFacts } from '../../../src/policy/network/facts.js'
import type { NetworkPolicy, SandboxMode } from '../../../src/policy/vocabulary.js'
import type { AttackUser } from '../../escape/attacks/attack.js'
import { runScriptAs } from '../../escape/host/run-as.js'
import { scratchDirAs } from '../scratch.js'

const HOST = path.resolve(import.meta.dirname, '..', '..', 'escape', 'network', 'allow-list', 'host.ts')

/** One command's outcome in the host. */
export interface HostCommandResult {
  exitCode?: number | null
  stdout?: string
  stderr?: string
  ms?: number
  sandbox?: { denied: boolean; deniedFor?: string[]; network?: NetworkFacts; backend?: string }
  error?: { code?: string; message?: string }
}

/** What the host printed. */
export interface HostReport {
  results: Record<string, HostCommandResult>
  asked: string[]
  requests: string[]
  tls: { handshakes: number }
  raw: { port: number; accepted: number }
  udp: { port: number; received: number }
}

/** Where the commands run, and how. */
export interface HostRun {
  backend: 'landlock' | 'bubblewrap' | 'none'
  resident?: boolean
  mode?: SandboxMode
  network: NetworkPolicy
  files?: string
  commands: Record<string, string>
}

/** Runs `run` as `user` in a fresh workspace of theirs. */
export async function runAllowListHost(user: AttackUser, run: HostRun): Promise<HostReport> {
  const root = scratchDirAs(user, 'cordon-allow-list')
  try {
    const input = { resident: true, mode: 'read-only', ...run, root }
    const r = await runScriptAs(user, HOST, [JSON.stringify(input)], { timeoutMs: 600_000 })
    expect(r.code, r.stderr).toBe(0)
    return JSON.parse(r.stdout) as HostReport
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

/** The refusal facts of `result` for `host` (any port). */
export function refusalsOf(result: HostCommandResult | undefined, host: string): NetworkFacts['refused'] {
  return result?.sandbox?.network?.refused.filter((r) => r.host === host) ?? []
}
