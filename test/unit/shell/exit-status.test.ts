import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import {
  ESCALATION_HINT,
  NETWORK_HINT,
  appendExitStatus,
  closedClassMarker,
  denialLines,
  denialMarker,
  networkDenialMarker,
  endsInExitMarker,
  refusalMarker,
  parseExitStatus,
  renderResult,
  runnerFailureMarker,
} from '../../../src/shell/exit-status.js'
import type { CollectedOutput, ShellRunResult } from '../../../src/shell/types.js'

function result(overrides: Partial<ShellRunResult> = {}): ShellRunResult {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    aborted: false,
    timeoutMs: 120000,
    stdout: { text: '', truncated: false },
    stderr: { text: '', truncated: false },
    ...overrides,
  }
}
const out = (text: string, extra: Partial<CollectedOutput> = {}): CollectedOutput => ({
  text,
  truncated: false,
  ...extra,
})

describe('renderResult', () => {
  it('renders stdout as is on a clean exit', () => {
    expect(renderResult(result({ stdout: out('hello\n') }))).toBe('hello\n')
  })

  it('an empty body becomes (no output)', () => {
    expect(renderResult(result())).toBe('(no output)')
    expect(renderResult(result({ exitCode: 1 }))).toBe('(no output)\n[exit code: 1]')
  })

  it('appends stderr as a [stderr] section, with a newline only when stdout lacks one', () => {
    expect(renderResult(result({ stdout: out('a\n'), stderr: out('b\n') }))).toBe('a\n[stderr]\nb\n')
    expect(renderResult(result({ stdout: out('a'), stderr: out('b') }))).toBe('a\n[stderr]\nb')
    expect(renderResult(result({ stderr: out('oops') }))).toBe('[stderr]\noops')
  })

  it('a closed class the run met is a marker after the denial markers, before the exit marker', () => {
    const closed = { class: 'terminals', evidence: 'openpty was refused', remedy: '--backend bubblewrap' }
    const text = renderResult(
      result({ exitCode: 1, sandbox: { mode: 'read-only', denied: false, closedClasses: [closed] } }),
    )
    expect(text).toBe(
      '(no output)\n[sandbox: terminals is closed whole in this sandbox — openpty was refused; --backend bubblewrap opens it]\n[exit code: 1]',
    )
    expect(closedClassMarker(closed)).toBe(text.split('\n')[1])
    expect(parseExitStatus(text).exitCode).toBe(1)
  })

  it('a nonzero exit is a marker, not an error', () => {
    expect(renderResult(result({ exitCode: 2, stdout: out('x') }))).toBe('x\n[exit code: 2]')
  })

  it('a timeout shows both markers, timeout first', () => {
    expect(
      renderResult(
        result({ timedOut: true, timeoutMs: 500, exitCode: null, signal: 'SIGTERM', stdout: out('partial') }),
      ),
    ).toBe('partial\n[timed out after 500ms]\n[killed by signal: SIGTERM]')
  })

  it('a trapped timeout that exits 0 still reports the timeout', () => {
    expect(renderResult(result({ timedOut: true, timeoutMs: 1000, stdout: out('trapped\n') }))).toBe(
      'trapped\n\n[timed out after 1000ms]',
    )
  })

  it('truncation names the spill path, or (unavailable)', () => {
    expect(renderResult(result({ stdout: out('tail', { truncated: true, spillPath: '/s/out.log' }) }))).toBe(
      'tail\n[output truncated; full output: /s/out.log]',
    )
    expect(renderResult(result({ stdout: out('o'), stderr: out('e', { truncated: true }) }))).toBe(
      'o\n[stderr]\ne\n[output truncated; full output: (unavailable)]',
    )
  })

  it('orders denial, hint, timeout, then the exit marker last', () => {
    const denied = result({
      exitCode: 1,
      timedOut: true,
      timeoutMs: 10,
      stderr: out("touch: cannot touch 'x': Permission denied\n"),
      sandbox: { mode: 'read-only', denied: true, enforcement: 'full' },
    })
    expect(renderResult(denied, { escalationHint: true })).toBe(
      "[stderr]\ntouch: cannot touch 'x': Permission denied\n\n" +
        '[sandbox: file access denied under read-only mode]\n' +
        `${ESCALATION_HINT}\n` +
        '[timed out after 10ms]\n' +
        '[exit code: 1]',
    )
    expect(renderResult(denied)).not.toContain('escalation available')
    expect(renderResult(denied, { escalationHint: '[custom hint]' })).toContain(
      '[sandbox: file access denied under read-only mode]\n[custom hint]\n',
    )
  })

  it('no denial marker without a denial', () => {
    expect(renderResult(result({ exitCode: 1, sandbox: { mode: 'workspace-write', denied: false } }))).toBe(
      '(no output)\n[exit code: 1]',
    )
  })

  it('the marker texts are exact', () => {
    expect(denialMarker('workspace-write')).toBe('[sandbox: file access denied under workspace-write mode]')
    expect(runnerFailureMarker('read-only')).toBe(
      '[sandbox: the sandbox runner itself failed under read-only mode — the command did not run; this is a sandbox problem, not a command failure]',
    )
    expect(ESCALATION_HINT).toBe(
      '[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]',
    )
  })

  it('real output ending in marker-like text gets an explicit exit marker', () => {
    const text = renderResult(result({ stdout: out('echoed\n[exit code: 7]') }))
    expect(text).toBe('echoed\n[exit code: 7]\n[exit code: 0]')
    expect(parseExitStatus(text)).toEqual({ body: 'echoed\n[exit code: 7]', exitCode: 0, signal: null })
    const sig = renderResult(result({ stdout: out('x\n[killed by signal: SIGKILL]') }))
    expect(parseExitStatus(sig)).toEqual({ body: 'x\n[killed by signal: SIGKILL]', exitCode: 0, signal: null })
  })
})

