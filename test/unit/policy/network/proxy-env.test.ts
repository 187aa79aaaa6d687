import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { proxyEnvironment } from '../../../../src/policy/network/proxy-env.js'

describe('proxyEnvironment', () => {
  const env = proxyEnvironment(3128)

  it('points both cases of the HTTP variables, npm and pip at the proxy, and SOCKS at remote resolution', () => {
    for (const name of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'npm_config_proxy', 'PIP_PROXY'])
      expect(env[name]).toBe('http://127.0.0.1:3128')
    expect(env.ALL_PROXY).toBe('socks5h://127.0.0.1:3128')
    expect(env.NODE_USE_ENV_PROXY).toBe('1')
  })

  it('keeps the sandbox loopback direct', () => {
    expect(env.NO_PROXY?.split(',')).toEqual(['localhost', '127.0.0.1', '::1'])
    expect(env.no_proxy).toBe(env.NO_PROXY)
  })

  it('is what curl reads: a request goes to the proxy port, which refuses here (nothing listens)', () => {
    // A real curl with only these variables: it names the proxy in its error, not the host.
    let stderr = ''
    try {
      execFileSync('curl', ['-sS', '-m', '5', 'http://cordon-proxy-env.invalid/'], {
        env: { PATH: process.env.PATH, ...proxyEnvironment(9) },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    } catch (error) {
      stderr = String((error as { stderr?: Buffer }).stderr ?? '')
    }
    expect(stderr).toMatch(/127\.0\.0\.1 port 9/)
  })
})
