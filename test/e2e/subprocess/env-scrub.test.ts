// The credential scrub seen from a real child: secrets planted in the host environment (by name and
// by value shape) do not reach a spawned or confined command, while commit identity, the shell's
// directories and the caller's explicit entries do. Control: the same child spawned with the raw
// host environment sees every planted secret, so the host really held them.
import { spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessEnvironmentMode, SubprocessSpawnSpec } from '../../../src/subprocess/types.js'
import { describeWithBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

// Values are assembled here so no literal in the repository reads as a live token.
const tail = 'Q4sT6vW8yZ0cF1aB3dE5gH7jK9mN2p'.repeat(2)
const planted: Record<string, string> = {
  CORDON_T_DATABASE_URL: `postgres://app:pw-${tail.slice(0, 8)}@db.internal:5432/app`,
  CORDON_T_HTTPS_PROXY: 'http://alice:proxy-pw@proxy.corp:3128',
  CORDON_T_MYSQL_PWD: 'mysql-pw',
  CORDON_T_GH_PASSPHRASE: 'gpg-pp',
  CORDON_T_SENTRY_DSN: 'https://0123abcd@o1.ingest.sentry.io/42',
  CORDON_T_BW_SESSION: `bw-${tail}`,
  CORDON_T_CI_JOB_JWT: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${tail.slice(0, 43)}`,
  CORDON_T_COOKIE: 'sid=cookie-value',
  CORDON_T_AUTH: 'auth-value',
  CORDON_T_API_KEY: 'api-key-value',
  CORDON_T_SSH_AUTH_SOCK: '/tmp/ssh-cordon/agent.1',
  CORDON_T_GIT_ASKPASS: '/usr/lib/code/askpass.sh',
  CORDON_T_PLAIN_GH: `ghp_${tail.slice(0, 36)}`,
  CORDON_T_PLAIN_SK: `sk-proj-${tail.slice(0, 40)}`,
  CORDON_T_PLAIN_AWS: 'AKIAIOSFODNN7EXAMPLE',
  CORDON_T_PLAIN_PEM: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----',
}
// Each planted name keeps its real tokens after CORDON_T_, so it exercises its real rule; the
// survivors use their real names (the session exemptions are by exact name).
const survivors: Record<string, string> = {
  GIT_AUTHOR_NAME: 'A U Thor',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'C O Mitter',
  GIT_COMMITTER_EMAIL: 'committer@example.com',
  TOKENIZERS_PARALLELISM: 'false',
  KEYMAP: 'us',
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
  XDG_SESSION_TYPE: 'tty',
  OLDPWD: '/work',
  CORDON_T_PLAIN_URL: 'postgres://localhost:5432/app',
  // A value that cannot be a secret survives under a credential name (corepack's switch).
  COREPACK_INTEGRITY_KEYS: '0',
  CORDON_T_FEATURE_TOKEN: 'On',
  CORDON_T_EMPTY_PASSWORD: '',
}
const explicit = { CORDON_T_FORWARDED_TOKEN: 'opt-in', DSH_SESSION_ID: 's1' }
const saved: Record<string, string | undefined> = {}

beforeAll(() => {
  for (const [name, value] of Object.entries({ ...planted, ...survivors })) {
    saved[name] = process.env[name]
    process.env[name] = value
  }
})
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

/** The child's environment as a map, read back from `env -0`. */
function parseEnv(stdout: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const entry of stdout.split('\0')) {
    const eq = entry.indexOf('=')
    if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1))
  }
  return out
}

function spec(cwd: string, environment?: SubprocessEnvironmentMode): SubprocessSpawnSpec {
  return {
    argv: ['/usr/bin/env', '-0'],
    cwd,
    graceMs: 2000,
    stdio: { stdin: 'ignore', stdout: { maxBytes: 1 << 20 }, stderr: { maxBytes: 1 << 16 } },
    env: explicit,
    ...(environment === undefined ? {} : { environment }),
  }
}

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-env') })
afterAll(() => runtime.dispose())

async function childEnv(s: SubprocessSpawnSpec): Promise<{ env: Map<string, string>; raw: string }> {
  const h = runtime.spawn(s)
  expect(await h.done).toEqual({ exitCode: 0, signal: null })
  const raw = h.collected.stdout?.readFrom(0).text ?? ''
  return { env: parseEnv(raw), raw }
}

function expectScrubbed(env: Map<string, string>, raw: string): void {
  for (const [name, value] of Object.entries(planted)) {
    expect(env.has(name), name).toBe(false)
    expect(raw.includes(value), `value of ${name}`).toBe(false)
  }
  for (const [name, value] of Object.entries({ ...survivors, ...explicit })) expect(env.get(name), name).toBe(value)
}

describe('a spawned child', () => {
  it('control: with the raw host environment it sees every planted secret', async () => {
    // A plain child_process child gets the host environment unscrubbed.
    const r = spawnSync(spec('/').argv[0]!, spec('/').argv.slice(1), { encoding: 'utf8' })
    const env = parseEnv(r.stdout)
    for (const [name, value] of Object.entries(planted)) expect(env.get(name), name).toBe(value)
  })

  it('does not see the secrets; commit identity, look-alikes and explicit entries survive', async () => {
    const { env, raw } = await childEnv(spec('/'))
    expectScrubbed(env, raw)
    expect(env.get('PATH')).toBe(process.env.PATH)
  })

  it('minimal mode: only the allow-list, LC_* and the explicit entries', async () => {
    const { env } = await childEnv(spec('/', 'minimal'))
    const allowed = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'TZ', 'TERM', 'TMPDIR'])
    for (const name of env.keys()) {
      expect(allowed.has(name) || name.startsWith('LC_') || Object.hasOwn(explicit, name), name).toBe(true)
    }
    for (const [name, value] of Object.entries(explicit)) expect(env.get(name)).toBe(value)
    expect(env.get('PATH')).toBe(process.env.PATH)
  })

  it('rejects an unknown environment mode before spawning', () => {
    expect(() => runtime.spawn({ ...spec('/'), environment: 'none' as never })).toThrow(/environment/)
  })
})

for (const backend of ['landlock', 'bubblewrap'] as const) {
  await describeWithBackend(backend, 'a confined child', (sandbox) => {
    it('does not see the secrets either (the scrub is the runtime’s, under every backend)', async () => {
      const root = scratchDir('cordon-env-root')
      const mode = backend === 'landlock' ? 'read-only' : 'workspace-write'
      const confined = sandbox().confine(spec(root), { mode, workspaceRoot: root })
      expect(confined.backend).toBe(backend)
      const { env, raw } = await childEnv(confined.spec)
      expectScrubbed(env, raw)
    })

    it('a failed run names what the scrub removed (names only, cordon’s own CORDON_* left out); a run that succeeds names none', async () => {
      const root = scratchDir('cordon-env-removed')
      const value = `deploy-${tail.slice(0, 12)}`
      process.env.E2E_DEPLOY_API_KEY = value
      const executor = new LocalShellExecutor({ cwd: root, sandbox: sandbox() })
      try {
        const failed = await executor.run(executor.resolve({ command: 'test -n "$E2E_DEPLOY_API_KEY"' }))
        expect(failed.exitCode).toBe(1)
        // The host's own credentials (a CI token) may be named too; the planted CORDON_T_* never are.
        const removed = failed.sandbox?.removedEnv ?? []
        expect(removed).toContain('E2E_DEPLOY_API_KEY')
        expect(removed.filter((n) => n.startsWith('CORDON_'))).toEqual([])
        expect(removed).not.toContain('COREPACK_INTEGRITY_KEYS')
        expect(JSON.stringify(failed)).not.toContain(value)
        const passed = await executor.run(executor.resolve({ command: 'true' }))
        expect(passed.exitCode).toBe(0)
        expect(passed.sandbox?.removedEnv).toBeUndefined()
      } finally {
        delete process.env.E2E_DEPLOY_API_KEY
        await executor.dispose()
      }
    })
  })
}