describe('renderResult under a network allow-list', () => {
  type Refused = {
    host: string
    port: number
    count: number
    reason: 'denied' | 'not-allowed' | 'address' | 'server-name'
  }
  const refusedRun = (refused: Refused[], deniedFor: ('files' | 'network')[] = ['network'], omitted?: number) =>
    result({
      exitCode: 6,
      stderr: out('curl: (56) CONNECT tunnel failed, response 403\n'),
      sandbox: {
        mode: 'read-only',
        denied: true,
        deniedFor,
        network: { refused, allowed: [], ...(omitted === undefined ? {} : { refusedOmitted: omitted }) },
      },
    })
  const npm = { host: 'registry.npmjs.org', port: 443, count: 2, reason: 'not-allowed' as const }

  it('a network-only denial: the refused hosts and the hosts hint, never the file marker or its hint', () => {
    const text = renderResult(refusedRun([npm, { host: 'evil.example', port: 80, count: 1, reason: 'denied' }]), {
      escalationHint: true,
      networkHint: true,
    })
    expect(text).toBe(
      '[stderr]\ncurl: (56) CONNECT tunnel failed, response 403\n\n' +
        '[sandbox: network access refused by the allow-list: registry.npmjs.org:443 (2 tries): not in the allow-list; evil.example:80: in the deny list, which wins over every allow pattern]\n' +
        `${NETWORK_HINT}\n` +
        '[exit code: 6]',
    )
    expect(NETWORK_HINT).toMatch(/additional_hosts .* \+ justification/)
    expect(renderResult(refusedRun([npm]))).not.toContain(NETWORK_HINT)
    expect(parseExitStatus(text).exitCode).toBe(6)
  })

  it('denied for files and the network: the file marker and its hint first, then the network', () => {
    const text = renderResult(refusedRun([npm], ['files', 'network']), { escalationHint: true, networkHint: true })
    const markers = text.split('\n').filter((l) => l.startsWith('[sandbox'))
    expect(markers).toEqual([
      denialMarker('read-only'),
      ESCALATION_HINT,
      networkDenialMarker({ refused: [npm], allowed: [] }),
      NETWORK_HINT,
    ])
  })

  it('at most five hosts, then how many more; hostile names escaped; none known is said', () => {
    const many = Array.from({ length: 6 }, (_, i) => ({ ...npm, host: `h${i}.example`, count: 1 }))
    const marker = networkDenialMarker({ refused: many, allowed: [], refusedOmitted: 3 })
    expect(marker).toMatch(/h4\.example:443: not in the allow-list; and 4 more\]$/)
    expect(marker).not.toContain('h5.example')
    const hostile = networkDenialMarker({ refused: [{ ...npm, host: 'a\x1b[2J\u202eb' }], allowed: [] })
    expect(hostile).toContain('a\\x1b[2J\\u202eb:443')
    expect(holdsRawControl(hostile)).toBe(false)
    expect(networkDenialMarker(undefined)).toBe(
      '[sandbox: network access refused by the allow-list (which host is unknown)]',
    )
  })

  it('facts without deniedFor are a file denial, rendered as before', () => {
    const denied = result({ exitCode: 1, sandbox: { mode: 'read-only', denied: true } })
    expect(denialLines(denied.sandbox, { escalationHint: true, networkHint: true })).toEqual([
      denialMarker('read-only'),
      ESCALATION_HINT,
    ])
  })

  it('a run that did not fail says the writes the sandbox refused all the same, escaped, at most five', () => {
    const refused = ['/w/.git/config', '/etc/a\x1b[2J']
    const clean = result({ exitCode: 0, sandbox: { mode: 'workspace-write', denied: false, refusedPaths: refused } })
    const text = renderResult(clean, { escalationHint: true })
    expect(text).toBe(`(no output)\n${refusalMarker('workspace-write', refused)}\n${ESCALATION_HINT}`)
    expect(text).toContain(
      'though the command did not fail on them (they did not happen): /w/.git/config, /etc/a\\x1b[2J]',
    )
    expect(holdsRawControl(text)).toBe(false)
    expect(parseExitStatus(text).exitCode).toBe(0)
    const many = refusalMarker(
      'read-only',
      Array.from({ length: 7 }, (_, i) => `/p${i}`),
    )
    expect(many).toMatch(/\/p4, and 2 more\]$/)
    expect(denialLines({ mode: 'read-only', denied: false })).toEqual([])
  })
})

