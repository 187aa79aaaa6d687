// `cordon explain`'s network part, a pure function of the policy: what each network policy does,
// and for an allow-list each pattern, the one route (the proxy, PROXY_PORT) and where names resolve,
// every host escaped as explain escapes paths.
import { describe, expect, it } from 'vitest'
import { networkReport, renderExplanation } from '../../../src/cli/explain.js'
import { PROXY_PORT } from '../../../src/policy/defaults.js'
import { sourcesReport } from '../../../src/policy/config/describe.js'
import { layerConfig } from '../../../src/policy/config/layers.js'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import type { NetworkPolicy, SandboxMode } from '../../../src/policy/vocabulary.js'

const policyWith = (network: NetworkPolicy | undefined, mode: SandboxMode = 'read-only') => ({
  mode,
  workspaceRoot: '/work/project',
  ...(network === undefined ? {} : { network }),
})

/** The lines of a rendered report (backend none) from the `network:` line to the next unindented one. */
function networkPart(network: NetworkPolicy | undefined, mode: SandboxMode = 'read-only'): string[] {
  const policy = policyWith(network, mode)
  const text = renderExplanation({ policy, backend: 'none', network: networkReport(policy) })
  const lines = text.split('\n')
  const start = lines.findIndex((l) => l.startsWith('network: '))
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('  '))
  return lines.slice(start, end)
}

describe('networkReport and its lines', () => {
  it('inherit and deny: one line each, named in the policy line too', () => {
    expect(networkPart(undefined)).toEqual(["network: inherit: the host's network, unchanged"])
    expect(networkPart('deny')).toEqual(['network: deny: cut: a private network namespace with loopback only'])
    const policy = policyWith('deny')
    expect(renderExplanation({ policy, backend: 'none', network: networkReport(policy) })).toMatch(
      /^policy: mode read-only, root \/work\/project, network deny\n/,
    )
  })

  it('an allow-list: each allowed and denied pattern, the proxy as the only route, names resolved there', () => {
    const lines = networkPart({ allow: ['example.com', '*.npmjs.org:443', '[::1]:8080'], deny: ['evil.example'] })
    expect(lines.slice(0, 5)).toEqual([
      "network: allow-list: cut like deny, but for cordon's proxy: it reaches the hosts allowed and not denied",
      '  allow: example.com',
      '  allow: *.npmjs.org:443',
      '  allow: [::1]:8080',
      '  deny: evil.example (wins over every allow pattern)',
    ])
    expect(lines[5]).toBe(
      `  route: none but the proxy: HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (both cases) are set to 127.0.0.1:${PROXY_PORT} in the sandbox; a client that ignores them reaches nothing`,
    )
    expect(lines[6]).toMatch(/^ {2}names: resolved only at the proxy: the command has no DNS of its own/)
    expect(networkReport(policyWith({ allow: ['a.example'] }))).toMatchObject({
      policy: 'allow-list',
      allow: ['a.example'],
      deny: [],
    })
  })

  it('under danger-full-access the list is said not to be enforced', () => {
    expect(networkPart({ allow: ['a.example'] }, 'danger-full-access')).toEqual([
      'network: allow-list: not enforced: danger-full-access runs the command unconfined, on the host network',
    ])
  })

  it('a hostile host is escaped like a path', () => {
    const lines = networkPart({ allow: ['a\x1b[2J\u202e.example'], deny: ['b\r\n.example'] })
    expect(lines).toContain('  allow: a\\x1b[2J\\u202e.example')
    expect(lines).toContain('  deny: b\\r\\n.example (wins over every allow pattern)')
    expect(lines.some(holdsRawControl)).toBe(false)
  })
})

describe('where each setting came from', () => {
  it('renders the sources part: a line per setting with its source, after the network part', () => {
    const config = layerConfig(
      [
        { source: { kind: 'user', file: '/home/u/.config/cordon/config.json' }, settings: { mode: 'workspace-write' } },
        { source: { kind: 'flags' }, settings: { network: 'deny' } },
      ],
      '/work/project',
    )
    const policy = policyWith('deny', 'workspace-write')
    const text = renderExplanation({
      policy,
      backend: 'none',
      network: networkReport(policy),
      sources: sourcesReport(config),
    })
    expect(text).toContain(
      [
        'settings (config files: /home/u/.config/cordon/config.json):',
        '  mode: workspace-write (from /home/u/.config/cordon/config.json)',
        '  writable roots: none (default)',
        '  network: deny (from the command line)',
      ].join('\n'),
    )
  })
})
