// The CLI's exit status and denial line, as pure functions of a result: 124 on timeout (as
// timeout(1)), 128+N for a signal, else the command's code; the one line that names what was
// denied and the flag that would allow it.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { denialLine, exitStatusOf, factLines, removedEnvLine } from '../../../src/cli/run.js'
import { shellQuote } from '../../../src/cli/shell-quote.js'
import { terminalExitStatus } from '../../../src/cli/shell.js'
import { EXIT_CORDON_FAILED, EXIT_TIMED_OUT } from '../../../src/cli/usage-error.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import type { ShellRunResult } from '../../../src/shell/types.js'
import { scratchDir } from '../../support/scratch.js'

const { SIGKILL, SIGTERM, SIGINT } = os.constants.signals

function result(over: Partial<ShellRunResult>): ShellRunResult {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    aborted: false,
    timeoutMs: 1000,
    stdout: { text: '', truncated: false },
    stderr: { text: '', truncated: false },
    ...over,
  }
}

describe('exitStatusOf', () => {
  it("is the command's own code", () => {
    expect(exitStatusOf(result({ exitCode: 0 }))).toBe(0)
    expect(exitStatusOf(result({ exitCode: 3 }))).toBe(3)
  })

  it('is 128+N for a signal death', () => {
    expect(exitStatusOf(result({ exitCode: null, signal: 'SIGKILL' }))).toBe(128 + SIGKILL)
    expect(exitStatusOf(result({ exitCode: null, signal: 'SIGTERM' }))).toBe(128 + SIGTERM)
  })

  it('is 124 on timeout, whatever the command did on its way out', () => {
    expect(EXIT_TIMED_OUT).toBe(124)
    expect(exitStatusOf(result({ timedOut: true, exitCode: null, signal: 'SIGTERM' }))).toBe(124)
    expect(exitStatusOf(result({ timedOut: true, exitCode: 0 }))).toBe(124)
  })

  it('is 1 when neither a code nor a signal is known, never a code cordon keeps for itself', () => {
    expect(exitStatusOf(result({ exitCode: null }))).toBe(1)
    expect(EXIT_CORDON_FAILED).toBe(125)
  })
})

describe('terminalExitStatus', () => {
  it('is the code, or 128+N for a signal, or 1', () => {
    expect(terminalExitStatus({ exitCode: 5, signal: null })).toBe(5)
    expect(terminalExitStatus({ exitCode: null, signal: 'SIGINT' })).toBe(128 + SIGINT)
    expect(terminalExitStatus({ exitCode: null, signal: null })).toBe(1)
  })
})

describe('removedEnvLine', () => {
  it('names what the scrub removed from a failed run, and the flag that keeps one', () => {
    const failed = result({
      exitCode: 1,
      sandbox: { mode: 'read-only', denied: false, removedEnv: ['A_KEY', 'NPM_TOKEN'] },
    })
    expect(removedEnvLine(failed)).toBe(
      'cordon: removed from the environment: A_KEY, NPM_TOKEN (--keep-env NAME to pass one)',
    )
    expect(removedEnvLine(result({ exitCode: 1, sandbox: { mode: 'read-only', denied: false } }))).toBeUndefined()
    expect(removedEnvLine(result({ exitCode: 1 }))).toBeUndefined()
  })

  it('a hostile name is shown escaped', () => {
    const line = removedEnvLine(
      result({ exitCode: 1, sandbox: { mode: 'read-only', denied: false, removedEnv: ['X_KEY\x1b]0;t\x07'] } }),
    )
    expect(holdsRawControl(line ?? '')).toBe(false)
  })
})

