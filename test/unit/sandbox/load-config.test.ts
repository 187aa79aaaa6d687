// The configuration as a host loads it, the record kept on disk in cordon's private dir: a second
// process (a fresh store) refuses the wider file the first one did not load. LocalSandbox.create
// reads the user config by default, a root's project config when given one, none with false, and
// takes a config loaded already as is; a malformed one throws before anything is probed.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { configFromOption, loadConfig } from '../../../src/sandbox/load-config.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { scratchDir } from '../../support/scratch.js'

function place() {
  const base = scratchDir('cordon-load-config')
  const ws = path.join(base, 'ws')
  fs.mkdirSync(path.join(base, 'cfg', 'cordon'), { recursive: true })
  fs.mkdirSync(ws)
  const env = { XDG_CONFIG_HOME: path.join(base, 'cfg'), HOME: base, CORDON_PRIVATE_DIR: path.join(base, 'private') }
  const userFile = path.join(base, 'cfg', 'cordon', 'config.json')
  return { base, ws, env, userFile, projectFile: path.join(ws, '.cordon.json') }
}

const none = { capabilities: { platform: process.platform, chain: [], backends: {} } }

describe('loadConfig', () => {
  it('keeps the record in the private dir: a later load (a new process) refuses a wider file', () => {
    const p = place()
    fs.writeFileSync(p.userFile, '{"mode": "workspace-write"}')
    fs.writeFileSync(p.projectFile, '{"network": "deny"}')
    expect(loadConfig({ workspaceRoot: p.ws, env: p.env }).network).toBe('deny')
    expect(fs.readdirSync(path.join(p.env.CORDON_PRIVATE_DIR, 'config-records'))).toHaveLength(1)
    fs.writeFileSync(p.projectFile, '{}')
    expect(() => loadConfig({ workspaceRoot: p.ws, env: p.env })).toThrow(
      expect.objectContaining({ code: 'CONFIG_WIDENED', file: p.projectFile }),
    )
    expect(loadConfig({ workspaceRoot: p.ws, env: p.env, acceptChanged: true }).network).toBe('inherit')
    expect(loadConfig({ workspaceRoot: p.ws, env: p.env }).network).toBe('inherit')
  })

  it('a root reached through a symlink is the same root, with the same record', () => {
    const p = place()
    fs.symlinkSync(p.ws, path.join(p.base, 'link'))
    fs.writeFileSync(p.projectFile, '{"network": "deny"}')
    expect(loadConfig({ workspaceRoot: path.join(p.base, 'link'), env: p.env }).workspaceRoot).toBe(p.ws)
    fs.rmSync(p.projectFile)
    expect(() => loadConfig({ workspaceRoot: p.ws, env: p.env })).toThrow(
      expect.objectContaining({ code: 'CONFIG_WIDENED' }),
    )
  })
})

describe('the config option of LocalSandbox.create', () => {
  it('reads the user config by default, a project config with a root, none with false', async () => {
    const p = place()
    fs.writeFileSync(p.userFile, '{"mode": "workspace-write", "hiddenPaths": [".env"]}')
    fs.writeFileSync(p.projectFile, '{"network": "deny"}')
    const plain = await LocalSandbox.create({ ...none, env: p.env })
    expect(plain.config).toMatchObject({ mode: 'workspace-write', network: 'inherit', workspaceRoot: undefined })
    const rooted = await LocalSandbox.create({ ...none, env: p.env, config: { workspaceRoot: p.ws } })
    expect(rooted.config).toMatchObject({ mode: 'workspace-write', network: 'deny', workspaceRoot: p.ws })
    expect(rooted.config.sources.network).toEqual({ kind: 'project', file: p.projectFile })
    const bare = await LocalSandbox.create({ ...none, env: p.env, config: false })
    expect(bare.config).toMatchObject({ mode: 'read-only', files: [] })
    const given = await LocalSandbox.create({ ...none, env: p.env, config: rooted.config })
    expect(given.config).toBe(rooted.config)
    for (const s of [plain, rooted, bare, given]) await s.dispose()
  })

  it('a malformed user config throws CONFIG_INVALID naming the file', async () => {
    const p = place()
    fs.writeFileSync(p.userFile, '{"network": "everywhere"}')
    await expect(LocalSandbox.create({ env: p.env })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      file: p.userFile,
    })
    expect(configFromOption(false, p.env).mode).toBe('read-only')
  })
})
