// Attacks on hidden files whose permissions shut the command's user out (an ACL that lets it in,
// a host chmod during a run or between two plans of a long-lived sandbox), on an inherited host
// terminal (TIOCSCTTY, then reading /dev/tty; TIOCSCTTY is allowed under bubblewrap for the run's
// own ptys), and on a policy whose getter answers the hand check one way and the plan another,
// each with its control: the same attack unconfined, which shows the effect. Hosts:
// permissions-hosts.ts. (A red-team pass of 2026-12-01 found the three hidden-file breaks
// in an optimisation that laid no mount where mode bits denied the read; it was reverted.)
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it, type TestContext } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDirAs } from '../../support/scratch.js'
import type { AttackUser } from '../attacks/attack.js'
import { NOBODY, nodeArgvAs, REPO, runScriptAs } from '../host/run-as.js'

const HOSTS = path.join(REPO, 'test/escape/hidden/permissions-hosts.ts')
const CLI = path.join(REPO, 'bin/cordon.js')
const SECRET = 'TOPSECRET-hidden'

const asUser = (user: AttackUser, argv: string[]) =>
  user === 'root' ? argv : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...argv]

/** A base owned by `user` with a workspace, and a root-owned secret file (mode 0600) in a dir of its own. */
function layout(user: AttackUser, label: string) {
  const base = scratchDirAs(user, `cordon-hiddenperm-${label}`)
  fs.chmodSync(base, 0o755)
  const root = path.join(base, 'ws')
  fs.mkdirSync(root)
  const secrets = path.join(base, 'secrets')
  fs.mkdirSync(secrets, { mode: 0o755 })
  fs.chmodSync(secrets, 0o755)
  const secret = path.join(secrets, 'key')
  fs.writeFileSync(secret, `${SECRET}\n`, { mode: 0o600 })
  // Owned by a third uid, so that neither root (capabilities dropped) nor uid 65534 reads it by its mode.
  fs.chownSync(secret, 12345, 12345)
  if (user === 'nobody') fs.chownSync(root, NOBODY, NOBODY)
  return { base, root, secret }
}

/** `cordon run --backend B --hide SECRET -- bash -c SCRIPT` as `user` in `root`. */
function cordonRun(user: AttackUser, backend: string, root: string, secret: string, script: string) {
  const argv = asUser(user, [
    process.execPath,
    CLI,
    'run',
    '--backend',
    backend,
    '--hide',
    secret,
    '--',
    'bash',
    '-c',
    script,
  ])
  return spawnSync(argv[0]!, argv.slice(1), { cwd: root, encoding: 'utf8', timeout: 60_000 })
}

function unconfined(user: AttackUser, script: string) {
  const argv = asUser(user, ['bash', '-c', script])
  return spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000 })
}

const hasSetfacl = spawnSync('setfacl', ['--version']).status === 0

