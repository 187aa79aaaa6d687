// A command run as another user with a HOME it may not search (uid 65534 under root's HOME, as
// `setpriv` leaves it) has no user config there: the load goes on without one, instead of failing
// on EACCES. The control: the owner of that home reads the same file, and a config of one's own
// that cannot be opened is still an error (never silently skipped).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { NOBODY } from '../../../escape/host/run-as.js'
import { scratchDir } from '../../../support/scratch.js'

const dist = path.join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'index.js')
const LOAD = `import(${JSON.stringify(dist)}).then(({ loadConfig }) => { try { console.log(JSON.stringify({ mode: loadConfig({ env: process.env }).mode })) } catch (e) { console.log(JSON.stringify({ error: e.code })) } })`

function load(home: string, asNobody: boolean): unknown {
  const argv = [process.execPath, '-e', LOAD]
  const full = asNobody ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...argv] : argv
  const r = spawnSync(full[0] as string, full.slice(1), {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: home },
    timeout: 30_000,
  })
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null')
}

describe.skipIf(process.geteuid?.() !== 0)('a user config in a home this user may not search', () => {
  it('is no config of uid 65534; root, whose home it is, reads it; an unreadable own config is an error', () => {
    const home = scratchDir('cordon-other-home')
    fs.mkdirSync(path.join(home, '.config', 'cordon'), { recursive: true })
    fs.writeFileSync(path.join(home, '.config', 'cordon', 'config.json'), '{ "mode": "workspace-write" }')
    fs.chmodSync(home, 0o700)
    expect(load(home, false)).toEqual({ mode: 'workspace-write' })
    expect(load(home, true)).toEqual({ mode: 'read-only' })
    // Its own home, its own config it may not open: refused, not skipped.
    fs.chownSync(home, NOBODY, NOBODY)
    fs.chmodSync(path.join(home, '.config', 'cordon', 'config.json'), 0o000)
    fs.chownSync(path.join(home, '.config'), NOBODY, NOBODY)
    fs.chownSync(path.join(home, '.config', 'cordon'), NOBODY, NOBODY)
    expect(load(home, true)).toEqual({ error: 'CONFIG_INVALID' })
  })
})
