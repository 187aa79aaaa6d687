// The strictly-wider retry asked of the person through MCP elicitation, with the SDK's own
// Client and a real sandbox: the control shows the command denied; "allow once" runs the same
// command wider; decline, cancel and a malformed answer run nothing; a client without the
// elicitation capability is refused with the reason. The question is the escaped approval text
// with its digest, sent as part of the tools/call it belongs to.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALLOW_ONCE, APPROVAL_FIELD, APPROVAL_FORM, REFUSAL_REASONS, REJECT } from '../../../src/mcp/elicitation.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import { ESCALATION_TEXTS } from '../../../src/policy/widen.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { connect, type Elicit, textOf } from '../../support/mcp/harness.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-mcp-approval')
const outside = scratchDir('cordon-mcp-approval-out')

describe('approvals through elicitation (in-memory, real sandbox)', () => {
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

  /** A file in the workspace the read-only baseline cannot write, and the retry asking for workspace-write. */
  function target() {
    const file = join(root, `w-${Math.random().toString(36).slice(2)}`)
    // A carriage return and an erase-line would hide part of the command on a terminal.
    const command = `echo ok > ${file} #\r\x1b[2K`
    const retry = { command, sandbox_permissions: 'workspace-write', justification: 'it writes its output' }
    return { file, command, retry }
  }

  /** Connects a client answering with `answer`, runs the control and the retry; returns both results. */
  async function askWith(answer: Elicit | undefined, approvalTimeoutMs?: number) {
    const c = await connect({ executor, workspaceRoot: root, approvalTimeoutMs }, answer)
    const { file, command, retry } = target()
    const control = await c.client.callTool({ name: 'bash', arguments: { command } })
    const retried = await c.client.callTool({ name: 'bash', arguments: retry })
    await c.mcp.close()
    return { c, file, control, retried }
  }

  it('allow once: the control is denied, the same command runs wider; the question is escaped, bound to the call', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { c, file, control, retried } = await askWith(() => ({
      action: 'accept',
      content: { [APPROVAL_FIELD]: ALLOW_ONCE },
    }))
    expect(control.structuredContent).toMatchObject({ run: { sandbox: { mode: 'read-only', denied: true } } })
    expect(textOf(control)).toContain('[sandbox: escalation available')
    expect(retried).toMatchObject({
      isError: false,
      structuredContent: { run: { exitCode: 0, sandbox: { mode: 'workspace-write', denied: false } } },
    })
    expect(existsSync(file)).toBe(true)
    expect(c.elicited).toHaveLength(1)
    const params = c.elicited[0]!.params as { message: string; requestedSchema: unknown; mode?: string }
    expect(params.requestedSchema).toEqual(APPROVAL_FORM)
    expect(params.message).toContain('Allow this command to run under workspace-write instead of read-only?')
    expect(params.message).toContain('#\\r\\x1b[2K')
    expect(params.message).toMatch(/ {2}digest: [0-9a-f]{64}$/)
    expect(holdsRawControl(params.message)).toBe(false)
    // Sent as part of the retry's tools/call: its relatedRequestId is that request's id.
    const elicitation = c.sent.find(({ message }) => 'method' in message && message.method === 'elicitation/create')
    const retryRequestId = c.sent.find(
      ({ message }) =>
        'result' in message &&
        (message.result as { structuredContent?: { run?: { sandbox?: { mode?: string } } } }).structuredContent?.run
          ?.sandbox?.mode === 'workspace-write',
    )?.message as { id: number }
    expect(elicitation?.options?.relatedRequestId).toBe(retryRequestId.id)
  })

  it('decline rejects and cancel cancels: nothing runs', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const answers: [ElicitResult['action'], string][] = [
      ['decline', ESCALATION_TEXTS.rejected('workspace-write')],
      ['cancel', ESCALATION_TEXTS.cancelled('workspace-write')],
    ]
    for (const [action, text] of answers) {
      const { file, retried } = await askWith(() => ({ action }))
      expect(retried).toMatchObject({ isError: true, structuredContent: { code: 'ESCALATION_REFUSED' } })
      expect(textOf(retried)).toBe(text)
      expect(existsSync(file)).toBe(false)
    }
    const rejected = await askWith(() => ({ action: 'accept', content: { [APPROVAL_FIELD]: REJECT } }))
    expect(textOf(rejected.retried)).toBe(ESCALATION_TEXTS.rejected('workspace-write'))
    expect(existsSync(rejected.file)).toBe(false)
  })

  it('a malformed answer, a failing client and no answer in time refuse, with the reason in the text', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const malformed = await askWith(() => ({ action: 'accept', content: { [APPROVAL_FIELD]: 'always' } }))
    expect(malformed.retried).toMatchObject({ isError: true, structuredContent: { code: 'ESCALATION_REFUSED' } })
    expect(textOf(malformed.retried)).toContain('asking the person through the MCP client failed')
    expect(textOf(malformed.retried)).toContain('nothing ran')
    expect(existsSync(malformed.file)).toBe(false)
    const failing = await askWith(() => {
      throw new Error('the prompt window \x1b[31mcrashed')
    })
    expect(failing.retried).toMatchObject({ isError: true, structuredContent: { code: 'ESCALATION_REFUSED' } })
    expect(textOf(failing.retried)).toContain('crashed')
    expect(holdsRawControl(textOf(failing.retried))).toBe(false)
    expect(existsSync(failing.file)).toBe(false)
    // A person who never answers: refused once the approval's time is up.
    const silent = await askWith(() => new Promise<never>(() => undefined), 300)
    expect(silent.retried).toMatchObject({ isError: true, structuredContent: { code: 'ESCALATION_REFUSED' } })
    expect(textOf(silent.retried)).toMatch(/asking the person through the MCP client failed \(.*timed out/i)
    expect(existsSync(silent.file)).toBe(false)
  })

  it('a client without elicitation: refused with the reason, and no escalation hint after a denial', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { file, control, retried } = await askWith(undefined)
    expect(control.structuredContent).toMatchObject({ run: { sandbox: { denied: true } } })
    expect(textOf(control)).not.toContain('escalation available')
    expect(retried).toMatchObject({ isError: true, structuredContent: { code: 'ESCALATION_UNAVAILABLE' } })
    expect(textOf(retried)).toBe(
      `${ESCALATION_TEXTS.noApprovalService('workspace-write')}: ${REFUSAL_REASONS.noElicitation}`,
    )
    expect(existsSync(file)).toBe(false)
  })
})

describe('the approval prompt outside the sandbox', () => {
  it('asks outside the workspace too: the prompt says where it runs', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create()
    const executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
    try {
      const c = await connect({ executor, workspaceRoot: root }, () => ({ action: 'decline' }))
      const r = await c.client.callTool({
        name: 'bash',
        arguments: { command: 'true', workdir: outside, sandbox_permissions: 'workspace-write', justification: 'x' },
      })
      expect(textOf(r)).toBe(ESCALATION_TEXTS.rejected('workspace-write'))
      const message = (c.elicited[0]!.params as { message: string }).message
      expect(message).toContain(`  in: ${outside}`)
      expect(message).toContain(`outside the workspace root (${root})`)
      await c.mcp.close()
    } finally {
      await executor.dispose()
      await sandbox.dispose()
    }
  })
})
