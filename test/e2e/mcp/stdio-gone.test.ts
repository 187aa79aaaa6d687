// `cordon mcp` when its client process dies mid-run (SIGKILL: no goodbye, only stdin at EOF):
// the server ends the foreground command and the background job it was running, removes its
// sandbox's session dirs and exits. Checked on the host: the processes' command lines in /proc,
// the server's pid, the dirs on disk.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { MCP_SDK_PACKAGE } from '../../../src/cli/mcp.js'
import { sleepersOf, sessionDirsOf, uniqueToken } from '../../support/mcp/harness.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import { alive, eventually } from '../../support/subprocess/processes.js'

const repo = join(import.meta.dirname, '..', '..', '..')
const root = scratchDir('cordon-mcp-stdio-gone')

describe(`cordon mcp (stdio, ${MCP_SDK_PACKAGE}'s client) when the client dies`, () => {
  it('leaves nothing: both commands end, the session dirs go, the server exits', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const [fg, bg] = [uniqueToken(), uniqueToken()]
    const client = spawn(
      process.execPath,
      ['--import', join(repo, 'test/fixtures/ts-hooks.mjs'), join(repo, 'test/fixtures/mcp-client.ts'), root, fg, bg],
      { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: client.stdout }).once('line', resolve)
        client.once('exit', (code) => reject(new Error(`the client exited (${code}) before it was ready`)))
      })
      const { serverPid, tmp } = JSON.parse(line) as { serverPid: number; tmp: string }
      expect(tmp).toContain(`/sessions/${serverPid}-mcp-`)
      expect(existsSync(tmp)).toBe(true)
      expect(await eventually(() => sleepersOf(fg).length === 1 && sleepersOf(bg).length === 1, 15_000)).toBe(true)
      expect(alive(serverPid)).toBe(true)

      client.kill('SIGKILL')
      expect(await eventually(() => !alive(serverPid), 20_000)).toBe(true)
      expect(sleepersOf(fg)).toEqual([])
      expect(sleepersOf(bg)).toEqual([])
      expect(existsSync(tmp)).toBe(false)
      expect(sessionDirsOf(serverPid)).toEqual([])
    } finally {
      client.kill('SIGKILL')
    }
  })
})
