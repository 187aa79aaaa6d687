// The tools take a resolved config: its mode is the default of every call, and its hidden paths and
// limits join every call's policy, on the real sandbox (the network default: the unit test of
// src/tool/bash-tool-options.ts). The control: without the config, read-only, the file readable.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { layerConfig } from '../../../src/policy/config/layers.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { createBashTools } from '../../../src/tool/toolset.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const root = scratchDir('cordon-tool-config')
const secret = path.join(scratchDir('cordon-tool-config-outside'), 'secret.txt')
fs.writeFileSync(secret, 'the secret\n')
const config = layerConfig(
  [
    {
      source: { kind: 'user', file: '/home/u/.config/cordon/config.json' },
      settings: {
        mode: 'workspace-write',
        hiddenPaths: [secret],
        limits: { fileSizeBytes: 4096 },
      },
    },
  ],
  root,
)

describe('createBashTools with a config', () => {
  let sandbox: LocalSandbox
  let executor: LocalShellExecutor
  beforeAll(async () => {
    sandbox = await LocalSandbox.create({ backends: ['landlock'], config: false })
    executor = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 500 })
  })
  afterAll(async () => {
    await executor?.dispose()
    await sandbox?.dispose()
  })
  const call = { callId: 'c', agent: 'a' }
  const command = `echo made > made.txt && echo wrote; cat ${secret}; head -c 8192 /dev/zero > "$TMPDIR/big.bin"; echo "big: $?"`

  it('runs each call under the config: its mode, hidden paths and limits', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const { bash } = createBashTools({ executor, workspaceRoot: root, config })
    const r = await bash.execute({ command }, call)
    expect(r.content).toContain('wrote')
    expect(fs.readFileSync(path.join(root, 'made.txt'), 'utf8')).toBe('made\n')
    expect(r.content).not.toContain('the secret')
    expect(r.content).toMatch(/big: [1-9]/) // RLIMIT_FSIZE from the config's limits
    expect(r.result?.sandbox).toMatchObject({ mode: 'workspace-write' })
  })

  it('control: without the config the same call is read-only and reads the file', async (ctx) => {
    await needBackend(ctx, 'landlock')
    fs.rmSync(path.join(root, 'made.txt'), { force: true })
    const { bash } = createBashTools({ executor, workspaceRoot: root })
    const r = await bash.execute({ command }, call)
    expect(r.content).toContain('the secret')
    expect(r.content).toContain('big: 0')
    expect(fs.existsSync(path.join(root, 'made.txt'))).toBe(false)
    expect(r.result?.sandbox).toMatchObject({ mode: 'read-only' })
  })
})
