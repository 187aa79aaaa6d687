// The `cordon` CLI as a person runs it: a real child process of bin/cordon.js (over dist/).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import { needBackend, requireBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-cli')
const outside = scratchDir('cordon-cli-out')

function cordon(args: string[], cwd = root, env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', timeout: 60_000, env })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('cordon CLI', async () => {
  const usable = await requireBackend('landlock')

  it('passes the command exit status through; 0 and N', () => {
    expect(cordon(['run', '--', 'true']).status).toBe(0)
    expect(cordon(['run', '--', 'sh', '-c', 'exit 7']).status).toBe(7)
  })

  it('exits 124 on timeout and 128+N on signal N', () => {
    const t = cordon(['run', '--timeout', '200', '--', 'sleep', '30'])
    expect(t.status).toBe(124)
    expect(t.stderr).toMatch(/timed out after 200ms/)
    expect(cordon(['run', '--', 'sh', '-c', 'kill -USR1 $$']).status).toBe(128 + 10)
  })

  it('exits 125 naming an unknown option, a bad value, a missing command', () => {
    const unknown = cordon(['run', '--bogus', '--', 'true'])
    expect(unknown.status).toBe(125)
    expect(unknown.stderr).toMatch(/--bogus/)
    const badMode = cordon(['run', '--mode', 'yolo', '--', 'true'])
    expect(badMode.status).toBe(125)
    expect(badMode.stderr).toMatch(/--mode: unknown mode "yolo"/)
    expect(cordon(['run', '--timeout', 'soon', '--', 'true']).stderr).toMatch(/--timeout/)
    expect(cordon(['run']).status).toBe(125)
    expect(cordon(['frobnicate']).status).toBe(125)
  })

  it('quotes odd words exactly: spaces, quotes, $, newlines', () => {
    const words = ['a b', "it's", '"dq"', '$HOME', 'line1\nline2', '', '*']
    const r = cordon(['run', '--', 'printf', '[%s]', ...words])
    expect(r.stdout).toBe(words.map((w) => `[${w}]`).join(''))
  })

  it.skipIf(!usable)('a denial: one clear line naming the path, the mode and the flag that allows it', () => {
    const target = join(outside, 'x')
    const r = cordon(['run', '--', 'sh', '-c', `echo hi > ${target}`])
    expect(r.status).toBe(2)
    expect(r.stderr).toContain(
      `cordon: sandbox denied a write to ${target} under read-only mode; to allow it: --mode workspace-write --writable ${outside}`,
    )
    expect(existsSync(target)).toBe(false)
  })

  it.skipIf(!usable)("a denied path from the run's output is shown escaped on cordon's own line", () => {
    // The name carries an erase-line and a bidi override: printed raw they would garble the line.
    const name = 'x\x1b[2K\u202eok'
    const r = cordon(['run', '--', 'sh', '-c', `echo hi > '${join(outside, name)}'`])
    expect(r.status).toBe(2)
    const line = r.stderr.split('\n').find((l) => l.startsWith('cordon: sandbox denied'))
    expect(line).toBe(
      `cordon: sandbox denied a write to ${outside}/x\\x1b[2K\\u202eok under read-only mode; to allow it: --mode workspace-write --writable ${outside} (or --mode danger-full-access)`,
    )
    expect(existsSync(join(outside, name))).toBe(false)
  })

  it.skipIf(!usable)('--writable allows exactly that directory, and partial enforcement is said', () => {
    const target = join(outside, 'w')
    const r = cordon([
      'run',
      '--mode',
      'workspace-write',
      '--backend',
      'landlock',
      '--writable',
      outside,
      '--',
      'sh',
      '-c',
      `echo hi > ${target}`,
    ])
    expect(r.status).toBe(0)
    expect(existsSync(target)).toBe(true)
    expect(r.stderr).toMatch(/enforced only partially by landlock/)
  })

  it.skipIf(!usable)('--json prints the ShellRunResult and nothing else on stdout', () => {
    const r = cordon(['run', '--json', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'])
    expect(r.status).toBe(3)
    const result = JSON.parse(r.stdout) as Record<string, unknown>
    expect(result).toMatchObject({
      exitCode: 3,
      signal: null,
      timedOut: false,
      aborted: false,
      stdout: { text: 'out\n' },
      stderr: { text: 'err\n' },
    })
    expect(result.sandbox).toMatchObject({
      mode: 'read-only',
      denied: false,
      enforcement: 'full',
      backend: 'landlock',
    })
  })

  it('--json errors are {"error": {name, code, message}} with exit 125', () => {
    const r = cordon(['run', '--json', '--mode', 'nope', '--', 'true'])
    expect(r.status).toBe(125)
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { name: 'UsageError', code: 'CORDON_USAGE' } })
  })

  it('probe --json is parsable and names the backends', () => {
    const r = cordon(['probe', '--json'])
    expect(r.status).toBe(0)
    const caps = JSON.parse(r.stdout) as {
      chain: string[]
      backends: Record<string, { usable: boolean; probeMs: number }>
    }
    expect(caps.chain).toContain('landlock')
    expect(typeof caps.backends.landlock?.probeMs).toBe('number')
  })

  it.skipIf(!usable)('explain names backend and root and the rules, running nothing', () => {
    const r = cordon(['explain', '--mode', 'workspace-write', '--network', 'deny', '--backend', 'landlock'])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(`root ${root}`)
    expect(r.stdout).toMatch(/backend: landlock \(partial\)/)
    expect(r.stdout).toMatch(new RegExp(`allow ${root}: .*write-file`))
    expect(r.stdout).toMatch(/socket: allow only when arg0 in \{2,10,16\}/)
    expect(r.stdout).toMatch(/private namespaces: ipc, network \(loopback only\)/)
    expect(r.stdout).toMatch(/NOT governed: metadata: workspace-write/)
    expect(r.stdout).toMatch(/governed: lifetime: a supervisor outside the sandbox/)
    const json = JSON.parse(cordon(['explain', '--json']).stdout) as {
      backend: string
      policy: { workspaceRoot: string }
    }
    expect(json).toMatchObject({ backend: 'landlock', policy: { workspaceRoot: root } })
  })

  it.skipIf(!usable)('explain shows the exact bwrap argv when bubblewrap is chosen', async (ctx) => {
    await needBackend(ctx, 'bubblewrap')
    const r = cordon(['explain', '--mode', 'workspace-write', '--network', 'deny'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/backend: bubblewrap \(full\)/)
    expect(r.stdout).toContain(
      '--unshare-net --cap-drop ALL --cap-add CAP_SYS_ADMIN --cap-add CAP_SETPCAP --ro-bind / / --dev /dev --proc /proc --tmpfs /run ',
    )
    expect(r.stdout).toContain(` --bind ${root} ${root} `)
    expect(r.stdout).toMatch(
      /--setenv TMPDIR \S+\/sessions\/[0-9]+-anon-[A-Za-z0-9]{6}\/m\/t --chdir \S+ --json-status-fd 4 -- \S+cordon-exec init --seal-devices --status-fd 3 .* -- \/usr\/bin\/bash -c/,
    )
    const json = JSON.parse(cordon(['explain', '--json', '--mode', 'workspace-write']).stdout) as {
      backend: string
      bubblewrap?: { argv: string[] }
    }
    expect(json.backend).toBe('bubblewrap')
    expect(json.bubblewrap?.argv).toEqual(
      expect.arrayContaining(['--die-with-parent', '--unshare-pid', '--as-pid-1', '--unshare-ipc', '--remount-ro']),
    )
  })

  it('--help on every verb', () => {
    for (const verb of ['run', 'probe', 'explain']) {
      const r = cordon([verb, '--help'])
      expect(r.status).toBe(0)
      expect(r.stdout).toMatch(new RegExp(`Usage: cordon ${verb}`))
    }
    expect(cordon(['--help']).stdout).toMatch(/Verbs:/)
  })

  it.skipIf(!usable)(
    '--environment minimal passes only the minimal names; explain lists what is dropped, never values',
    () => {
      const env = { ...process.env, CORDON_T_PLAIN_NAME: 'plain-value', CORDON_T_DB_PASSWORD: 'pw-value-1234' }
      const scrubbed = cordon(['run', '--', 'env'], root, env)
      expect(scrubbed.stdout).toContain('CORDON_T_PLAIN_NAME=plain-value')
      expect(scrubbed.stdout).not.toContain('pw-value-1234')
      const minimal = cordon(['run', '--environment', 'minimal', '--', 'env'], root, env)
      expect(minimal.status).toBe(0)
      expect(minimal.stdout).not.toContain('CORDON_T_PLAIN_NAME')
      expect(minimal.stdout).toMatch(/^PATH=/m)
      const explained = cordon(['explain', '--environment', 'minimal'], root, env)
      expect(explained.stdout).toMatch(
        /environment: minimal; names not passed: .*CORDON_T_PLAIN_NAME \(not-in-minimal\)/,
      )
      expect(explained.stdout).not.toContain('pw-value-1234')
      const scrubbedExplained = cordon(['explain'], root, env)
      expect(scrubbedExplained.stdout).toMatch(/names not passed: .*CORDON_T_DB_PASSWORD \(credential-name\)/)
      expect(scrubbedExplained.stdout).not.toMatch(/CORDON_T_PLAIN_NAME/)
      expect(cordon(['run', '--environment', 'bogus', '--', 'true']).stderr).toMatch(
        /--environment: must be scrubbed or minimal/,
      )
    },
  )

  it.skipIf(!usable)('explain lists the hidden paths and the default entries turned off', () => {
    const r = cordon(['explain', '--show', 'shadow', '--hide', 'secret.txt'])
    expect(r.stdout).toMatch(/hidden \(\d+ existing paths/)
    expect(r.stdout).toMatch(/default entries turned off: shadow/)
    expect(cordon(['explain', '--show', 'no-such-entry']).stderr).toMatch(/unknown entry "no-such-entry"/)
  })

  it.skipIf(!usable)('explain escapes a root, writable and hidden path that hold terminal controls', () => {
    const evil = join(root, 'dir\x1b]0;T\x07\u202e\nx')
    mkdirSync(join(evil, 'sub'), { recursive: true })
    writeFileSync(join(evil, 'sec\x1b[2Kret'), '')
    const args = ['explain', '--mode', 'workspace-write', '--writable', 'sub', '--hide', 'sec\x1b[2Kret']
    const r = cordon([...args, '--backend', 'landlock'], evil)
    expect(r.status).toBe(0)
    // Control: the report itself carries the raw name (JSON escapes it for a program, not for a terminal's eye).
    const json = JSON.parse(cordon([...args, '--json'], evil).stdout) as { policy: { workspaceRoot: string } }
    expect(json.policy.workspaceRoot).toBe(evil)
    const shown = `${root}/dir\\x1b]0;T\\x07\\u202e\\nx`
    expect(r.stdout).toContain(`root ${shown}, `)
    expect(r.stdout).toContain(`, writable ${shown}/sub`)
    expect(r.stdout).toContain(`  allow ${shown}: `)
    expect(r.stdout).toContain(`  ${shown}/sec\\x1b[2Kret\n`)
    expect(holdsRawControl(r.stdout)).toBe(false)
  })
})
