// The host flags of the `cordon` CLI as a person types them, in a real child process of
// bin/cordon.js: the usage errors (exit 125, named, nothing run) and `explain`'s network part.
// Nothing here needs a working proxy: explain runs nothing, and a usage error stops before a run.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { holdsRawControl } from '../../../src/policy/display-text.js'
import { scratchDir } from '../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-cli-hosts')

function cordon(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('cordon --allow-host / --deny-host', () => {
  it('on run, shell and explain: --deny-host alone, or --allow-host with --network, exits 125 naming why', () => {
    const marker = join(root, 'ran')
    for (const verb of [['run', '--'], ['shell', '--'], ['explain']]) {
      const tail = verb[0] === 'explain' ? [] : ['touch', marker]
      const alone = cordon([verb[0] as string, '--deny-host', 'evil.example', ...verb.slice(1), ...tail])
      expect(alone.status).toBe(125)
      expect(alone.stderr).toMatch(new RegExp(`^cordon ${verb[0]}: --deny-host: only narrows an allow-list`))
      for (const network of ['inherit', 'deny']) {
        const both = cordon([
          verb[0] as string,
          '--network',
          network,
          '--allow-host',
          'a.example',
          ...verb.slice(1),
          ...tail,
        ])
        expect(both.status).toBe(125)
        expect(both.stderr).toContain(
          `cordon ${verb[0]}: --allow-host: an allow-list is its own network policy; drop --network ${network}`,
        )
      }
    }
    expect(existsSync(marker)).toBe(false)
  })

  it('every bad pattern is named with why, escaped, and nothing runs', () => {
    const marker = join(root, 'ran-bad')
    const r = cordon([
      'run',
      '--allow-host',
      'ok.example',
      '--allow-host',
      'a b',
      '--deny-host',
      '\x1b[2Jx:70000',
      '--',
      'touch',
      marker,
    ])
    expect(r.status).toBe(125)
    expect(r.stderr).toContain('cordon run: 2 host patterns do not parse:\n')
    expect(r.stderr).toContain(`  --allow-host 'a b': "a b" is not a host name or an IP address\n`)
    expect(r.stderr).toContain(
      `  --deny-host $'\\x1b[2Jx:70000': the port must be a number from 1 to 65535 (got "70000")\n`,
    )
    expect(holdsRawControl(r.stderr)).toBe(false)
    expect(existsSync(marker)).toBe(false)
  })

  it('the usage text lists both flags', () => {
    for (const verb of ['run', 'shell', 'explain']) {
      const help = cordon([verb, '--help']).stdout
      expect(help).toMatch(/--allow-host HOST/)
      expect(help).toMatch(/--deny-host HOST/)
    }
  })

  it.skipIf(process.platform === 'darwin')(
    'explain shows each pattern, the proxy as the only route and names resolved there (text and JSON)',
    () => {
      // Off macOS, `--backend seatbelt` renders without probing: the network part needs no backend.
      const args = [
        'explain',
        '--backend',
        'seatbelt',
        '--allow-host',
        '*.npmjs.org:443',
        '--allow-host',
        'example.com',
        '--deny-host',
        'evil.npmjs.org',
      ]
      const r = cordon(args)
      expect(r.status).toBe(0)
      expect(r.stdout).toMatch(/^policy: mode read-only, root .*, network allow-list\n/)
      expect(r.stdout).toContain(
        '\n  allow: *.npmjs.org:443\n  allow: example.com\n  deny: evil.npmjs.org (wins over every allow pattern)\n',
      )
      expect(r.stdout).toMatch(
        /\n {2}route: none but the proxy: HTTP_PROXY, HTTPS_PROXY and ALL_PROXY \(both cases\) are set to 127\.0\.0\.1:3128 in the sandbox/,
      )
      expect(r.stdout).toMatch(/\n {2}names: resolved only at the proxy/)
      expect(holdsRawControl(r.stdout)).toBe(false)
      const json = JSON.parse(cordon([...args, '--json']).stdout) as { policy: { network: unknown }; network: unknown }
      expect(json.policy.network).toEqual({ allow: ['*.npmjs.org:443', 'example.com'], deny: ['evil.npmjs.org'] })
      expect(json.network).toMatchObject({ policy: 'allow-list', allow: ['*.npmjs.org:443', 'example.com'] })
    },
  )
})
