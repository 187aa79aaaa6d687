// The bash tool's additional_hosts end to end through the tool: the fields' pairing and every bad
// pattern refused before anything runs; the approval asked with the hosts named (a host the
// previous run was refused said so) and a digest over them; the retry run under the widened list
// only when the answer names that digest; and the rendered result of a network denial telling
// the model what was refused and how to ask. No proxy runs here: the executor resolves for real,
// and its run() hands back the facts a run under an allow-list reports (a pure input of the tool),
// so nothing in this file claims confinement.
import { realpathSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { HOST_WIDENING_TEXTS } from '../../../src/policy/network/widen-hosts.js'
import type { NetworkPolicy } from '../../../src/policy/vocabulary.js'
import { ESCALATION_TEXTS, type ApprovalOutcome } from '../../../src/policy/widen.js'
import { NETWORK_HINT } from '../../../src/shell/exit-status.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import type { ShellExecSpec, ShellRunResult, ShellSandboxInfo } from '../../../src/shell/types.js'
import {
  APPROVAL_ANSWER_TEXTS,
  approvalDigest,
  describeApprovalRequest,
  type ApprovalAnswer,
  type ApprovalRequest,
} from '../../../src/tool/approval.js'
import { createBashTool } from '../../../src/tool/bash-tool.js'
import { scratchDir } from '../../support/scratch.js'

const root = realpathSync(scratchDir('cordon-hosts'))
const call = { callId: 'c1', agent: 'a' }
const refusedFacts = (hosts: string[]): ShellSandboxInfo => ({
  mode: 'read-only',
  denied: true,
  deniedFor: ['network'],
  network: { refused: hosts.map((host) => ({ host, port: 443, count: 1, reason: 'not-allowed' })), allowed: [] },
})

/**
 * A tool over a real executor whose run() is replaced: each spec it would run is kept, and the
 * result carries `facts` (the next run's sandbox facts). The sandbox is never asked to confine.
 */
function setup(options: {
  network?: NetworkPolicy
  answer?: (r: ApprovalRequest) => ApprovalOutcome | ApprovalAnswer
  sandboxed?: boolean
}) {
  const sandbox = {
    confine() {
      throw new Error('not asked: run() is replaced')
    },
  }
  const real = new LocalShellExecutor({
    cwd: root,
    workspaceRoot: root,
    ...(options.sandboxed === false ? {} : { sandbox }),
  })
  const ran: ShellExecSpec[] = []
  let facts: ShellSandboxInfo | undefined
  const executor = Object.create(real) as LocalShellExecutor
  executor.run = async (spec) => {
    ran.push(spec)
    const result: ShellRunResult = {
      exitCode: facts?.denied ? 6 : 0,
      signal: null,
      timedOut: false,
      aborted: false,
      timeoutMs: spec.timeoutMs,
      stdout: { text: '', truncated: false },
      stderr: { text: facts?.denied ? 'curl: (56) CONNECT tunnel failed, response 403\n' : '', truncated: false },
      ...(facts ? { sandbox: facts } : {}),
    }
    return result
  }
  const asked: ApprovalRequest[] = []
  const tool = createBashTool({
    executor,
    workspaceRoot: root,
    ...(options.network === undefined ? {} : { network: options.network }),
    approval: {
      request: async (r) => {
        asked.push(r)
        return (options.answer ?? (() => 'rejected'))(r)
      },
    },
  })
  return { tool, ran, asked, setFacts: (f: ShellSandboxInfo | undefined) => (facts = f) }
}
const retry = (hosts: string[], command = 'curl -sS https://registry.npmjs.org/') => ({
  command,
  additional_hosts: hosts,
  justification: 'it downloads the package index',
})

describe('additional_hosts', () => {
  it('the schema offers it beside sandbox_permissions, nullable, a list of strings', () => {
    const { tool } = setup({})
    expect(tool.inputSchema).toMatchObject({
      properties: { additional_hosts: { type: ['array', 'null'], items: { type: 'string' } } },
    })
  })

  it('pairing and patterns: refused as typed tool errors before anything is asked or run', async () => {
    const { tool, ran, asked } = setup({ network: 'deny' })
    const cases: [Record<string, unknown>, string, string | RegExp][] = [
      [
        { command: 'true', additional_hosts: ['a.example'] },
        'INVALID_ESCALATION',
        HOST_WIDENING_TEXTS.missingJustification,
      ],
      [{ command: 'true', justification: 'x' }, 'INVALID_ESCALATION', ESCALATION_TEXTS.justificationWithoutPermissions],
      [retry([]), 'INVALID_ESCALATION', HOST_WIDENING_TEXTS.empty],
      [
        retry(['ok.example', 'a b', '*', 'x:99999']),
        'INVALID_ESCALATION',
        /^invalid additional_hosts, nothing ran: "a b": .*; "\*": .*; "x:99999": /,
      ],
      [{ command: 'true', additional_hosts: [1], justification: 'x' }, 'INVALID_ARGUMENTS', /additional_hosts/],
    ]
    for (const [args, code, text] of cases) {
      const r = await tool.execute(args, call)
      expect(r).toMatchObject({ isError: true, code })
      expect(r.content).toMatch(
        typeof text === 'string' ? new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : text,
      )
    }
    expect(asked).toEqual([])
    expect(ran).toEqual([])
  })

  it('an unsandboxed tool refuses the field by name', async () => {
    const { tool, ran } = setup({ sandboxed: false })
    expect(await tool.execute(retry(['a.example']), call)).toMatchObject({
      isError: true,
      code: 'INVALID_ESCALATION',
      content: ESCALATION_TEXTS.notAvailable,
    })
    expect(ran).toEqual([])
  })

  it('under inherit there is nothing to widen; a host the deny list covers stays refused; neither asks', async () => {
    const inherit = setup({})
    expect(await inherit.tool.execute(retry(['a.example']), call)).toMatchObject({
      isError: true,
      code: 'ESCALATION_NOT_WIDER',
      content: HOST_WIDENING_TEXTS.notRestricted,
    })
    const listed = setup({ network: { allow: ['*.example.com'], deny: ['secret.example.com'] } })
    const r = await listed.tool.execute(retry(['secret.example.com', 'pypi.org']), call)
    expect(r).toMatchObject({ isError: true, code: 'ESCALATION_NOT_WIDER' })
    expect(r.content).toContain('secret.example.com is covered by the deny pattern secret.example.com')
    const covered = await listed.tool.execute(retry(['a.example.com']), call)
    expect(covered).toMatchObject({ isError: true, code: 'ESCALATION_NOT_WIDER' })
    expect([...inherit.asked, ...listed.asked, ...inherit.ran, ...listed.ran]).toEqual([])
  })

  it('a network denial tells the model what was refused and how to ask; the retry names the refused host', async () => {
    const s = setup({ network: { allow: ['github.com'] } })
    s.setFacts(refusedFacts(['registry.npmjs.org']))
    const first = await s.tool.execute({ command: 'curl -sS https://registry.npmjs.org/' }, call)
    expect(first.isError).toBe(false)
    expect(first.content).toContain(
      '[sandbox: network access refused by the allow-list: registry.npmjs.org:443: not in the allow-list]',
    )
    expect(first.content).toContain(NETWORK_HINT)
    expect(first.content).not.toContain('file access denied')
    expect(s.ran[0]?.sandboxPolicy?.network).toEqual({ allow: ['github.com'] })

    const second = await s.tool.execute(retry(['registry.npmjs.org', 'pypi.org']), call)
    expect(second).toMatchObject({ isError: true, code: 'ESCALATION_REFUSED' })
    const r = s.asked[0] as ApprovalRequest
    expect(r).toMatchObject({
      currentMode: 'read-only',
      requestedMode: 'read-only',
      additionalHosts: ['pypi.org', 'registry.npmjs.org'],
      currentNetwork: { allow: ['github.com'] },
      policy: { network: { allow: ['github.com', 'pypi.org', 'registry.npmjs.org'] } },
      reason:
        'escalate sandbox to read-only with the hosts pypi.org, registry.npmjs.org: it downloads the package index',
    })
    expect(r.display.hosts).toEqual(['pypi.org', 'registry.npmjs.org (refused in the previous run)'])
    expect(describeApprovalRequest(r)).toContain('  reach: registry.npmjs.org (refused in the previous run)\n')
    expect(second.content).toBe(ESCALATION_TEXTS.rejected('read-only with the hosts pypi.org, registry.npmjs.org'))
    expect(s.ran).toHaveLength(1)
  })

  it('the retry runs under the widened list only when the answer names the digest of exactly those hosts', async () => {
    // The approver answers with the digest of a request for the first host alone.
    const narrower = setup({
      network: 'deny',
      answer: (r) => ({
        outcome: 'allowed-once',
        digest: approvalDigest({
          command: r.command,
          workdir: r.workdir,
          policy: { ...r.policy, network: { allow: ['a.example'] } },
          timeoutMs: r.timeoutMs,
          additionalHosts: ['a.example'],
        }),
      }),
    })
    const refused = await narrower.tool.execute(retry(['a.example', 'b.example']), call)
    expect(refused).toMatchObject({
      isError: true,
      code: 'ESCALATION_REFUSED',
      content: APPROVAL_ANSWER_TEXTS.otherDigest,
    })
    expect(narrower.ran).toEqual([])

    const approved = setup({ network: 'deny', answer: (r) => ({ outcome: 'allowed-once', digest: r.digest }) })
    const ok = await approved.tool.execute(retry(['b.example', 'a.example']), call)
    expect(ok).toMatchObject({ isError: false, content: '(no output)' })
    const r = approved.asked[0] as ApprovalRequest
    expect(r.digest).toBe(
      approvalDigest({
        command: r.command,
        workdir: root,
        policy: r.policy,
        timeoutMs: r.timeoutMs,
        additionalHosts: ['b.example', 'a.example'],
      }),
    )
    expect(approved.ran[0]?.sandboxPolicy).toMatchObject({
      mode: 'read-only',
      network: { allow: ['a.example', 'b.example'] },
    })
    // One approval, one run: the next call runs under the tool set's own network again.
    await approved.tool.execute({ command: 'true' }, call)
    expect(approved.ran[1]?.sandboxPolicy?.network).toBe('deny')
  })

  it('hosts with danger-full-access: refused, the command would reach every host anyway', async () => {
    const s = setup({ network: 'deny', answer: (r) => ({ outcome: 'allowed-once', digest: r.digest }) })
    const r = await s.tool.execute({ ...retry(['a.example']), sandbox_permissions: 'danger-full-access' }, call)
    expect(r).toMatchObject({ isError: true, code: 'ESCALATION_NOT_WIDER', content: HOST_WIDENING_TEXTS.unconfined })
    expect([...s.asked, ...s.ran]).toEqual([])
  })

  it('a wider mode and hosts in one request: one approval for both', async () => {
    const s = setup({ network: 'deny', answer: (r) => ({ outcome: 'allowed-once', digest: r.digest }) })
    const r = await s.tool.execute(
      { ...retry(['registry.npmjs.org'], 'npm install'), sandbox_permissions: 'workspace-write' },
      call,
    )
    expect(r.isError).toBe(false)
    expect(s.asked).toHaveLength(1)
    expect(describeApprovalRequest(s.asked[0] as ApprovalRequest).split('\n')[0]).toBe(
      'Allow this command to run under workspace-write instead of read-only, and to reach more hosts?',
    )
    expect(s.ran[0]?.sandboxPolicy).toMatchObject({
      mode: 'workspace-write',
      network: { allow: ['registry.npmjs.org'] },
    })
  })
})