describe('denialLine', () => {
  const policy = { mode: 'read-only' as const, workspaceRoot: '/work/project' }
  const denied = (paths: string[]) =>
    result({ exitCode: 1, sandbox: { mode: 'read-only', denied: true, deniedPaths: paths } })

  it('says nothing when nothing was denied', () => {
    expect(denialLine(result({ exitCode: 1 }), policy)).toBeUndefined()
    expect(denialLine(result({ exitCode: 1, sandbox: { mode: 'read-only', denied: false } }), policy)).toBeUndefined()
  })

  it('inside the root: workspace-write allows it', () => {
    expect(denialLine(denied(['/work/project/out.txt']), policy)).toBe(
      'cordon: sandbox denied a write to /work/project/out.txt under read-only mode; to allow it: --mode workspace-write (or --mode danger-full-access)',
    )
  })

  it('outside the root: the nearest existing directory once, shell-quoted, as --writable', () => {
    const dir = fs.realpathSync(scratchDir("cordon-it's here"))
    fs.mkdirSync(path.join(dir, 'out'))
    expect(denialLine(denied([`${dir}/out/a`, `${dir}/out/b`]), policy)).toBe(
      `cordon: sandbox denied a write to ${dir}/out/a, ${dir}/out/b under read-only mode; to allow it: --mode workspace-write --writable ${shellQuote(`${dir}/out`)} (or --mode danger-full-access)`,
    )
    // A root holding another: the outer one alone.
    expect(denialLine(denied([`${dir}/out/a`, `${dir}/missing/c`]), policy)).toContain(
      `to allow it: --mode workspace-write --writable ${shellQuote(dir)} (or`,
    )
  })

  it('a system dir or the host temp dir gets no flag that would not work', () => {
    expect(denialLine(denied(['/etc/a', '/tmp/b']), policy)).toBe(
      "cordon: sandbox denied a write to /etc/a, /tmp/b under read-only mode; no writable root can allow /etc/a, /tmp/b (a host temp dir, a system dir, the home dir or cordon's own package: write to $TMPDIR, or use --mode danger-full-access)",
    )
  })

  it("paths from the run's output are shown escaped: no control reaches the terminal", () => {
    const dir = fs.realpathSync(scratchDir('cordon-denied'))
    const hostile = `${dir}/a\r\x1b[2Kok\u202e\n`
    fs.mkdirSync(hostile)
    const line = denialLine(denied([`${hostile}/f`]), policy) as string
    expect(line).toContain(`${dir}/a\\r\\x1b[2Kok\\u202e\\n/f under read-only mode`)
    expect(line).toContain(`--writable $'${dir}/a\\r\\x1b[2Kok\\u202e\\n'`)
    const unreachable = denialLine(denied(['/etc/\x9bx']), policy) as string
    expect(unreachable).toContain('no writable root can allow /etc/\\x9bx (')
    for (const text of [line, unreachable]) {
      expect(holdsRawControl(text)).toBe(false)
      expect(text.split('\n')).toHaveLength(1)
    }
  })
})

describe('denialLine for a run that did not fail on a refused write', () => {
  const policy = { mode: 'workspace-write' as const, workspaceRoot: '/work/project' }

  it('says what was refused, the flag that allows it, and that the command went on without it', () => {
    const dir = fs.realpathSync(scratchDir('cordon-refused'))
    const lost = result({
      exitCode: 0,
      sandbox: { mode: 'workspace-write', denied: false, refusedPaths: [`${dir}/config`] },
    })
    expect(denialLine(lost, policy)?.split('\n')).toEqual([
      `cordon: sandbox denied a write to ${dir}/config under workspace-write mode; to allow it: --writable ${shellQuote(dir)} (or --mode danger-full-access)`,
      'cordon: the command exited 0 all the same, without that write',
    ])
    expect(
      denialLine(result({ exitCode: 0, sandbox: { mode: 'read-only', denied: false, refusedPaths: [] } }), policy),
    ).toBeUndefined()
  })

  it('a write at a hidden place needs its entry shown as well', () => {
    const home = fs.realpathSync(scratchDir('cordon-home'))
    fs.mkdirSync(`${home}/.ssh`)
    const saved = process.env.HOME
    process.env.HOME = home
    try {
      const line = denialLine(
        result({ exitCode: 1, sandbox: { mode: 'workspace-write', denied: true, deniedPaths: [`${home}/.ssh/k`] } }),
        policy,
      )
      expect(line).toContain(`to allow it: --show ssh-keys --writable ${shellQuote(`${home}/.ssh`)} (`)
    } finally {
      process.env.HOME = saved
    }
  })
})

