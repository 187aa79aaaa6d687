// The model-facing bash tool over a real executor and the real sandbox. The approval port is the
// harness's (a user prompt); here a scripted answerer stands in for the user, nothing else.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ApprovalOutcome } from '../../../src/policy/widen.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { ShellEnvRegistry } from '../../../src/shell/env-registry.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { describeApprovalRequest, type ApprovalRequest } from '../../../src/tool/approval.js'
import { createBashTool } from '../../../src/tool/bash-tool.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-tool')

function answerer(outcome: ApprovalOutcome) {
  const asked: ApprovalRequest[] = []
  return {
    asked,
    approval: {
      // An allow names the digest of the request it saw; other outcomes need none.
      request: async (r: ApprovalRequest) => {
        asked.push(r)
        return outcome === 'allowed-once' ? { outcome, digest: r.digest } : outcome
      },
    },
  }
}

/** A request's raw fields (its policy, digest and display are pinned in approval.test.ts). */
function raw(r: ApprovalRequest): Omit<ApprovalRequest, 'policy' | 'digest' | 'display'> {
  const { policy: _p, digest: _d, display: _s, ...fields } = r
  return fields
}

describe('bash tool, unsandboxed', () => {
  const executor = new LocalShellExecutor({ cwd: root, graceMs: 500 })
  const tool = createBashTool({ executor, workspaceRoot: root })
  afterAll(() => executor.dispose())
  const call = { callId: 'c1', agent: 'a' }

  it('has no escalation fields; renders output and markers; nonzero exits are not errors', async () => {
    expect(Object.keys((tool.inputSchema as { properties: object }).properties).sort()).toEqual([
      'command',
      'run_in_background',
      'timeout_ms',
      'workdir',
    ])
    expect(await tool.execute({ command: 'echo hi' }, call)).toMatchObject({ content: 'hi\n', isError: false })
    expect((await tool.execute({ command: 'true' }, call)).content).toBe('(no output)')
    const failed = await tool.execute({ command: 'echo out; echo err >&2; exit 3' }, call)
    expect(failed).toMatchObject({ isError: false, content: 'out\n[stderr]\nerr\n\n[exit code: 3]' })
  })

  it('timeouts show the timeout marker before the exit marker, also when the command exits 0', async () => {
    const r = await tool.execute({ command: "trap 'exit 0' TERM; sleep 30 & wait", timeout_ms: 200 }, call)
    expect(r.content).toMatch(/\[timed out after 200ms\]$/)
    const killed = await tool.execute({ command: 'sleep 30', timeout_ms: 200 }, call)
    expect(killed.content).toMatch(/\[timed out after 200ms\]\n\[killed by signal: SIGTERM\]$/)
  })

  it('resolves a relative workdir against the workspace root; a bad workdir is a spawn error', async () => {
    expect((await tool.execute({ command: 'pwd', workdir: '.' }, call)).content).toBe(`${root}\n`)
    expect(await tool.execute({ command: 'true', workdir: 'missing' }, call)).toMatchObject({
      isError: true,
      code: 'SPAWN_FAILED',
      content: `spawn failed: chdir: ENOENT (${join(root, 'missing')})`,
    })
  })

  it("streams a foreground command's output to the call's onOutput while it runs", async () => {
    const chunks: Array<{ chunk: string; stream: string; at: number }> = []
    const onOutput = (chunk: string, stream: string) => chunks.push({ chunk, stream, at: Date.now() })
    const command = 'for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.3; done'
    const r = await tool.execute({ command }, { ...call, onOutput })
    const ended = Date.now()
    expect(r.content).toBe('out1\nout2\nout3\n[stderr]\nerr1\nerr2\nerr3\n')
    const text = (stream: string) =>
      chunks
        .filter((c) => c.stream === stream)
        .map((c) => c.chunk)
        .join('')
    expect(text('stdout')).toBe('out1\nout2\nout3\n')
    expect(text('stderr')).toBe('err1\nerr2\nerr3\n')
    // The first line came while the command still slept, not with the result.
    expect(ended - (chunks[0]?.at ?? ended)).toBeGreaterThan(400)
    // A harness passing something else is told so; nothing runs.
    await expect(tool.execute({ command: 'echo x' }, { ...call, onOutput: 'no' } as never)).rejects.toThrow(
      'onOutput: must be a function',
    )
  })

  it('never forwards env or stdin from model arguments', async () => {
    const r = await tool.execute({ command: 'echo "[$SMUGGLED]"; cat', env: { SMUGGLED: 'x' }, stdin: 'typed' }, call)
    expect(r.content).toBe('[]\n')
  })

  it("the executor's own env registry sees the tool call (session, call id, agent)", async () => {
    const registry = new ShellEnvRegistry()
    registry.register({
      name: 'call',
      variables: [{ key: 'DSH_CALL', description: 'agent/call of the tool call' }],
      resolve: (execution) => ({ DSH_CALL: `${execution.agent}/${execution.callId}` }),
    })
    const own = createBashTool({ executor: new LocalShellExecutor({ cwd: root, env: registry }), workspaceRoot: root })
    const r = await own.execute(
      { command: 'echo "$DSH_SESSION_ID $DSH_CALL"' },
      { callId: 'c7', agent: 'ag', sessionId: 's9' },
    )
    expect(r.content).toBe('s9 ag/c7\n')
  })

  it('an abort is TOOL_ABORTED; escalation fields are refused without a sandbox', async () => {
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 100)
    expect(await tool.execute({ command: 'sleep 30' }, { ...call, signal: ac.signal })).toMatchObject({
      isError: true,
      code: 'TOOL_ABORTED',
      content: 'tool call aborted',
    })
    expect(
      (await tool.execute({ command: 'true', sandbox_permissions: 'workspace-write', justification: 'x' }, call))
        .content,
    ).toBe('sandbox_permissions is not available in this composition (no sandboxing executor to escalate)')
    expect(await tool.execute({ command: '' }, call)).toMatchObject({ isError: true, code: 'INVALID_ARGUMENTS' })
  })
})

