// `cordon run` forwards a stdin that is not a terminal (a pipe or a file) to the confined command,
// as the command reads it: real shell pipes and redirections through bin/cordon.js (over dist/,
// so `npm run build:ts` must have run), on each backend, as root and as uid 65534. Each check has
// its control: the same pipeline into the command unconfined. The executor's own stream option is
// checked in-process too, through a resident bubblewrap instance and the Landlock launcher.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it, type TestContext } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { needBackend } from '../../support/sandbox/backends.js'

const bin = path.join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const NOBODY = 65534
// In /var/tmp: uid 65534 must reach it, and a workspace root never lies in the host /tmp.
const base = fs.realpathSync(fs.mkdtempSync('/var/tmp/cordon-stdin-'))
fs.chmodSync(base, 0o755)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

let serial = 0
/** A fresh workspace (and a private dir and HOME) that `uid` owns. */
function workspace(uid: number): { root: string; env: NodeJS.ProcessEnv } {
  const dir = path.join(base, `${++serial}-${uid}`)
  const root = path.join(dir, 'root')
  const home = path.join(dir, 'home')
  for (const d of [dir, root, home]) {
    fs.mkdirSync(d, { mode: 0o755 })
    fs.chownSync(d, uid, uid)
  }
  return { root, env: { PATH: process.env.PATH, HOME: home, CORDON_PRIVATE_DIR: path.join(dir, 'private') } }
}

