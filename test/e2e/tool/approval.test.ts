// The approval of a strictly-wider retry binds to what a person saw: the request carries the
// escaped text beside the raw fields and a digest of the exact command, workdir and policy, and
// the retry runs only when the answer names that digest. Over the real executor and sandbox: one
// changed byte between the prompt and the run, and nothing runs.
import { existsSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import { ESCALATION_TEXTS, type ApprovalOutcome } from '../../../src/policy/widen.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import type { ShellExecRequest } from '../../../src/shell/types.js'
import {
  APPROVAL_ANSWER_TEXTS,
  approvalDigest,
  describeApprovalRequest,
  type ApprovalAnswer,
  type ApprovalRequest,
} from '../../../src/tool/approval.js'
import { createBashTool } from '../../../src/tool/bash-tool.js'
import { requireBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-approval')

describe('approval digest over a real sandbox', async () => {
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
  const call = { callId: 'c1', agent: 'a' }

  /** A tool whose approver answers with `answer(request)`, keeping what it was asked and shown. */
  function toolAnswering(answer: (r: ApprovalRequest) => ApprovalOutcome | ApprovalAnswer, exec = executor) {
    const asked: ApprovalRequest[] = []
    const prompts: string[] = []
    const tool = createBashTool({
      executor: exec,
      workspaceRoot: root,
      approval: {
        request: async (r) => {
          asked.push(r)
          prompts.push(describeApprovalRequest(r))
          return answer(r)
        },
      },
    })
    return { tool, asked, prompts }
  }
  const retry = (command: string) => ({ command, sandbox_permissions: 'workspace-write', justification: 'it writes' })

  it.skipIf(!usable)(
    'the request carries the policy, the digest and the escaped display; the right digest runs',
    async () => {
      const file = target()
      // A hostile command: a carriage return and an erase-line would hide the write on a terminal.
      const command = `touch ${file} #\r\x1b[2Kgit status`
      const { tool, asked, prompts } = toolAnswering((r) => ({ outcome: 'allowed-once', digest: r.digest }))
      const r = await tool.execute(retry(command), call)
      expect(r).toMatchObject({ isError: false, result: { exitCode: 0, sandbox: { mode: 'workspace-write' } } })
      expect(existsSync(file)).toBe(true)
      const asked0 = asked[0] as ApprovalRequest
      expect(asked0.policy).toMatchObject({ mode: 'workspace-write', workspaceRoot: root })
      expect(asked0.timeoutMs).toBeGreaterThan(0)
      const subject = { command, workdir: root, policy: asked0.policy, timeoutMs: asked0.timeoutMs }
      expect(asked0.digest).toBe(approvalDigest(subject))
      expect(asked0.display.command).toBe(`touch ${file} #\\r\\x1b[2Kgit status`)
      expect(prompts[0]).toContain(`  command: touch ${file} #\\r\\x1b[2Kgit status\n`)
      expect(holdsRawControl(prompts[0] as string)).toBe(false)
    },
  )

  it.skipIf(!usable)(
    'an approver that changes one byte of the command answers for another request: refused',
    async () => {
      const file = target()
      const { tool } = toolAnswering((r) => {
        r.command = r.command.replace('touch', 'touck') // what the person saw is not what would run
        return { outcome: 'allowed-once', digest: approvalDigest(r) }
      })
      const r = await tool.execute(retry(`touch ${file}`), call)
      expect(r).toMatchObject({ isError: true, code: 'ESCALATION_REFUSED', content: APPROVAL_ANSWER_TEXTS.otherDigest })
      expect(r.result).toBeUndefined()
      expect(existsSync(file)).toBe(false)
    },
  )

  it.skipIf(!usable)(
    'the digest of another command, a bare allow, a malformed answer: refused, nothing ran',
    async () => {
      const file = target()
      const other = (r: ApprovalRequest) =>
        approvalDigest({ command: `${r.command} `, workdir: r.workdir, policy: r.policy })
      const answers: [(r: ApprovalRequest) => ApprovalOutcome | ApprovalAnswer, string][] = [
        [(r) => ({ outcome: 'allowed-once', digest: other(r) }), APPROVAL_ANSWER_TEXTS.otherDigest],
        [() => 'allowed-once', APPROVAL_ANSWER_TEXTS.noDigest],
        [() => true as unknown as ApprovalOutcome, "the approval's answer is malformed"],
      ]
      for (const [answer, text] of answers) {
        const r = await toolAnswering(answer).tool.execute(retry(`touch ${file}`), call)
        expect(r).toMatchObject({ isError: true, code: 'ESCALATION_REFUSED' })
        expect(r.content).toContain(text)
      }
      expect(existsSync(file)).toBe(false)
    },
  )

  it.skipIf(!usable)('the policy handed to the approver cannot be widened in place', async () => {
    const file = target()
    const { tool } = toolAnswering((r) => {
      expect(() => Object.assign(r.policy, { mode: 'danger-full-access' })).toThrow(TypeError)
      return { outcome: 'allowed-once', digest: r.digest }
    })
    const r = await tool.execute(retry(`touch ${file}`), call)
    expect(r).toMatchObject({ isError: false, result: { sandbox: { mode: 'workspace-write' } } })
  })

  it.skipIf(!usable)('a byte changed between the prompt and the run (after the answer) is refused', async () => {
    const file = target()
    // An executor whose resolve changes one byte of the command: what would run is not what was approved.
    const tampering = Object.create(executor) as LocalShellExecutor
    tampering.resolve = (request: ShellExecRequest) => executor.resolve({ ...request, command: `${request.command};` })
    const { tool } = toolAnswering((r) => ({ outcome: 'allowed-once', digest: r.digest }), tampering)
    const r = await tool.execute(retry(`touch ${file}`), call)
    expect(r).toMatchObject({ isError: true, code: 'ESCALATION_REFUSED', content: APPROVAL_ANSWER_TEXTS.otherDigest })
    expect(existsSync(file)).toBe(false)
  })

  it.skipIf(!usable)(
    'a workdir that is a symlink out of the workspace: the prompt shows the real directory, and the command runs there',
    async () => {
      const outside = realpathSync(scratchDir('cordon-approval-outside'))
      const link = `build-${Math.random().toString(36).slice(2)}`
      const { tool, asked, prompts } = toolAnswering((r) => ({ outcome: 'allowed-once', digest: r.digest }))
      // A confined call plants the symlink inside the workspace.
      const planted = await tool.execute(
        { command: `ln -s ${outside} ${link}` },
        { ...call, callId: 'c0', sessionMode: 'workspace-write' },
      )
      expect(planted).toMatchObject({ isError: false, result: { exitCode: 0 } })
      const given = join(root, link)
      // Control: the workdir as typed lies inside the root, the directory it leads to does not.
      expect(realpathSync(given)).toBe(outside)
      const r = await tool.execute(
        { command: 'pwd -P; pwd', workdir: link, sandbox_permissions: 'danger-full-access', justification: 'builds' },
        call,
      )
      expect(r).toMatchObject({ isError: false, result: { exitCode: 0, stdout: { text: `${outside}\n${outside}\n` } } })
      const request = asked[0] as ApprovalRequest
      expect(request).toMatchObject({ workdir: outside, givenWorkdir: given, workspaceRoot: root })
      expect(request.display).toMatchObject({ workdir: outside, givenWorkdir: given, outsideRoot: root })
      expect(prompts[0]).toContain(`  in: ${outside} (timeout ${request.timeoutMs}ms)\n`)
      expect(prompts[0]).toContain(`  given as: ${given} (a symlink leads there)\n`)
      expect(prompts[0]).toContain(`  outside the workspace root (${root})\n`)
      // The digest covers the real directory, not the one typed.
      const subject = { command: 'pwd -P; pwd', policy: request.policy, timeoutMs: request.timeoutMs }
      expect(request.digest).toBe(approvalDigest({ ...subject, workdir: outside }))
      expect(request.digest).not.toBe(approvalDigest({ ...subject, workdir: given }))
    },
  )

  it.skipIf(!usable)('a symlink planted at the workdir while the person is asked: refused, nothing ran', async () => {
    const outside = realpathSync(scratchDir('cordon-approval-late'))
    const link = `late-${Math.random().toString(36).slice(2)}`
    const { tool, asked } = toolAnswering((r) => {
      symlinkSync(outside, join(root, link)) // the workdir did not exist when the request was built
      return { outcome: 'allowed-once', digest: r.digest }
    })
    const r = await tool.execute(
      { ...retry(`touch marker`), workdir: link, sandbox_permissions: 'danger-full-access' },
      call,
    )
    expect(asked[0]?.workdir).toBe(join(root, link))
    // Control: the workdir as approved now leads out of the workspace.
    expect(realpathSync(join(root, link))).toBe(outside)
    expect(r).toMatchObject({ isError: true, code: 'ESCALATION_REFUSED', content: APPROVAL_ANSWER_TEXTS.otherDigest })
    expect(existsSync(join(outside, 'marker'))).toBe(false)
  })

  it.skipIf(!usable)('the audit reason is escaped text; the raw justification stays in its own field', async () => {
    const justification = 'needed\x1b[2K\r  why: harmless\u2064'
    const { tool, asked } = toolAnswering(() => 'rejected')
    await tool.execute({ ...retry('true'), justification }, call)
    const request = asked[0] as ApprovalRequest
    // Control: the reason built from the raw text would carry the terminal's controls.
    expect(holdsRawControl(ESCALATION_TEXTS.approvalReason('workspace-write', justification))).toBe(true)
    expect(request.reason).toBe('escalate sandbox to workspace-write: needed\\x1b[2K\\r  why: harmless\\u2064')
    expect(holdsRawControl(request.reason)).toBe(false)
    expect(request.justification).toBe(justification)
  })

  it.skipIf(!usable)(
    'the digest binds background and timeout: the answer for a foreground run starts no job',
    async () => {
      const file = target()
      const { tool, asked } = toolAnswering((r) => ({
        outcome: 'allowed-once',
        // The digest of the same command as a foreground run with its timeout: not what would run.
        digest: approvalDigest({ command: r.command, workdir: r.workdir, policy: r.policy, timeoutMs: 120_000 }),
      }))
      const r = await tool.execute({ ...retry(`touch ${file}`), run_in_background: true }, call)
      expect(r).toMatchObject({ isError: true, code: 'ESCALATION_REFUSED', content: APPROVAL_ANSWER_TEXTS.otherDigest })
      const request = asked[0] as ApprovalRequest
      expect(request).toMatchObject({ runInBackground: true, timeoutMs: undefined })
      expect(request.digest).toBe(
        approvalDigest({ command: request.command, workdir: root, policy: request.policy, runInBackground: true }),
      )
      // A foreground retry with another timeout is another request.
      const timed = toolAnswering((q) => ({ outcome: 'allowed-once', digest: q.digest }))
      await timed.tool.execute({ ...retry('true'), timeout_ms: 5000 }, call)
      expect(timed.asked[0]?.timeoutMs).toBe(5000)
      expect(existsSync(file)).toBe(false)
    },
  )
})