describe('bash tool, sandboxed: the strictly-wider retry', async () => {
  const usable = await requireBackend('landlock')
  let sandbox: LocalSandbox
  let executor: LocalShellExecutor
  beforeAll(async () => {
    sandbox = await LocalSandbox.create()
    executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
  })
  afterAll(async () => {
    await executor?.dispose()
    await sandbox?.dispose()
  })
  const target = () => join(root, `written-${Math.random().toString(36).slice(2)}`)

  it.skipIf(!usable)(
    'advertises the escalation fields; a denial carries the marker and, with approvals, the hint',
    async () => {
      const { approval } = answerer('rejected')
      const withApproval = createBashTool({ executor, workspaceRoot: root, approval })
      expect(Object.keys((withApproval.inputSchema as { properties: object }).properties)).toContain(
        'sandbox_permissions',
      )
      const file = target()
      const r = await withApproval.execute({ command: `echo x > ${file}` }, { callId: 'c1', agent: 'a' })
      expect(r.content).toContain('[sandbox: file access denied under read-only mode]\n[sandbox: escalation available')
      const noApproval = await createBashTool({ executor, workspaceRoot: root }).execute(
        { command: `echo x > ${file}` },
        { callId: 'c2', agent: 'a' },
      )
      expect(noApproval.content).toContain('[sandbox: file access denied under read-only mode]')
      expect(noApproval.content).not.toContain('escalation available')
      expect(existsSync(file)).toBe(false)
    },
  )

  it.skipIf(!usable)('a granted retry runs once under the wider mode, bound to this call', async () => {
    const { asked, approval } = answerer('allowed-once')
    const tool = createBashTool({ executor, workspaceRoot: root, approval })
    const file = target()
    const r = await tool.execute(
      {
        command: `echo x > ${file}`,
        sandbox_permissions: 'workspace-write',
        justification: 'the build writes its output',
      },
      { callId: 'retry-7', agent: 'a' },
    )
    expect(r).toMatchObject({
      isError: false,
      result: { exitCode: 0, sandbox: { mode: 'workspace-write', denied: false } },
    })
    expect(existsSync(file)).toBe(true)
    expect(asked.map(raw)).toEqual([
      {
        agent: 'a',
        toolName: 'bash',
        callId: 'retry-7',
        reason: 'escalate sandbox to workspace-write: the build writes its output',
        signal: undefined,
        command: `echo x > ${file}`,
        workdir: root,
        currentMode: 'read-only',
        requestedMode: 'workspace-write',
        justification: 'the build writes its output',
        runInBackground: false,
        timeoutMs: expect.any(Number),
        workspaceRoot: root,
        precedingFailure: undefined,
        sessionId: undefined,
      },
    ])
    // Nothing is remembered: the next call is read-only again.
    const again = target()
    expect(
      (await tool.execute({ command: `echo x > ${again}` }, { callId: 'c9', agent: 'a' })).result?.sandbox?.denied,
    ).toBe(true)
    expect(existsSync(again)).toBe(false)
  })

  it.skipIf(!usable)(
    'a full round trip: a real denial, then an approval a person can judge, then the retry under the wider mode',
    async () => {
      const asked: ApprovalRequest[] = []
      const prompts: string[] = []
      // The harness's approval port: it shows the request to the user; this user approves once.
      const approval = {
        request: async (r: ApprovalRequest) => {
          asked.push(r)
          prompts.push(describeApprovalRequest(r))
          return { outcome: 'allowed-once' as const, digest: r.digest }
        },
      }
      const tool = createBashTool({ executor, workspaceRoot: root, approval })
      const outside = scratchDir('cordon-tool-outside')
      const file = join(outside, 'report.txt')
      const command = `echo report > ${file}`
      const call = { agent: 'a', sessionId: 'sess-1' }
      const denied = await tool.execute({ command }, { ...call, callId: 'c1' })
      expect(denied.content).toContain('[sandbox: file access denied under read-only mode]')
      const retry = await tool.execute(
        { command, sandbox_permissions: 'danger-full-access', justification: 'the report goes next to the data' },
        { ...call, callId: 'c2' },
      )
      expect(retry).toMatchObject({ isError: false, result: { exitCode: 0, sandbox: { mode: 'danger-full-access' } } })
      expect(existsSync(file)).toBe(true)
      expect(asked.map(raw)).toEqual([
        {
          agent: 'a',
          toolName: 'bash',
          callId: 'c2',
          reason: 'escalate sandbox to danger-full-access: the report goes next to the data',
          signal: undefined,
          command,
          workdir: root,
          currentMode: 'read-only',
          requestedMode: 'danger-full-access',
          justification: 'the report goes next to the data',
          runInBackground: false,
          timeoutMs: asked[0]?.timeoutMs,
          workspaceRoot: root,
          sessionId: 'sess-1',
          precedingFailure: {
            kind: 'denied',
            callId: 'c1',
            command,
            workdir: root,
            mode: 'read-only',
            paths: [file],
            jobId: undefined,
            sameCommand: true,
            callsSince: 0,
          },
        },
      ])
      expect(prompts[0]).toBe(
        [
          'Allow this command to run under danger-full-access instead of read-only?',
          `  command: ${command}`,
          `  in: ${root} (timeout ${asked[0]?.timeoutMs}ms)`,
          '  why: the report goes next to the data',
          `  before: the sandbox denied writing ${file} under read-only, in the previous call (this same command)`,
          `  digest: ${asked[0]?.digest}`,
        ].join('\n'),
      )
      // A different command after an unrelated call: the approval still names the denial, and says so.
      await tool.execute({ command: 'true' }, { ...call, callId: 'c3' })
      await tool.execute(
        { command: 'echo other > x', sandbox_permissions: 'workspace-write', justification: 'needed' },
        { ...call, callId: 'c4' },
      )
      expect(asked[1]?.precedingFailure).toMatchObject({ callId: 'c1', sameCommand: false, callsSince: 2 })
      expect(prompts[1]).toMatch(/in a call 3 calls ago \(a different command: echo report > /)
      // Another session's history is its own.
      await tool.execute(
        { command, sandbox_permissions: 'workspace-write', justification: 'needed' },
        { agent: 'a', sessionId: 'sess-2', callId: 'c5' },
      )
      expect(asked[2]?.precedingFailure).toBeUndefined()
      expect(prompts[2]).toMatch(
        /no sandbox denial or runner failure came before it in this session\n {2}digest: [0-9a-f]{64}$/,
      )
    },
  )

  it.skipIf(!usable)(
    'refusals: rejected, cancelled, unavailable; no service; no agent; not wider (without asking)',
    async () => {
      const args = { command: 'true', sandbox_permissions: 'workspace-write', justification: 'needed' }
      for (const [outcome, text] of [
        ['rejected', 'the user rejected escalating this command to "workspace-write"'],
        ['cancelled', 'approval for escalating to "workspace-write" was cancelled'],
        [
          'unavailable',
          'sandbox escalation to "workspace-write" requires approval, but no approval channel is available',
        ],
      ] as const) {
        const { approval } = answerer(outcome)
        expect(
          await createBashTool({ executor, workspaceRoot: root, approval }).execute(args, { callId: 'c', agent: 'a' }),
        ).toMatchObject({ isError: true, content: text })
      }
      expect(
        (await createBashTool({ executor, workspaceRoot: root }).execute(args, { callId: 'c', agent: 'a' })).content,
      ).toBe('sandbox escalation to "workspace-write" requires approval, but no approval service is composed')
      const { asked, approval } = answerer('allowed-once')
      const tool = createBashTool({ executor, workspaceRoot: root, approval })
      expect((await tool.execute(args, { callId: 'c' })).content).toBe(
        'sandbox escalation to "workspace-write" requires approval, but the call has no agent to route it through',
      )
      const notWider = await tool.execute(args, { callId: 'c', agent: 'a', sessionMode: 'workspace-write' })
      expect(notWider.content).toBe(
        'sandbox escalation to "workspace-write" is not strictly wider than this call\'s current "workspace-write" mode',
      )
      expect(asked).toEqual([])
    },
  )

  it.skipIf(!usable)('pairing rules for the escalation fields', async () => {
    const tool = createBashTool({ executor, workspaceRoot: root, approval: answerer('allowed-once').approval })
    const c = { callId: 'c', agent: 'a' }
    expect((await tool.execute({ command: 'true', sandbox_permissions: 'workspace-write' }, c)).content).toBe(
      'invalid escalation: sandbox_permissions requires a justification',
    )
    expect((await tool.execute({ command: 'true', justification: 'why' }, c)).content).toBe(
      'invalid escalation: justification is only valid together with sandbox_permissions or additional_hosts',
    )
    expect(
      (await tool.execute({ command: 'true', sandbox_permissions: 'workspace-write', justification: '  ' }, c)).content,
    ).toBe('invalid justification: expected a non-empty sentence')
    expect(await tool.execute({ command: 'true', sandbox_permissions: 'root', justification: 'x' }, c)).toMatchObject({
      isError: true,
      code: 'INVALID_ARGUMENTS',
    })
  })

  it.skipIf(!usable)('an abort after the grant spawns nothing', async () => {
    const ac = new AbortController()
    const file = target()
    const tool = createBashTool({
      executor,
      workspaceRoot: root,
      approval: {
        request: async (r: ApprovalRequest) => {
          ac.abort()
          return { outcome: 'allowed-once' as const, digest: r.digest }
        },
      },
    })
    const r = await tool.execute(
      { command: `echo x > ${file}`, sandbox_permissions: 'workspace-write', justification: 'x' },
      { callId: 'c', agent: 'a', signal: ac.signal },
    )
    expect(r).toMatchObject({ isError: true, code: 'TOOL_ABORTED' })
    expect(existsSync(file)).toBe(false)
  })

  it.skipIf(!usable)('marker-like text at the end of real output stays in the body', async () => {
    writeFileSync(join(root, 'tricky.txt'), 'done\n[exit code: 0]\n')
    const r = await createBashTool({ executor, workspaceRoot: root }).execute(
      { command: 'cat tricky.txt; exit 4' },
      { callId: 'c', agent: 'a' },
    )
    expect(r.content).toBe('done\n[exit code: 0]\n\n[exit code: 4]')
  })
})