describe('denialLine never suggests the mode in force', () => {
  const dir = fs.realpathSync(scratchDir('cordon-in-force'))
  const root = path.join(dir, 'root')
  fs.mkdirSync(path.join(dir, 'out', 'code'), { recursive: true })
  fs.mkdirSync(root)
  const policy = { mode: 'workspace-write' as const, workspaceRoot: root }
  const denied = (paths: string[]) =>
    result({ exitCode: 1, sandbox: { mode: 'workspace-write', denied: true, deniedPaths: paths } })

  it('under workspace-write: only the flags to add (the control: read-only names the mode)', () => {
    expect(denialLine(denied([`${dir}/out/x`]), policy)).toBe(
      `cordon: sandbox denied a write to ${dir}/out/x under workspace-write mode; to allow it: --writable ${dir}/out (or --mode danger-full-access)`,
    )
    expect(denialLine(denied([`${dir}/out/x`]), { ...policy, mode: 'read-only' })).toContain(
      `to allow it: --mode workspace-write --writable ${dir}/out (or`,
    )
  })

  it('a path it cannot name: --writable DIR under workspace-write, not the mode it runs in', () => {
    expect(denialLine(denied([]), policy)).toBe(
      'cordon: sandbox denied a write under workspace-write mode (which path is unknown: the command changed directory); --writable DIR allows it if it was in DIR (or --mode danger-full-access)',
    )
  })

  it("a recursive removal's remedy is the parent of the tree, from the command and its cwd", () => {
    const line = denialLine(denied([`${dir}/out/code/a`]), policy, { command: 'rm -rf ../out/code', cwd: root })
    expect(line).toContain(`; to allow it: --writable ${dir}/out (or --mode danger-full-access)`)
    // The control: without the command the files' dir, which rm would then fail to remove.
    expect(denialLine(denied([`${dir}/out/code/a`]), policy)).toContain(`to allow it: --writable ${dir}/out/code (or`)
  })
})

describe('factLines', () => {
  it('after the denial line, a line per closed class the run met, with its flags', () => {
    const run = result({
      exitCode: 1,
      sandbox: {
        mode: 'read-only',
        denied: false,
        backend: 'landlock',
        closedClasses: [{ class: 'shared-memory', evidence: 'sem_open was refused', remedy: '--backend bubblewrap' }],
      },
    })
    expect(factLines(run, { mode: 'read-only', workspaceRoot: '/work/project' })).toEqual([
      'cordon: landlock closes shared memory whole: sem_open was refused; to allow it: --backend bubblewrap (or --mode danger-full-access)',
    ])
    expect(factLines(result({ exitCode: 1 }), { mode: 'read-only', workspaceRoot: '/work/project' })).toEqual([])
  })
})

