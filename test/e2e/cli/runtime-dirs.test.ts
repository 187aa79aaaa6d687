// tmux and screen confined: their sockets go in the session's runtime dir (XDG_RUNTIME_DIR,
// TMUX_TMPDIR, SCREENDIR inside its TMPDIR), since the host's /tmp and /run/screen are not
// writable to a confined command. Through bin/cordon.js (over dist/: `npm run build:ts` first).
// What the workload corpus cannot pin (it runs uid 65534 on the default chain only) is here:
// screen as uid 65534 under bubblewrap, and a caller's own TMUX_TMPDIR inside the root.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, type TestContext } from 'vitest'
import { needBackend } from '../../support/sandbox/backends.js'

const bin = path.join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const NOBODY = 65534
const base = fs.realpathSync(fs.mkdtempSync('/var/tmp/cordon-runtime-'))
fs.chmodSync(base, 0o755)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0

let serial = 0
/** Runs `bash -c script` as `uid`, through `cordon run` with `flags` (none: unconfined), in a fresh root. */
function run(uid: number, flags: string[] | undefined, script: string, extraEnv: NodeJS.ProcessEnv = {}) {
  const dir = path.join(base, `${++serial}`)
  const root = path.join(dir, 'root')
  for (const d of [dir, root, path.join(dir, 'home')]) {
    fs.mkdirSync(d, { mode: 0o755 })
    fs.chownSync(d, uid, uid)
  }
  const argv =
    flags === undefined ? ['bash', '-c', script] : [process.execPath, bin, 'run', ...flags, '--', 'bash', '-c', script]
  const full = uid === 0 ? argv : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...argv]
  const r = spawnSync(full[0] as string, full.slice(1), {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH,
      HOME: path.join(dir, 'home'),
      CORDON_PRIVATE_DIR: path.join(dir, 'private'),
      ...extraEnv,
    },
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, root }
}

const needs = async (ctx: TestContext, backend: 'landlock' | 'bubblewrap', tool: string, uid = 0) => {
  if (uid !== 0 && process.getuid?.() !== 0) ctx.skip('needs root to drop to uid 65534 with setpriv')
  if (!has(tool)) ctx.skip(`${tool} is not installed`)
  await needBackend(ctx, backend)
}

describe.concurrent('per-user runtime dirs in the session', () => {
  for (const backend of ['landlock', 'bubblewrap'] as const) {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      it(`${backend} ${mode}: the runtime dir is the command's own, 0700, inside TMPDIR`, async (ctx) => {
        await needs(ctx, backend, 'stat', NOBODY)
        for (const uid of [0, NOBODY]) {
          const r = run(
            uid,
            ['--backend', backend, '--mode', mode],
            'case "$XDG_RUNTIME_DIR" in "$TMPDIR"/*) ;; *) exit 9;; esac; [ "$TMUX_TMPDIR" = "$XDG_RUNTIME_DIR" ] && [ "$SCREENDIR" = "$XDG_RUNTIME_DIR/screen" ] && stat -c "%a %u" "$XDG_RUNTIME_DIR"',
          )
          expect(r.stdout.trim(), r.stderr).toBe(`700 ${uid}`)
        }
      })
    }
  }

  it('bubblewrap as uid 65534: screen runs a detached session (control: unconfined)', async (ctx) => {
    await needs(ctx, 'bubblewrap', 'screen', NOBODY)
    // Unconfined, screen's dir must be given (its default /run/screen may not be there); confined, the session's.
    const script = `screen -dmS wl sleep 60 && sleep 0.5 && screen -ls wl | grep -c '\\.wl' && screen -S wl -X quit`
    const scratch = path.join(base, 'screen-control')
    fs.mkdirSync(scratch, { mode: 0o700 })
    fs.chownSync(scratch, NOBODY, NOBODY)
    const control = run(NOBODY, undefined, script, { SCREENDIR: path.join(scratch, 's') })
    expect(control.stdout).toBe('1\n')
    const r = run(NOBODY, ['--backend', 'bubblewrap', '--mode', 'workspace-write'], script)
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe(control.stdout)
  })

  it('a TMUX_TMPDIR the caller set in a writable root is the one tmux uses; elsewhere, the session’s', async (ctx) => {
    await needs(ctx, 'bubblewrap', 'tmux')
    const script =
      'tmux -L own -f /dev/null start-server \\; set -g exit-empty off && ls "$TMUX_TMPDIR/tmux-$(id -u)" && tmux -L own kill-server && echo "at $TMUX_TMPDIR"'
    const dir = path.join(base, 'own-tmux')
    fs.mkdirSync(dir, { mode: 0o700 })
    const flags = ['--backend', 'bubblewrap', '--mode', 'workspace-write']
    const kept = run(0, [...flags, '--writable', dir], script, { TMUX_TMPDIR: dir })
    expect(kept.stdout, kept.stderr).toBe(`own\nat ${dir}\n`)
    expect(fs.readdirSync(dir)).toEqual(['tmux-0'])
    fs.rmSync(path.join(dir, 'tmux-0'), { recursive: true })
    // Not writable to the command: the session's runtime dir instead, and the caller's dir untouched.
    const replaced = run(0, flags, script, { TMUX_TMPDIR: dir })
    expect(replaced.stdout).toMatch(/^own\nat \/.*\/sessions\/[^/]+\/m\/t\/\.run\n$/)
    expect(fs.readdirSync(dir)).toEqual([])
  })
})
