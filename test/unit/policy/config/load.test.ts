// Loading from real files: the user config ($XDG_CONFIG_HOME), the project's .cordon.json, --config
// FILE and the caller's settings. Precedence over every pair of sources (a table: the narrower scope
// wins, the project config only narrows); the project config checked against the record kept in a
// store (rewritten, removed, replaced by rename or by a link); a malformed file stops the load.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type LoadConfigOptions, loadConfigWith, PROJECT_CONFIG_NAME } from '../../../../src/policy/config/load.js'
import type { ConfigRecordEntry, ConfigRecordStore } from '../../../../src/policy/config/record.js'
import type { ConfigSourceKind } from '../../../../src/policy/config/settings.js'
import { isConfigInvalidError, isConfigWidenedError } from '../../../../src/policy/errors.js'
import { scratchDir } from '../../../support/scratch.js'

/** A store in memory: the decision is the loader's, the disk store has its own test. */
class MemoryStore implements ConfigRecordStore {
  readonly records = new Map<string, ConfigRecordEntry>()
  read(root: string) {
    return this.records.get(root)
  }
  write(entry: ConfigRecordEntry) {
    this.records.set(entry.root, structuredClone(entry))
  }
}

/** A fresh home (user config dir under it) and workspace. */
function place() {
  const base = scratchDir('cordon-config-load')
  const cfg = path.join(base, 'cfg')
  const ws = path.join(base, 'ws')
  fs.mkdirSync(path.join(cfg, 'cordon'), { recursive: true })
  fs.mkdirSync(ws)
  const write = (file: string, value: unknown) => fs.writeFileSync(file, JSON.stringify(value))
  return {
    ws,
    env: { XDG_CONFIG_HOME: cfg, HOME: base },
    userFile: path.join(cfg, 'cordon', 'config.json'),
    projectFile: path.join(ws, PROJECT_CONFIG_NAME),
    otherFile: path.join(base, 'other.json'),
    user: (v: unknown) => write(path.join(cfg, 'cordon', 'config.json'), v),
    project: (v: unknown) => write(path.join(ws, PROJECT_CONFIG_NAME), v),
    other: (v: unknown) => write(path.join(base, 'other.json'), v),
  }
}

/** What a load throws: its code, or `ok` with the config. */
function attempt(load: () => unknown): { code: string; error?: unknown } {
  try {
    load()
    return { code: 'ok' }
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error), error }
  }
}

describe('precedence over every pair of sources', () => {
  const ORDER: ConfigSourceKind[] = ['default', 'user', 'project', 'file', 'flags']
  /** Loads with `limits.processes` set by the sources given (default: none), as each source would. */
  function loadWith(values: Partial<Record<ConfigSourceKind, number>>) {
    const p = place()
    if (values.user !== undefined) p.user({ limits: { processes: values.user } })
    if (values.project !== undefined) p.project({ limits: { processes: values.project } })
    if (values.file !== undefined) p.other({ limits: { processes: values.file } })
    const options: LoadConfigOptions = {
      workspaceRoot: p.ws,
      env: p.env,
      ...(values.file === undefined ? {} : { configFile: p.otherFile }),
      ...(values.flags === undefined
        ? {}
        : { overrides: { limits: { processes: values.flags } }, overridesFrom: 'flags' as const }),
    }
    return loadConfigWith(options, new MemoryStore())
  }

  const pairs = ORDER.flatMap((broad, i) => ORDER.slice(i + 1).map((narrow) => [broad, narrow] as const))
  it.each(pairs)('%s, then %s: the narrower scope wins; a project config only lowers', (broad, narrow) => {
    // `default` sets no limit (none: the widest); the others set 10, and the narrower scope 5 or 20.
    const at = (v: number) => ({ ...(broad === 'default' ? {} : { [broad]: 10 }), [narrow]: v })
    const lower = loadWith(at(5))
    expect(lower.limits.processes).toBe(5)
    expect(lower.sources.limits.processes?.kind).toBe(narrow)
    const higher = attempt(() => loadWith(at(20)))
    if (narrow === 'project' && broad !== 'default') expect(higher.code).toBe('CONFIG_WIDENED')
    else {
      expect(higher.code).toBe('ok')
      expect(loadWith(at(20)).limits.processes).toBe(20)
    }
  })

  it('modes the same way: the project config may lower the user’s mode, never raise it', () => {
    const p = place()
    p.user({ mode: 'workspace-write' })
    p.project({ mode: 'read-only' })
    expect(loadConfigWith({ workspaceRoot: p.ws, env: p.env }, undefined)).toMatchObject({ mode: 'read-only' })
    p.project({ mode: 'danger-full-access' })
    const refused = attempt(() => loadConfigWith({ workspaceRoot: p.ws, env: p.env }, undefined))
    expect(refused.code).toBe('CONFIG_WIDENED')
    expect((refused.error as Error).message).toContain(p.projectFile)
    // The person's own --config FILE and flags raise it over the project's.
    p.project({ mode: 'read-only' })
    p.other({ mode: 'danger-full-access' })
    expect(loadConfigWith({ workspaceRoot: p.ws, env: p.env, configFile: p.otherFile }, undefined).mode).toBe(
      'danger-full-access',
    )
    const api = loadConfigWith({ workspaceRoot: p.ws, env: p.env, overrides: { mode: 'workspace-write' } }, undefined)
    expect(api.mode).toBe('workspace-write')
    expect(api.sources.mode).toEqual({ kind: 'api' })
  })
})