describe('denialLine under a network allow-list', () => {
  const policy = { mode: 'read-only' as const, workspaceRoot: '/work/project', network: { allow: ['a.example'] } }
  type Refused = {
    host: string
    port: number
    count: number
    reason: 'denied' | 'not-allowed' | 'address' | 'server-name'
  }
  const refusedRun = (refused: Refused[], deniedFor: ('files' | 'network')[] = ['network'], omitted?: number) =>
    result({
      exitCode: 6,
      sandbox: {
        mode: 'read-only',
        denied: true,
        deniedFor,
        network: { refused, allowed: [], ...(omitted === undefined ? {} : { refusedOmitted: omitted }) },
        ...(deniedFor.includes('files') ? { deniedPaths: ['/work/project/out.txt'] } : {}),
      },
    })

  it('names each refused host:port, the reason in plain words and the flag that allows it; no file line', () => {
    const line = denialLine(
      refusedRun([
        { host: 'registry.npmjs.org', port: 443, count: 3, reason: 'not-allowed' },
        { host: 'evil.example', port: 80, count: 1, reason: 'denied' },
        { host: 'db.internal', port: 5432, count: 1, reason: 'address' },
        { host: '10.0.0.5', port: 80, count: 1, reason: 'address' },
        { host: 'a.example', port: 443, count: 1, reason: 'server-name' },
      ]),
      policy,
    )
    expect(line?.split('\n')).toEqual([
      'cordon: the network allow-list refused 5 destinations:',
      'cordon:   registry.npmjs.org:443 (3 tries): not in the allow-list; to allow it: --allow-host registry.npmjs.org',
      'cordon:   evil.example:80: in the deny list, which wins over every allow pattern; to allow it: drop the --deny-host pattern that covers it (--allow-host cannot override it)',
      'cordon:   db.internal:5432: it resolves to a private, loopback or link-local address, which only a literal address in the allow-list reaches; to allow it: --allow-host ADDRESS, naming the address itself (a name never reaches such an address)',
      'cordon:   10.0.0.5:80: it resolves to a private, loopback or link-local address, which only a literal address in the allow-list reaches; to allow it: --allow-host 10.0.0.5',
      'cordon:   a.example:443: the TLS hello named another server than the host the tunnel was opened to (CONNECT or SOCKS5), or could not be read whole; no flag allows it: the client must name the same host in CONNECT and in TLS',
    ])
  })

  it('suggests no flag for a name that is not a host name (recorded percent-encoded by the proxy)', () => {
    const line = denialLine(
      refusedRun([{ host: 'invalid:198.51.100.77%00.allowed.test', port: 443, count: 1, reason: 'not-allowed' }]),
      policy,
    )
    expect(line?.split('\n')[1]).toBe(
      'cordon:   invalid:198.51.100.77%00.allowed.test:443: not in the allow-list; no flag allows it: the command asked for something that is not a host name',
    )
  })

  it('names at most five, then how many more (the ones past the facts cap counted too)', () => {
    const many = Array.from({ length: 7 }, (_, i) => ({
      host: `h${i}.example`,
      port: 443,
      count: 1,
      reason: 'not-allowed' as const,
    }))
    const lines = (denialLine(refusedRun(many, ['network'], 4), policy) as string).split('\n')
    expect(lines[0]).toBe('cordon: the network allow-list refused 11 destinations:')
    expect(lines).toHaveLength(7)
    expect(lines[5]).toContain('h4.example:443')
    expect(lines[6]).toBe('cordon:   and 6 more')
  })

  it('a run denied for files and the network gets both, the file line unchanged and first', () => {
    const both = denialLine(
      refusedRun([{ host: 'b.example', port: 443, count: 1, reason: 'not-allowed' }], ['files', 'network']),
      policy,
    )
    expect(both?.split('\n')[0]).toBe(
      'cordon: sandbox denied a write to /work/project/out.txt under read-only mode; to allow it: --mode workspace-write (or --mode danger-full-access)',
    )
    expect(both?.split('\n').slice(1)).toEqual([
      'cordon: the network allow-list refused a destination:',
      'cordon:   b.example:443: not in the allow-list; to allow it: --allow-host b.example',
    ])
  })

  it('hosts from the proxy are escaped: an IPv6 address in brackets, a hostile name shell-quoted and inert', () => {
    const line = denialLine(
      refusedRun([
        { host: '::1', port: 8080, count: 1, reason: 'address' },
        { host: 'x\x1b[2K\u202e.example', port: 443, count: 1, reason: 'not-allowed' },
      ]),
      policy,
    ) as string
    expect(line).toContain('cordon:   [::1]:8080: ')
    expect(line).toContain('to allow it: --allow-host ::1')
    expect(line).toContain(
      "x\\x1b[2K\\u202e.example:443: not in the allow-list; to allow it: --allow-host $'x\\x1b[2K\\u202e.example'",
    )
    expect(holdsRawControl(line)).toBe(false)
  })

  it('a network denial whose facts name no host still says the allow-list refused one', () => {
    expect(denialLine(refusedRun([]), policy)).toBe(
      'cordon: the network allow-list refused a connection (which one is unknown)',
    )
  })
})