describe('hidden paths left unmounted because the mode bits shut the user out (read-view.ts readableBy)', () => {
  for (const user of ['root', 'nobody'] as const) {
    it(`a hidden file readable by ${user} through an ACL stays hidden under bubblewrap (control: unconfined it reads)`, async (ctx) => {
      if (!hasSetfacl) {
        // CI installs it (.ci/run): there a missing setfacl is a failure, never a skip.
        if (process.env.CORDON_REQUIRE_TOOLS) throw new Error('setfacl is required (CORDON_REQUIRE_TOOLS) but missing')
        ctx.skip('setfacl is not installed (apt-get install -y acl)')
      }
      await needBackend(ctx, 'bubblewrap')
      const { root, secret } = layout(user, `acl-${user}`)
      const who = user === 'root' ? 0 : NOBODY
      expect(spawnSync('setfacl', ['-m', `u:${who}:r`, secret]).status).toBe(0)
      expect(unconfined(user, `cat ${secret}`).stdout, 'control').toContain(SECRET)
      const r = cordonRun(user, 'bubblewrap', root, secret, `cat ${secret}`)
      expect(r.stdout, `BREAK: the hidden file's content under bubblewrap as ${user}\n${r.stderr}`).not.toContain(
        SECRET,
      )
    })
  }

  it('a hidden file the host makes readable during the run stays hidden under bubblewrap (control: unconfined it reads)', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const { root, base, secret } = layout('nobody', 'chmod')
    const flag = path.join(base, 'ws', 'first-read')
    // The command reads once (refused by the mode), says so, and reads again once the host chmodded.
    const script = `cat ${secret} 2>/dev/null; : > ${flag}; for i in $(seq 100); do [ -e ${flag}.go ] && break; sleep 0.1; done; cat ${secret}`
    const chmodWhenAsked = (): Promise<void> =>
      new Promise((resolve) => {
        const t = setInterval(() => {
          if (fs.existsSync(flag)) {
            clearInterval(t)
            fs.chmodSync(secret, 0o644)
            fs.writeFileSync(`${flag}.go`, '')
            resolve()
          }
        }, 50)
        t.unref()
      })
    const controlAsked = chmodWhenAsked()
    const control = await runArgv(asUser('nobody', ['bash', '-c', script]), root)
    await Promise.race([controlAsked, new Promise((resolve) => setTimeout(resolve, 100))])
    expect(control.stdout, 'control: unconfined, the second read shows it').toContain(SECRET)
    fs.chmodSync(secret, 0o600)
    for (const f of [flag, `${flag}.go`]) fs.rmSync(f, { force: true })
    const asked = chmodWhenAsked()
    const argv = asUser('nobody', [
      process.execPath,
      CLI,
      'run',
      '--mode',
      'workspace-write',
      '--backend',
      'bubblewrap',
      '--hide',
      secret,
      '--',
      'bash',
      '-c',
      script,
    ])
    const r = await runArgv(argv, root)
    await Promise.race([asked, new Promise((resolve) => setTimeout(resolve, 100))])
    expect(fs.existsSync(flag), `the confined command did not get to its second read\n${r.stderr}`).toBe(true)
    expect(
      r.stdout,
      `BREAK: a file hidden by --hide read under bubblewrap after a host chmod\n${r.stderr}`,
    ).not.toContain(SECRET)
  }, 120_000)

  it('a long-lived sandbox: a hidden file chmodded readable between runs stays hidden in the next run (control: the host reads it)', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const { root, base, secret } = layout('nobody', 'plans')
    const sig = path.join(base, 'signal')
    fs.mkdirSync(sig, { mode: 0o777 })
    fs.chmodSync(sig, 0o777)
    const go = path.join(sig, 'go')
    const waiting = path.join(sig, 'waiting')
    const args = {
      backend: 'bubblewrap',
      mode: 'read-only',
      root,
      file: secret,
      between: `touch ${waiting}; while [ ! -e ${go} ]; do sleep 0.05; done`,
    }
    // The host (uid 65534) says when its second run is over, then waits until the file is chmodded.
    const started = runScriptAs('nobody', HOSTS, ['plans', JSON.stringify(args)], { timeoutMs: 120_000 })
    const t = setInterval(() => {
      if (fs.existsSync(waiting)) {
        clearInterval(t)
        fs.chmodSync(secret, 0o644)
        fs.writeFileSync(go, '')
      }
    }, 50)
    const r = await started
    clearInterval(t)
    const result = JSON.parse(r.stderr.trim().split('\n').pop() ?? '{}') as Record<
      string,
      { stdout: string; stderr: string }
    >
    expect(unconfined('nobody', `cat ${secret}`).stdout, 'control').toContain(SECRET)
    expect(result.first?.stdout).not.toContain(SECRET)
    expect(result.second?.stdout).not.toContain(SECRET)
    expect(result.third?.stdout, `the third run read it: ${JSON.stringify(result)}`).not.toContain(SECRET)
  }, 150_000)
})

