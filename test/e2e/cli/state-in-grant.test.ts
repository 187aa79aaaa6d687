// `cordon run --writable ~/.cache` (issue 21): the CLI keeps its probe verdict in ~/.cache/cordon,
// so that grant is refused with STATE_IN_GRANT (exit 125) and the cached verdict is not touched,
// as root and as uid 65534. The control: the same plant, unconfined, rewrites the file.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { NOBODY } from '../../escape/host/run-as.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const bin = path.join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const isRoot = process.getuid?.() === 0

/** Runs the built CLI as `user` in `ws`, with `home` as its HOME and no other private-dir hint. */
function cordonAs(user: 'root' | 'nobody', home: string, ws: string, args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home }
  delete env.XDG_RUNTIME_DIR
  delete env.CORDON_PRIVATE_DIR
  delete env.XDG_CONFIG_HOME
  const node = [process.execPath, bin, ...args]
  const argv =
    user === 'root' ? node : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...node]
  const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: ws, env, encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe.each(['root', 'nobody'] as const)('cordon run --writable ~/.cache, as %s', (user) => {
  it('is refused with STATE_IN_GRANT and the cached verdict is unchanged; unconfined, the plant works', async (ctx) => {
    await needBackend(ctx, 'landlock')
    if (!fs.existsSync(path.join(path.dirname(bin), '..', 'dist')))
      throw new Error('dist/ is not built (npm run build:ts)')
    if (user === 'nobody' && !isRoot) ctx.skip('only a root host can run the CLI as uid 65534')
    const base = scratchDir('cordon-cli-state')
    const home = path.join(base, 'home')
    const ws = path.join(base, 'ws')
    fs.mkdirSync(path.join(home, '.cache'), { recursive: true })
    fs.mkdirSync(ws)
    if (user === 'nobody') for (const d of [base, home, path.join(home, '.cache'), ws]) fs.chownSync(d, NOBODY, NOBODY)
    const uid = user === 'root' ? 0 : NOBODY
    const cache = path.join(home, '.cache', 'cordon', `probe-${uid}.json`)
    // A first run leaves the CLI's verdict in ~/.cache/cordon.
    const first = cordonAs(user, home, ws, ['run', '--', 'true'])
    expect(first.status, first.stderr).toBe(0)
    const before = fs.readFileSync(cache, 'utf8')
    const plant = ['sh', '-c', `echo forged > ${cache}`]
    const attack = cordonAs(user, home, ws, [
      'run',
      '--json',
      '--mode',
      'workspace-write',
      '--writable',
      path.join(home, '.cache'),
      '--',
      ...plant,
    ])
    expect(attack.status, attack.stdout + attack.stderr).toBe(125)
    expect(JSON.parse(attack.stdout)).toMatchObject({ error: { code: 'STATE_IN_GRANT' } })
    expect(fs.readFileSync(cache, 'utf8')).toBe(before)
    // Control: the very same plant without confinement rewrites the verdict.
    const control = cordonAs(user, home, ws, ['run', '--mode', 'danger-full-access', '--', ...plant])
    expect(control.status, control.stderr).toBe(0)
    expect(fs.readFileSync(cache, 'utf8')).toBe('forged\n')
  })
})