describe('parseExitStatus', () => {
  it('a clean exit has no marker', () => {
    expect(parseExitStatus('hello\n')).toEqual({ body: 'hello\n', exitCode: 0, signal: null })
  })

  it('a nonzero exit has its marker stripped', () => {
    expect(parseExitStatus('out\n[exit code: 3]')).toEqual({ body: 'out', exitCode: 3, signal: null })
  })

  it('a signal takes precedence', () => {
    expect(parseExitStatus('out\n[exit code: 3]\n[killed by signal: SIGKILL]')).toEqual({
      body: 'out\n[exit code: 3]',
      exitCode: null,
      signal: 'SIGKILL',
    })
  })

  it('the timeout and sandbox markers stay in the body', () => {
    expect(
      parseExitStatus('x\n[sandbox: file access denied under read-only mode]\n[timed out after 5ms]\n[exit code: 1]'),
    ).toEqual({
      body: 'x\n[sandbox: file access denied under read-only mode]\n[timed out after 5ms]',
      exitCode: 1,
      signal: null,
    })
  })

  it('only a final line anchored at the end is a marker', () => {
    expect(parseExitStatus('[exit code: 1]')).toEqual({ body: '[exit code: 1]', exitCode: 0, signal: null })
    expect(parseExitStatus('a\n[exit code: 1]\n')).toEqual({ body: 'a\n[exit code: 1]\n', exitCode: 0, signal: null })
    expect(parseExitStatus('a\n[exit code: 1] ')).toEqual({ body: 'a\n[exit code: 1] ', exitCode: 0, signal: null })
    expect(parseExitStatus('a\nx[exit code: 1]')).toEqual({ body: 'a\nx[exit code: 1]', exitCode: 0, signal: null })
  })
})

const SIGNALS = ['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP', 'SIGSEGV', 'SIGPIPE', 'SIGABRT', 'SIGUSR1'] as const
const markerish = fc.constantFrom(
  '[exit code: 0]',
  '[exit code: 1]',
  '[exit code: -1]',
  '[exit code: 007]',
  '[killed by signal: SIGTERM]',
  '[killed by signal: nonsense]',
  '[timed out after 5ms]',
  '[stderr]',
  '(no output)',
  '[output truncated; full output: /x]',
  '[sandbox: file access denied under read-only mode]',
  '\n',
  '',
)
const streamText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.array(fc.oneof(markerish, fc.string({ maxLength: 5 })), { maxLength: 5 }).map((parts) => parts.join('\n')),
)
const collected = fc.record(
  { text: streamText, truncated: fc.boolean(), spillPath: fc.constantFrom('/tmp/spill/out.log', '/a b/c.log') },
  { requiredKeys: ['text', 'truncated'] },
)
const status = fc.oneof(
  fc.record({
    exitCode: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 }), fc.integer()),
    signal: fc.constant(null),
  }),
  fc.record({ exitCode: fc.constant(null), signal: fc.constantFrom(...SIGNALS) }),
)
const runResult = fc
  .record({
    status,
    timedOut: fc.boolean(),
    aborted: fc.boolean(),
    timeoutMs: fc.integer({ min: 1, max: 600000 }),
    stdout: collected,
    stderr: collected,
    sandbox: fc.option(
      fc.record({
        mode: fc.constantFrom('read-only', 'workspace-write', 'danger-full-access' as const),
        denied: fc.boolean(),
      }),
      { nil: undefined },
    ),
  })
  .map(
    ({ status: s, sandbox, ...rest }): ShellRunResult => ({
      ...rest,
      ...s,
      ...(sandbox === undefined ? {} : { sandbox }),
    }),
  )

describe('round trip (property)', () => {
  it('parseExitStatus(renderResult(x)) gives back x’s exit status, and the body is the text before the marker', () => {
    fc.assert(
      fc.property(runResult, fc.oneof(fc.boolean(), fc.constant('[sandbox: hint]')), (x, hint) => {
        const text = renderResult(x, { escalationHint: hint })
        const parsed = parseExitStatus(text)
        expect(parsed.signal).toBe(x.signal)
        expect(parsed.exitCode).toBe(x.signal === null ? x.exitCode : null)
        expect(appendExitStatus(parsed.body, parsed)).toBe(text)
        expect(text.startsWith(parsed.body)).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })

  it('appendExitStatus and parseExitStatus are exact inverses for any body', () => {
    fc.assert(
      fc.property(streamText, status, (body, s) => {
        expect(parseExitStatus(appendExitStatus(body, s))).toEqual({ body, ...s })
      }),
      { numRuns: 2000 },
    )
  })

  it('a clean exit adds nothing unless the text ends in a marker-like line', () => {
    fc.assert(
      fc.property(streamText, (body) => {
        const text = appendExitStatus(body, { exitCode: 0, signal: null })
        expect(text === body).toBe(!endsInExitMarker(body))
      }),
    )
  })
})
