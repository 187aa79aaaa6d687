import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FS_ACCESS, GRANT_TABLE, GRANT_TABLE_URL, grantsFor } from '../../../src/policy/grants.js'
import { resolvePolicy } from '../../../src/policy/resolve.js'
import { invalid } from '../../support/invalid.js'

let base: string
let root: string
let extra: string
let temp: string
beforeAll(() => {
  base = fs.realpathSync.native(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-grants-')))
  root = path.join(base, 'root')
  extra = path.join(base, 'extra')
  temp = path.join(base, 'session-tmp')
  for (const d of [root, extra, temp]) fs.mkdirSync(d)
  fs.symlinkSync(temp, path.join(base, 'temp-link'))
})
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const devices = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty']

describe('the grant table', () => {
  it('is read from profiles/grants.json', () => {
    expect(GRANT_TABLE_URL.pathname.endsWith('/profiles/grants.json')).toBe(true)
    expect(JSON.parse(fs.readFileSync(GRANT_TABLE_URL, 'utf8')).version).toBe(1)
    expect(Object.isFrozen(GRANT_TABLE)).toBe(true)
  })

  it('never grants block or character device creation, and never the host temp dirs', () => {
    expect(GRANT_TABLE.neverCreate).toEqual(['block-device', 'char-device'])
    expect(GRANT_TABLE.neverWritable).toEqual(expect.arrayContaining(['/tmp']))
    for (const access of GRANT_TABLE.writableAccess) expect(FS_ACCESS).toContain(access)
    expect(GRANT_TABLE.writableAccess).not.toContain('ioctl-dev')
  })

  it('gives each device the access it needs', () => {
    const byPath = Object.fromEntries(GRANT_TABLE.devices.map((d) => [d.path, d.access]))
    expect(Object.keys(byPath)).toEqual(devices)
    expect(byPath['/dev/null']).toEqual(['read', 'write', 'truncate'])
    expect(byPath['/dev/zero']).toEqual(['read'])
    expect(byPath['/dev/urandom']).toEqual(['read'])
    expect(byPath['/dev/full']).toEqual(['read', 'write'])
    expect(byPath['/dev/random']).toEqual(['read'])
    expect(byPath['/dev/tty']).toEqual(['read', 'write', 'ioctl-dev'])
  })
})

describe('grantsFor', () => {
  it('read-only grants reading everywhere, the devices, and only the private temp dir writable', () => {
    const grants = grantsFor(resolvePolicy({ cwd: root }), { tempDir: temp })
    expect(grants.mode).toBe('read-only')
    expect(grants.confined).toBe(true)
    expect(grants.read).toEqual({ path: '/', access: ['read', 'execute'] })
    expect(grants.writable.map((w) => [w.kind, w.path])).toEqual([['temp', temp]])
    expect(grants.tempDir).toBe(temp)
    expect(grantsFor(resolvePolicy({ cwd: root })).writable).toEqual([])
    expect(grants.devices.map((d) => d.path)).toEqual(
      devices.map((d) => (fs.existsSync(d) ? fs.realpathSync.native(d) : d)),
    )
    expect(grants.neverCreate).toEqual(['block-device', 'char-device'])
    expect(grants.network).toBe('inherit')
  })

  it('among the devices only /dev/null (with truncate), /dev/full and /dev/tty are writable', () => {
    const grants = grantsFor(resolvePolicy({ cwd: root }))
    const writableDevices = grants.devices.filter((d) => d.access.includes('write')).map((d) => d.path)
    expect(writableDevices).toEqual(['/dev/null', '/dev/full', '/dev/tty'])
    expect(grants.devices.find((d) => d.path === '/dev/null')!.access).toContain('truncate')
  })

  it('workspace-write grants the root, the extra roots and the temp dir, in that order', () => {
    const policy = resolvePolicy({ cwd: root, defaultMode: 'workspace-write', writableRoots: [extra] })
    const grants = grantsFor(policy, { tempDir: temp })
    expect(grants.writable.map((w) => [w.kind, w.path])).toEqual([
      ['root', root],
      ['extra', extra],
      ['temp', temp],
    ])
    expect(grants.tempDir).toBe(temp)
    for (const w of grants.writable) {
      expect(w.access).toEqual(expect.arrayContaining(['write', 'truncate', 'make-reg', 'make-dir', 'remove', 'refer']))
    }
  })

  it('the temp dir is canonical (its symlink resolved)', () => {
    const policy = resolvePolicy({ cwd: root, defaultMode: 'workspace-write' })
    expect(grantsFor(policy, { tempDir: path.join(base, 'temp-link') }).tempDir).toBe(temp)
  })

  it('deduplicates when the root is the temp dir, keeping the root', () => {
    const policy = resolvePolicy({ cwd: temp, defaultMode: 'workspace-write', writableRoots: [extra] })
    const grants = grantsFor(
      { ...policy, writableRoots: [extra, extra, temp] },
      { tempDir: path.join(base, 'temp-link') },
    )
    expect(grants.writable.map((w) => [w.kind, w.path])).toEqual([
      ['root', temp],
      ['extra', extra],
    ])
    expect(grants.tempDir).toBeUndefined()
  })

  it('without a temp dir, workspace-write grants no temp', () => {
    const grants = grantsFor(resolvePolicy({ cwd: root, defaultMode: 'workspace-write' }))
    expect(grants.writable.map((w) => w.kind)).toEqual(['root'])
    expect(grants.tempDir).toBeUndefined()
  })

  it('never makes the host /tmp writable, naming the field', () => {
    const tmp = fs.realpathSync.native('/tmp')
    const error = invalid(() =>
      grantsFor({ mode: 'workspace-write', workspaceRoot: '/', writableRoots: [tmp] }, { tempDir: '/tmp' }),
    )
    expect(error.issues.map((i) => i.split(':')[0])).toEqual(['workspaceRoot', 'writableRoots[0]', 'tempDir'])
    expect(error.issues[2]).toContain(`host temp dir "${tmp}"`)
  })

  it('a dir inside the host /tmp may be granted (it is not the host /tmp)', () => {
    const grants = grantsFor(resolvePolicy({ cwd: root, defaultMode: 'workspace-write' }), { tempDir: temp })
    expect(grants.writable.some((w) => w.path === '/tmp')).toBe(false)
  })

  it('read-only with root / is fine: nothing is writable', () => {
    expect(grantsFor({ mode: 'read-only', workspaceRoot: '/' }).writable).toEqual([])
  })

  it('danger-full-access is not confined', () => {
    const grants = grantsFor(resolvePolicy({ cwd: root, approvedMode: 'danger-full-access' }))
    expect(grants.confined).toBe(false)
    expect(grants.writable).toEqual([])
  })

  it('carries the network, protected and hidden paths, canonical', () => {
    const policy = resolvePolicy({
      cwd: root,
      defaultMode: 'workspace-write',
      network: 'deny',
      protectedPaths: [path.join(root, '.git')],
      hiddenPaths: [path.join(base, 'temp-link', 'secret')],
    })
    const grants = grantsFor(policy)
    expect(grants.network).toBe('deny')
    expect(grants.protectedPaths).toEqual([path.join(root, '.git')])
    expect(grants.hiddenPaths).toEqual([path.join(temp, 'secret')])
  })

  it('refuses a malformed policy, listing every issue', () => {
    const error = invalid(() => grantsFor({ mode: 'nope' as never, workspaceRoot: 'rel' }, { tempDir: 'tmp' }))
    expect(error.issues.map((i) => i.split(':')[0])).toEqual(['mode', 'workspaceRoot', 'tempDir'])
  })

  it('returns a deeply frozen value', () => {
    const grants = grantsFor(resolvePolicy({ cwd: root, defaultMode: 'workspace-write' }), { tempDir: temp })
    expect(Object.isFrozen(grants)).toBe(true)
    expect(Object.isFrozen(grants.writable)).toBe(true)
    expect(Object.isFrozen(grants.writable[0])).toBe(true)
    expect(Object.isFrozen(grants.devices[0]!.access)).toBe(true)
  })
})
