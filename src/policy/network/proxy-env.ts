/**
 * The environment that points a command's tools at a network allow-list's proxy: the variables
 * curl, git, pip, npm and most HTTP libraries read, in both cases (curl ignores upper-case
 * `HTTP_PROXY`), SOCKS5 with remote resolution for `ALL_PROXY`, Node's opt-in
 * `NODE_USE_ENV_PROXY` (Node 24 and later; Node 20's fetch ignores every one of them, and fails
 * fast: there is no route but the proxy). The sandbox's own loopback stays direct.
 */

/** The proxy variables for a proxy on 127.0.0.1:`port`; they win over the caller's. */
export function proxyEnvironment(port: number): Record<string, string> {
  const http = `http://127.0.0.1:${port}`
  const socks = `socks5h://127.0.0.1:${port}`
  const direct = 'localhost,127.0.0.1,::1'
  return {
    HTTP_PROXY: http,
    http_proxy: http,
    HTTPS_PROXY: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: direct,
    no_proxy: direct,
    npm_config_proxy: http,
    npm_config_https_proxy: http,
    npm_config_noproxy: direct,
    PIP_PROXY: http,
    YARN_HTTP_PROXY: http,
    YARN_HTTPS_PROXY: http,
    GLOBAL_AGENT_HTTP_PROXY: http,
    NODE_USE_ENV_PROXY: '1',
  }
}