/** Runs argv asynchronously in `cwd` (the test keeps polling meanwhile). */
function runArgv(argv: string[], cwd: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      stdout += t
    })
    child.stderr.setEncoding('utf8').on('data', (t: string) => {
      stderr += t
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, code }))
  })
}

// A host whose stdout is a session-less pty opened write-only: the command inherits it as is.
// With TIOCSCTTY it could make it its controlling terminal, then open /dev/tty for reading and
// read what the person types. TIOCSCTTY is allowed under bubblewrap (on the run's own ptys).
const STEAL = `
import os, fcntl, termios, binascii
pid = os.fork()
if pid == 0:
    os.setsid()
    try: fcntl.ioctl(1, termios.TIOCSCTTY, 0)
    except OSError as e: os.write(1, b"SCTTY-FAIL %d\\n" % e.errno); os._exit(0)
    try: fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError as e: os.write(1, b"DEVTTY-FAIL %d\\n" % e.errno); os._exit(0)
    os.write(1, b"READY\\n")
    os.write(1, b"GOT:" + binascii.hexlify(os.read(fd, 100)) + b"\\n")
    os._exit(0)
os.waitpid(pid, 0)
`
const TYPED_HEX = Buffer.from('hunter2\n').toString('hex')

function stealThrough(user: AttackUser, backend: string, root: string): string {
  const args = JSON.stringify({ backend, mode: 'workspace-write', root, script: STEAL })
  const argv = [
    'python3',
    path.join(REPO, 'test/escape/host/tty-owner.py'),
    ...nodeArgvAs(user, HOSTS, ['inherit-stdout', args]),
  ]
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 90_000 })
  if (r.status !== 0) throw new Error(`pty owner failed: ${r.stderr}`)
  return (JSON.parse(r.stdout) as { tty: string }).tty
}

describe('a host terminal inherited as a write-only stdout', () => {
  // As root only: as uid 65534 the control's TIOCSCTTY is refused here (EPERM) already.
  for (const user of ['root'] as const) {
    const base = scratchDirAs(user, 'cordon-hiddenperm-tty')
    it(`control: unconfined as ${user}, TIOCSCTTY then /dev/tty reads what is typed`, () => {
      expect(stealThrough(user, 'none', base)).toContain(`GOT:${TYPED_HEX}`)
    }, 100_000)
    for (const backend of ['bubblewrap', 'landlock'] as const) {
      it(`as ${user} under ${backend}: the command cannot take it as its controlling terminal and read it`, async (ctx: TestContext) => {
        await needBackend(ctx, backend)
        const tty = stealThrough(user, backend, base)
        expect(tty).not.toContain('GOT:')
        expect(tty).toMatch(/SCTTY-FAIL|DEVTTY-FAIL/)
      }, 100_000)
    }
  }
})

describe('the hand-written policy check', () => {
  it('a getter that answers read-only to the check and danger-full-access afterwards never runs unconfined (control: the plain value is unconfined)', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const sandbox = await LocalSandbox.create({ backends: ['bubblewrap'] })
    const root = scratchDirAs('root', 'cordon-hiddenperm-getter')
    const spec = {
      argv: ['/bin/true'],
      cwd: root,
      graceMs: 100,
      stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    } as const
    try {
      const plain = sandbox.confine(spec, { mode: 'danger-full-access', workspaceRoot: root })
      expect(plain.spec.argv[0], 'control: danger-full-access runs the argv itself').toBe('/bin/true')
      let reads = 0
      const policy = {
        get mode() {
          reads++
          return reads <= 1 ? 'read-only' : 'danger-full-access'
        },
        workspaceRoot: root,
      } as unknown as { mode: 'read-only'; workspaceRoot: string }
      let confinedArgv0: string | undefined
      try {
        confinedArgv0 = sandbox.confine(spec, policy).spec.argv[0]
      } catch (e) {
        expect(String(e)).toMatch(/never confined|invalid|mode/)
      }
      if (confinedArgv0 !== undefined) expect(confinedArgv0).not.toBe('/bin/true')
    } finally {
      await sandbox.dispose()
    }
  })
})
