// A workspace-write run cannot widen the next run by changing the project config: it rewrites
// `.cordon.json` wider, removes it, replaces it by rename, and replaces it by a symlink. Under
// bubblewrap the write itself fails (the file is protected) and the next run reads it unchanged;
// under Landlock the write lands and the next load refuses (CONFIG_WIDENED, or CONFIG_INVALID for
// the link), so nothing runs wider. The control: a narrowing edit IS read by the next run (its
// write is then refused). Through the built CLI, as root and as uid 65534.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../../src/policy/backends.js'
import { NOBODY } from '../../../escape/host/run-as.js'
import { needBackend } from '../../../support/sandbox/backends.js'
import { scratchDir } from '../../../support/scratch.js'

const bin = path.join(import.meta.dirname, '..', '..', '..', '..', 'bin', 'cordon.js')
const isRoot = process.getuid?.() === 0
const NARROW = '{"network": "deny", "limits": {"fileSizeBytes": 1048576}}\n'
const WIDER = '{}\n'

/** A home with a user config allowing workspace-write, a workspace with a narrowing project config, both `user`'s. */
function setup(user: 'root' | 'nobody', backend: SandboxBackendName) {
  const base = scratchDir(`cordon-config-attack-${backend}`)
  const home = path.join(base, 'home')
  const ws = path.join(base, 'ws')
  fs.mkdirSync(path.join(home, '.config', 'cordon'), { recursive: true })
  fs.mkdirSync(ws)
  fs.writeFileSync(path.join(home, '.config', 'cordon', 'config.json'), '{"mode": "workspace-write"}\n')
  const uid = user === 'root' ? 0 : NOBODY
  const own = (p: string) => fs.chownSync(p, uid, uid)
  for (const d of [base, home, path.join(home, '.config'), path.join(home, '.config', 'cordon'), ws]) own(d)
  const projectFile = path.join(ws, '.cordon.json')
  /** The person writes the project config (as the workspace's owner). */
  const put = (text: string) => {
    fs.rmSync(projectFile, { force: true })
    fs.writeFileSync(projectFile, text)
    own(projectFile)
  }
  put(NARROW)
  const cordon = (...args: string[]) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home }
    const node = [process.execPath, bin, args[0] as string, '--backend', backend, ...args.slice(1)]
    const argv =
      user === 'root' ? node : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...node]
    const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: ws, env, encoding: 'utf8', timeout: 60_000 })
    return { status: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  return { ws, projectFile, put, cordon }
}

/** What each attack runs inside the sandbox. */
const ATTACKS = {
  rewrite: `printf '${WIDER}' > .cordon.json`,
  remove: 'rm .cordon.json',
  rename: `printf '${WIDER}' > new.json && mv new.json .cordon.json`,
  symlink: `printf '${NARROW}' > t.json && rm .cordon.json && ln -s t.json .cordon.json`,
} as const

const CASES = (['landlock', 'bubblewrap'] as const).flatMap((backend) =>
  (['root', 'nobody'] as const).map((user) => [backend, user] as const),
)

describe.each(CASES)('a run changing .cordon.json [%s, as %s]', (backend, user) => {
  it('cannot widen the next run: refused at the write (bubblewrap) or at the next load (Landlock)', async (ctx) => {
    await needBackend(ctx, backend)
    if (!fs.existsSync(path.join(path.dirname(bin), '..', 'dist')))
      throw new Error('dist/ is not built (npm run build:ts)')
    if (user === 'nobody' && !isRoot) ctx.skip('only a root host can run the CLI as uid 65534')
    const s = setup(user, backend)
    expect(s.cordon('run', '--', 'true')).toMatchObject({ status: 0 }) // the first load records it
    for (const [name, script] of Object.entries(ATTACKS)) {
      const attack = s.cordon('run', '--', 'sh', '-c', script)
      const next = s.cordon('run', '--json', '--', 'touch', `ran-${name}`)
      const ran = fs.existsSync(path.join(s.ws, `ran-${name}`))
      if (backend === 'bubblewrap') {
        // Protected: the change fails, the file is as it was, and the next run reads it as before.
        expect(attack.status, `${name}: ${attack.stderr}`).not.toBe(0)
        expect(fs.lstatSync(s.projectFile).isFile(), name).toBe(true)
        expect(fs.readFileSync(s.projectFile, 'utf8'), name).toBe(NARROW)
        expect(next.status, `${name}: ${next.stdout}`).toBe(0)
        expect(ran, name).toBe(true)
      } else {
        // Landlock cannot hold the file read-only: the change lands, and the next load refuses it.
        expect(attack.status, `${name}: ${attack.stderr}`).toBe(0)
        expect(next.status, name).toBe(125)
        const code = name === 'symlink' ? 'CONFIG_INVALID' : 'CONFIG_WIDENED'
        expect(JSON.parse(next.stdout), name).toMatchObject({ error: { code } })
        expect(JSON.parse(next.stdout).error.message, name).toContain(s.projectFile)
        expect(ran, `${name}: nothing runs wider`).toBe(false)
      }
      s.put(NARROW) // the person restores it (the same bytes: the record's digest)
      expect(s.cordon('run', '--', 'true').status, `${name}: restored`).toBe(0)
    }
  })

  it('control: a narrowing edit is read by the next run', async (ctx) => {
    await needBackend(ctx, backend)
    if (user === 'nobody' && !isRoot) ctx.skip('only a root host can run the CLI as uid 65534')
    const s = setup(user, backend)
    expect(s.cordon('run', '--', 'true').status).toBe(0)
    const narrower = `{"mode": "read-only", "network": "deny", "limits": {"fileSizeBytes": 1048576}}`
    // Under bubblewrap the run cannot write it, so the person makes the edit; under Landlock the run does.
    if (backend === 'bubblewrap') s.put(narrower)
    else expect(s.cordon('run', '--', 'sh', '-c', `printf '%s' '${narrower}' > .cordon.json`).status).toBe(0)
    const next = s.cordon('run', '--', 'touch', 'written')
    expect(next.status, next.stderr).not.toBe(0)
    expect(next.stderr).toMatch(/under read-only mode/)
    expect(fs.existsSync(path.join(s.ws, 'written'))).toBe(false)
    // And the explanation says where the mode came from.
    expect(s.cordon('explain').stdout).toContain(`mode: read-only (from ${s.projectFile})`)
  })
})
