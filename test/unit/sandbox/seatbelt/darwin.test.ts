// Needs macOS: the rendered profiles under the real /usr/bin/sandbox-exec, one attack per rule,
// each with the allowed counterpart that proves the command really ran. Skipped elsewhere (the
// golden, structural and property tests cover the profiles on every platform).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import type { SandboxExecutionPolicy } from '../../../../src/policy/vocabulary.js'
import { renderSeatbeltProfile } from '../../../../src/sandbox/seatbelt/profile.js'
import { seatbeltLaunchArgv } from '../../../../src/sandbox/seatbelt/launch.js'
import { scratchDir } from '../../../support/scratch.js'

const EPERM = /Operation not permitted/

let base: string
let root: string
let temp: string

function run(policy: Partial<SandboxExecutionPolicy>, script: string) {
  const full = { mode: 'workspace-write' as const, workspaceRoot: root, ...policy }
  const grants = grantsFor(full, { tempDir: temp })
  const { profile } = renderSeatbeltProfile(grants, { tempDir: temp })
  const [exe, ...args] = seatbeltLaunchArgv({ profile, command: ['/bin/bash', '-c', script, 'cordon-test', base] })
  const r = spawnSync(exe!, args, { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' }, timeout: 10_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

function policyWithProtection(): Partial<SandboxExecutionPolicy> {
  return {
    protectedPaths: [path.join(root, '.git', 'hooks'), path.join(root, '.git', 'config')],
    hiddenPaths: [path.join(base, 'secret'), path.join(root, '.env')],
  }
}

describe.skipIf(process.platform !== 'darwin')('Seatbelt on macOS (needs macOS; skipped elsewhere)', () => {
  beforeAll(() => {
    base = scratchDir('cordon-seatbelt-mac')
    root = path.join(base, 'root')
    temp = path.join(base, 'tmp')
    fs.mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true })
    fs.mkdirSync(temp)
    fs.writeFileSync(path.join(root, '.git', 'config'), '[core]\n')
    fs.writeFileSync(path.join(base, 'secret'), 'top secret\n')
    fs.writeFileSync(path.join(root, '.env'), 'TOKEN=1\n')
  })

  it('workspace-write: writes inside the root and the temp dir, refused beside them with EPERM', () => {
    const r = run({}, 'echo ok > "$1/root/a" && echo ok > "$1/tmp/b" && echo no > "$1/outside"')
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(EPERM)
    expect(fs.existsSync(path.join(root, 'a'))).toBe(true)
    expect(fs.existsSync(path.join(temp, 'b'))).toBe(true)
    expect(fs.existsSync(path.join(base, 'outside'))).toBe(false)
  })

  it('read-only: nothing but the temp dir is writable', () => {
    const r = run({ mode: 'read-only' }, 'echo ok > "$1/tmp/ro" && echo no > "$1/root/ro"')
    expect(r.stderr).toMatch(EPERM)
    expect(fs.existsSync(path.join(temp, 'ro'))).toBe(true)
    expect(fs.existsSync(path.join(root, 'ro'))).toBe(false)
  })

  it('protected paths: not writable, not creatable, and their ancestors cannot be renamed or removed', () => {
    const p = policyWithProtection()
    expect(run(p, 'echo x > "$1/root/.git/hooks/pre-commit"').stderr).toMatch(EPERM)
    expect(run(p, 'echo x >> "$1/root/.git/config"').stderr).toMatch(EPERM)
    expect(run(p, 'mv "$1/root/.git" "$1/root/moved"').status).not.toBe(0)
    expect(run(p, 'rm -rf "$1/root/.git"').status).not.toBe(0)
    expect(run(p, 'mv "$1/root" "$1/tmp/root"').status).not.toBe(0)
    expect(fs.existsSync(path.join(root, '.git', 'hooks'))).toBe(true)
    expect(fs.existsSync(path.join(root, '.git', 'hooks', 'pre-commit'))).toBe(false)
    expect(fs.readFileSync(path.join(root, '.git', 'config'), 'utf8')).toBe('[core]\n')
    expect(run(p, 'echo ok > "$1/root/.git/index.lock"').status).toBe(0) // the rest of .git stays writable
  })

  it('hidden paths: not readable, not copyable, not linkable, not renamable', () => {
    const p = policyWithProtection()
    const r = run(p, 'cat "$1/secret"; cat "$1/root/.env"; cp "$1/secret" "$1/root/c"; ln "$1/root/.env" "$1/root/l"')
    expect(r.stdout).not.toMatch(/top secret|TOKEN/)
    expect(run(p, 'mv "$1/root/.env" "$1/root/env"').status).not.toBe(0)
    expect(run(p, 'ln -s "$1/secret" "$1/root/s" && cat "$1/root/s"').stdout).not.toMatch(/top secret/)
    expect(fs.existsSync(path.join(root, 'c'))).toBe(false)
    expect(fs.existsSync(path.join(root, 'l'))).toBe(false)
  })

  it('hard links from outside the roots are refused (the outside file would become writable)', () => {
    const r = run({}, 'ln "$1/secret" "$1/root/hl"')
    expect(r.status).not.toBe(0)
    expect(fs.existsSync(path.join(root, 'hl'))).toBe(false)
  })

  describe('network: deny', () => {
    let server: net.Server
    let port = 0
    beforeAll(async () => {
      server = net.createServer((s) => s.end('hello\n'))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      port = (server.address() as net.AddressInfo).port
    })
    afterAll(() => server?.close())

    it('refuses loopback too; inherit reaches it', () => {
      const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`
      expect(run({ network: 'deny' }, script).stdout).not.toMatch(/hello/)
      expect(run({ network: 'inherit' }, script).stdout).toMatch(/hello/)
    })
  })

  it('signals reach only processes of the same sandbox', () => {
    const r = run({}, `kill -0 ${process.pid}`)
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(EPERM)
    expect(run({}, 'sleep 5 & kill $!').status).toBe(0)
  })
})