/** Runs the bash `script` as `uid` in `root`; `$CORDON` in it is `cordon run` with `flags`. */
function pipeline(uid: number, ws: { root: string; env: NodeJS.ProcessEnv }, flags: string[], script: string) {
  const cordon = [process.execPath, bin, 'run', ...flags].map((w) => `'${w}'`).join(' ')
  const argv = ['bash', '-c', `CORDON=(${cordon}); ${script.replaceAll('$CORDON', '"${CORDON[@]}"')}`]
  const full = uid === 0 ? argv : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...argv]
  const r = spawnSync(full[0] as string, full.slice(1), {
    cwd: ws.root,
    env: ws.env,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const hasSqlite = spawnSync('sqlite3', ['-version']).status === 0

describe.concurrent('cordon run forwards a stdin that is not a terminal', () => {
  for (const backend of ['landlock', 'bubblewrap'] as const) {
    for (const uid of [0, NOBODY]) {
      const who = uid === 0 ? 'root' : 'uid 65534'
      const need = async (ctx: TestContext) => {
        if (uid !== 0 && process.getuid?.() !== 0) ctx.skip('needs root to drop to uid 65534 with setpriv')
        await needBackend(ctx, backend)
      }
      const flags = ['--backend', backend, '--mode', 'workspace-write']

      it(`${backend} as ${who}: a pipe reaches the command, EOF included (control: unconfined)`, async (ctx) => {
        await need(ctx)
        const ws = workspace(uid)
        const script = `printf 'a\\nb\\n' | $RUN wc -l; printf x | $RUN bash -c 'cat; echo " eof"'`
        const control = pipeline(uid, ws, [], script.replaceAll('$RUN', ''))
        expect(control.stdout).toBe('2\nx eof\n')
        const r = pipeline(uid, ws, flags, script.replaceAll('$RUN', '$CORDON --'))
        expect(r.stderr).not.toMatch(/unavailable/i)
        expect(r.stdout).toBe(control.stdout)
      })

      it(`${backend} as ${who}: sqlite3 runs a script redirected from a file`, async (ctx) => {
        await need(ctx)
        if (!hasSqlite) ctx.skip('sqlite3 is not installed')
        const ws = workspace(uid)
        fs.writeFileSync(
          path.join(ws.root, 'script.sql'),
          'create table t(x); insert into t values (1), (2), (3);\nselect count(*) from t;\n',
        )
        const script = `$RUN sqlite3 $DB < script.sql; echo "exit $?"`
        const control = pipeline(uid, ws, [], script.replaceAll('$RUN ', '').replaceAll('$DB', 'control.db'))
        expect(control.stdout).toBe('3\nexit 0\n')
        const r = pipeline(uid, ws, flags, script.replaceAll('$RUN', '$CORDON --').replaceAll('$DB', 'confined.db'))
        expect(r.stdout).toBe(control.stdout)
        expect(fs.existsSync(path.join(ws.root, 'confined.db'))).toBe(true)
      })

      it(`${backend} as ${who}: a command that stops reading, or never reads, ends the run`, async (ctx) => {
        await need(ctx)
        const ws = workspace(uid)
        // `yes` never ends: the run must end with the command, and then yes with EPIPE.
        const script = `yes | $RUN head -n 2; yes | $RUN true; echo "exit $?"`
        const control = pipeline(uid, ws, [], script.replaceAll('$RUN ', ''))
        const started = Date.now()
        const r = pipeline(uid, ws, flags, script.replaceAll('$RUN', '$CORDON --'))
        expect(r.stdout).toBe(control.stdout)
        expect(r.stdout).toBe('y\ny\nexit 0\n')
        expect(Date.now() - started).toBeLessThan(30_000)
      })
    }

    it(`${backend}: 256 MB stream through without being held (cordon's peak RSS stays far below)`, async (ctx) => {
      await needBackend(ctx, backend)
      const ws = workspace(0)
      const size = 256 * 1024 * 1024
      const r = pipeline(
        0,
        ws,
        ['--backend', backend],
        `head -c ${size} /dev/zero | /usr/bin/time -f 'maxrss %M' $CORDON -- sh -c 'sleep 0.5; wc -c'`,
      )
      expect(r.stdout.trim()).toBe(String(size))
      const kb = Number(/maxrss (\d+)/.exec(r.stderr)?.[1])
      expect(kb * 1024).toBeLessThan(size / 2)
    })
  }

  it('a terminal stdin stays cordon’s: the command reads /dev/null, as before', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const ws = workspace(0)
    // script(1) gives cordon a terminal on stdin.
    const r = pipeline(0, ws, [], `script -qec "$(printf '%q ' $CORDON) -- readlink /proc/self/fd/0" /dev/null`)
    expect(r.stdout.trim()).toBe('/dev/null')
  })
})

describe.concurrent('the executor feeds a stdin stream (options.stdin)', () => {
  const runs = [
    ['bubblewrap', true],
    ['bubblewrap', false],
    ['landlock', true],
  ] as const
  for (const [backend, resident] of runs) {
    it(`${backend}${resident ? ' (resident instances)' : ' (a bwrap per run)'}: every byte, then EOF`, async (ctx) => {
      await needBackend(ctx, backend)
      const ws = workspace(0)
      const sandbox = await LocalSandbox.create({ backends: [backend], residentInstances: resident })
      const executor = new LocalShellExecutor({ cwd: ws.root, sandbox })
      try {
        const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(64 * 1024, 97 + (i % 26)))
        const expected = execFileSync('sha256sum', { input: Buffer.concat(chunks) }).toString()
        const first = await executor.run(executor.resolve({ command: 'sha256sum; echo eof' }), {
          stdin: Readable.from(chunks),
        })
        expect(first.exitCode).toBe(0)
        expect(first.stdout.text).toBe(`${expected}eof\n`)
        // A stream that never ends: the run ends with its command all the same.
        const endless = new Readable({ read() {} })
        endless.push('abcdef')
        const second = await executor.run(executor.resolve({ command: 'head -c 3; echo' }), { stdin: endless })
        expect(second.exitCode).toBe(0)
        expect(second.stdout.text).toBe('abc\n')
        endless.destroy()
        await expect(
          executor.run(executor.resolve({ command: 'true', stdin: 'x' }), { stdin: Readable.from(['y']) }),
        ).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
      } finally {
        await executor.dispose()
        await sandbox.dispose()
      }
    })
  }
})