describe('the project config against the record', () => {
  const setup = () => {
    const p = place()
    p.user({ mode: 'workspace-write' })
    p.project({ network: 'deny', hiddenPaths: ['.env'] })
    const store = new MemoryStore()
    const load = (acceptChanged = false) => loadConfigWith({ workspaceRoot: p.ws, env: p.env, acceptChanged }, store)
    expect(load()).toMatchObject({ network: 'deny', hiddenPaths: ['.env'] })
    expect(store.records.get(p.ws)).toMatchObject({ root: p.ws, content: { network: 'deny' } })
    return { p, store, load }
  }

  it('a narrowing edit is read by the next load and recorded (the file IS read)', () => {
    const { p, store, load } = setup()
    p.project({ network: 'deny', hiddenPaths: ['.env'], mode: 'read-only' })
    expect(load().mode).toBe('read-only')
    expect(store.records.get(p.ws)?.content).toMatchObject({ mode: 'read-only' })
  })

  it('a wider rewrite is refused naming the file and the field, until accepted', () => {
    const { p, store, load } = setup()
    p.project({ hiddenPaths: ['.env'] })
    const refused = attempt(() => load())
    expect(refused.code).toBe('CONFIG_WIDENED')
    expect(refused.error).toMatchObject({ file: p.projectFile, against: 'record', widenings: [{ field: 'network' }] })
    expect((refused.error as Error).message).toMatch(/--accept-config/)
    expect(attempt(() => load()).code).toBe('CONFIG_WIDENED') // refusing records nothing
    expect(load(true).network).toBe('inherit')
    expect(load().network).toBe('inherit') // accepted once, recorded
    expect(store.records.get(p.ws)?.content).toEqual({ hiddenPaths: ['.env'] })
  })

  it('removing the narrowing file is widening; replacing it by rename too; by a symlink is refused', () => {
    const { p, load } = setup()
    fs.rmSync(p.projectFile)
    expect(attempt(() => load()).code).toBe('CONFIG_WIDENED')
    const tmp = path.join(p.ws, 'new.json')
    fs.writeFileSync(tmp, '{"hiddenPaths": [".env"]}')
    fs.renameSync(tmp, p.projectFile)
    expect(attempt(() => load()).error).toMatchObject({ widenings: [{ field: 'network' }] })
    fs.rmSync(p.projectFile)
    fs.writeFileSync(path.join(p.ws, 'target.json'), '{"network": "deny", "hiddenPaths": [".env"]}')
    fs.symlinkSync('target.json', p.projectFile)
    const linked = attempt(() => load())
    expect(linked.code).toBe('CONFIG_INVALID')
    expect((linked.error as { issues: string[] }).issues[0]).toMatch(/symbolic link/)
  })

  it('a wider project config is refused against the layers even with acceptChanged', () => {
    const { p, load } = setup()
    p.project({ mode: 'danger-full-access' })
    expect(attempt(() => load(true)).error).toMatchObject({ against: 'layers' })
  })
})

describe('malformed and missing files', () => {
  it('a malformed user, project or --config file stops the load, naming the file and field', () => {
    const p = place()
    p.user({ mode: 'yolo' })
    expect(attempt(() => loadConfigWith({ env: p.env }, undefined)).error).toMatchObject({
      file: p.userFile,
      issues: [expect.stringMatching(/^mode: expected one of/)],
    })
    fs.rmSync(p.userFile)
    fs.writeFileSync(p.projectFile, '{"limits": {"processes": -1}}')
    const project = attempt(() => loadConfigWith({ workspaceRoot: p.ws, env: p.env }, new MemoryStore()))
    expect(isConfigInvalidError(project.error)).toBe(true)
    expect(project.error).toMatchObject({ file: p.projectFile, issues: [expect.stringMatching(/^limits\.processes:/)] })
  })

  it('a --config FILE that does not exist is refused; a missing user or project config is none', () => {
    const p = place()
    expect(attempt(() => loadConfigWith({ configFile: p.otherFile, env: p.env }, undefined)).error).toMatchObject({
      code: 'CONFIG_INVALID',
      file: p.otherFile,
      issues: ['(file): does not exist'],
    })
    const none = loadConfigWith({ workspaceRoot: p.ws, env: p.env }, new MemoryStore())
    expect(none).toMatchObject({ mode: 'read-only', network: 'inherit', files: [], workspaceRoot: p.ws })
    expect(isConfigWidenedError(undefined)).toBe(false)
  })

  it('the user config is never read through a symlink either', () => {
    const p = place()
    p.other({ mode: 'danger-full-access' })
    fs.symlinkSync(p.otherFile, p.userFile)
    expect(attempt(() => loadConfigWith({ env: p.env }, undefined)).code).toBe('CONFIG_INVALID')
  })
})
