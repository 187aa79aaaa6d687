// The credential rules over tables: real secret shapes (names and values) that must be dropped, and
// the names and values that look close but must survive, each with the reason it survives.
import { describe, expect, it } from 'vitest'
import {
  cannotBeSecret,
  type CredentialRule,
  credentialMatch,
  credentialNameMatch,
  credentialValueMatch,
  isCredentialShapedName,
  nameTokens,
} from '../../../../src/subprocess/env/credentials.js'

/** A fake token body: `n` deterministic alphanumerics (never a live secret, never all one letter). */
function body(n: number): string {
  const alphabet = 'aB3dE5gH7jK9mN2pQ4sT6vW8yZ0cF1'
  let out = ''
  for (let i = 0; i < n; i++) out += alphabet[(i * 7 + 3) % alphabet.length]
  return out
}
// Built at run time so no literal in the repository looks like a live token to a secret scanner.
const jwt = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ.${body(43)}`
const pem = (kind: string) => `-----BEGIN ${kind}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ${kind}-----\n`

describe('the issue’s list is dropped', () => {
  // [name, value, rule]: every entry the issue names, with a realistic value.
  const cases: [string, string, CredentialRule][] = [
    ['DATABASE_URL', 'postgres://app:s3cret@db.internal:5432/app', 'credential-value'],
    ['REDIS_URL', 'redis://:hunter2@cache:6379/0', 'credential-value'],
    ['REDIS_URL', 'rediss://default:pw@cache.example.com:6380', 'credential-value'],
    ['MYSQL_PWD', 'root', 'credential-name'],
    ['GH_PASSPHRASE', 'correct horse', 'credential-name'],
    ['HTTPS_PROXY', 'http://alice:pw@proxy.corp:3128', 'credential-value'],
    ['https_proxy', 'http://alice:pw@proxy.corp:3128/', 'credential-value'],
    ['ALL_PROXY', 'socks5h://u:p@127.0.0.1:1080', 'credential-value'],
    ['SENTRY_DSN', 'https://0123abcd@o1.ingest.sentry.io/42', 'credential-name'],
    ['SLACK_WEBHOOK_URL', `https://hooks.slack.com/services/T00/B00/${body(24)}`, 'credential-name'],
    ['DOCKER_AUTH_CONFIG', '{"auths":{"registry.example":{"auth":"dTpw"}}}', 'credential-name'],
    ['BW_SESSION', body(88), 'credential-name'],
    ['OP_SESSION_my_team', body(43), 'credential-name'],
    ['OP_SESSION_myTeam', body(43), 'credential-name'],
    ['CI_JOB_JWT', jwt, 'credential-name'],
    ['CI_JOB_JWT_V2', jwt, 'credential-name'],
    ['COOKIE', 'sid=abc', 'credential-name'],
    ['CREDENTIALS', '{"user":"u"}', 'credential-name'],
    ['AUTH', 'u:p', 'credential-name'],
    ['PASSWD', 'pw', 'credential-name'],
    ['SSH_AUTH_SOCK', '/tmp/ssh-XXXXabcd/agent.1234', 'agent-socket'],
    ['GPG_AGENT_INFO', '/run/user/1000/gnupg/S.gpg-agent:0:1', 'agent-socket'],
  ]
  it.each(cases)('%s=%s', (name, value, rule) => {
    expect(credentialMatch(name, value)?.rule).toBe(rule)
  })
})

describe('credential names are dropped by whole token, wherever the value is harmless', () => {
  it.each([
    // The seed's four words, in every spelling a tool uses.
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'aws_secret_access_key',
    'AWS_SESSION_TOKEN',
    'GithubToken',
    'githubToken',
    'apiKey',
    'APIKey',
    'APIKEY',
    'GITHUBTOKEN',
    'ACCESSKEY',
    'DB_PASSWORD',
    'PGPASSWORD',
    'CLIENT_SECRET',
    'NEXTAUTH_SECRET',
    // The widened tokens.
    'SMTP_PASS',
    'db_pass',
    'DB_PWD',
    'HTTP_AUTHORIZATION',
    'GITHUB_OAUTH',
    'API_BEARER',
    'SESSION_COOKIE',
    'COOKIES',
    'COOKIEJAR',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'AWS_SHARED_CREDENTIALS_FILE',
    'DATABASE_DSN',
    'DISCORD_WEBHOOK',
    'TEAMS_WEBHOOKS',
    'JWT_PRIVATE',
    'SSH_KEYS',
    'VAULT_SECRETS',
    'GITHUB_PAT',
    'AZURE_STORAGE_CONNECTION_STRING',
    'ConnectionStrings__Default',
    'NODE_AUTH_TOKEN',
    'npm_config__authToken',
    'npm_config_//registry.npmjs.org/:_authToken',
    'XDG_SESSION_TOKEN', // desktop-session metadata exempts SESSION only, not TOKEN
  ])('%s', (name) => {
    expect(credentialNameMatch(name)?.rule).toBe('credential-name')
    expect(isCredentialShapedName(name)).toBe(true)
  })

  it('names the marker that fired (never the value)', () => {
    expect(credentialNameMatch('MYSQL_PWD')?.detail).toBe('name token PWD')
    expect(credentialNameMatch('AZURE_STORAGE_CONNECTION_STRING')?.detail).toBe('name token CONNECTION_STRING')
    expect(credentialNameMatch('COOKIEJAR')?.detail).toBe('name contains COOKIE')
    expect(credentialNameMatch('GITHUBTOKEN')?.detail).toBe('name token ends in TOKEN')
    expect(credentialNameMatch('APIKEY')?.detail).toBe('name token ends in APIKEY')
  })
})

describe('agent and control sockets are dropped', () => {
  it.each([
    'SSH_AUTH_SOCK',
    'SSH_AGENT_PID',
    'GPG_AGENT_INFO',
    'BITWARDEN_SSH_AUTH_SOCK',
    'GNOME_KEYRING_CONTROL',
    'GIT_ASKPASS',
    'SSH_ASKPASS',
    'SUDO_ASKPASS',
    'VSCODE_GIT_ASKPASS_MAIN',
    'VSCODE_GIT_IPC_HANDLE',
    'VSCODE_IPC_HOOK_CLI',
    'KRB5CCNAME',
    'NVIM',
    'NVIM_LISTEN_ADDRESS',
    'KITTY_LISTEN_ON',
    'WEZTERM_UNIX_SOCKET',
    'WSL_INTEROP',
    'TMUX',
    'TMUX_PANE',
  ])('%s', (name) => {
    expect(credentialNameMatch(name)).toEqual({ rule: 'agent-socket', detail: 'agent or control socket' })
  })
})

describe('secret values are dropped under any name', () => {
  // [what, value]: the shapes of real credentials; the name is deliberately innocent.
  const cases: [string, string][] = [
    ['URL with a password', 'https://x-access-token:tok@github.com/o/r.git'],
    ['URL with a password', 'amqp://guest:guest@rabbit:5672/'],
    ['URL with a password', 'mongodb+srv://u:p%40ss@cluster0.example.net/db'],
    ['PEM private key', pem('RSA PRIVATE KEY')],
    ['PEM private key', pem('OPENSSH PRIVATE KEY')],
    ['PEM private key', pem('EC PRIVATE KEY')],
    ['PEM private key', pem('ENCRYPTED PRIVATE KEY')],
    ['PEM private key', pem('PGP PRIVATE KEY BLOCK')],
    ['JWT', jwt],
    ['JWT', `Bearer ${jwt}`],
    ['GitHub token', `ghp_${body(36)}`],
    ['GitHub token', `gho_${body(36)}`],
    ['GitHub token', `ghs_${body(36)}`],
    ['GitHub token', `github_pat_11A${body(19)}_${body(59)}`],
    ['GitHub token', `-c http.extraheader=AUTHORIZATION: basic ghp_${body(36)}`],
    ['GitLab token', `glpat-${body(20)}`],
    ['sk- API key', `sk-${body(48)}`],
    ['sk- API key', `sk-proj-${body(40)}`],
    ['sk- API key', `sk-ant-api03-${body(80)}`],
    ['Stripe key', `sk_live_${body(24)}`],
    ['Stripe key', `rk_test_${body(24)}`],
    ['Slack token', `xoxb-123456789012-123456789012-${body(24)}`],
    ['Slack token', `xoxp-123456789012-${body(20)}`],
    ['Slack token', `xapp-1-A0123-${body(20)}`],
    ['AWS access key id', 'AKIAIOSFODNN7EXAMPLE'],
    ['AWS access key id', 'ASIAY34FZKBOKMUTVV7A'],
    ['Google API key', `AIza${body(35)}`],
    ['npm token', `npm_${body(36)}`],
    ['Hugging Face token', `hf_${body(34)}`],
    ['PyPI token', `pypi-AgEIcHlwaS5vcmc${body(40)}`],
    ['webhook URL', `https://discord.com/api/webhooks/123/${body(30)}`],
    ['webhook URL', `https://hooks.slack.com/workflows/T00/A00/1/${body(20)}`],
  ]
  it.each(cases)('%s: %s', (detail, value) => {
    expect(credentialValueMatch(value)).toEqual({ rule: 'credential-value', detail })
    expect(credentialMatch('SOME_SETTING', value)?.rule).toBe('credential-value')
  })
})

describe('look-alikes survive', () => {
  // [name, value, why it survives]
  const cases: [string, string, string][] = [
    ['GIT_AUTHOR_NAME', 'A U Thor', 'AUTHOR is a whole token, not AUTH: commit identity must reach git'],
    ['GIT_AUTHOR_EMAIL', 'author@example.com', 'commit identity'],
    ['GIT_AUTHOR_DATE', '2005-04-07T22:13:13', 'commit identity'],
    ['GIT_COMMITTER_NAME', 'C O Mitter', 'commit identity'],
    ['GIT_COMMITTER_EMAIL', 'committer@example.com', 'commit identity'],
    ['PWD', '/work/repo', 'the shell’s directory, not a password'],
    ['OLDPWD', '/work', 'the shell’s previous directory'],
    ['PATH', '/usr/local/bin:/usr/bin:/bin', 'search path'],
    ['HOME', '/home/u', 'home directory'],
    ['LANG', 'C.UTF-8', 'locale'],
    ['LC_ALL', 'C.UTF-8', 'locale'],
    ['TERM', 'xterm-256color', 'terminal type'],
    ['DBUS_SESSION_BUS_ADDRESS', 'unix:path=/run/user/1000/bus', 'well-known bus path: masked by the socket rules'],
    ['DBUS_SESSION_BUS_PID', '1234', 'desktop-session metadata'],
    ['XDG_SESSION_TYPE', 'wayland', 'desktop-session metadata'],
    ['XDG_SESSION_ID', '3', 'a login session number, not a cookie'],
    ['XDG_SESSION_CLASS', 'user', 'desktop-session metadata'],
    ['SESSION_MANAGER', 'local/host:@/tmp/.ICE-unix/1234,unix/host:/tmp/.ICE-unix/1234', 'X11 session manager'],
    ['DESKTOP_SESSION', 'ubuntu', 'desktop-session metadata'],
    ['XDG_RUNTIME_DIR', '/run/user/1000', 'well-known dir: masked by the socket rules'],
    ['DISPLAY', ':0', 'well-known socket path'],
    ['MONKEY', 'banana', 'KEY glued to a non-credential word'],
    ['HOTKEY', 'ctrl+k', 'KEY glued to a non-credential word'],
    ['KEYMAP', 'us', 'KEY glued to a non-credential word'],
    ['KEYBOARD_LAYOUT', 'de', 'KEYBOARD is its own token'],
    ['XKB_DEFAULT_KEYMAP', 'us', 'KEYMAP is its own token'],
    ['TOKENIZERS_PARALLELISM', 'false', 'TOKENIZERS is its own token (Hugging Face setting)'],
    ['OPENAI_MAX_TOKENS', '4096', 'TOKENS (a count) is not TOKEN'],
    ['PASSAGE', 'text', 'PASSAGE is its own token'],
    ['TOX_TESTENV_PASSENV', 'HOME', 'PASSENV is its own token (tox)'],
    ['CACHE_BYPASS', '1', 'BYPASS is its own token'],
    ['NVIM_APPNAME', 'nvim-lazy', 'a config directory name, not the Neovim socket'],
    ['HTTPS_PROXY', 'http://proxy.corp:3128', 'a proxy without credentials'],
    ['NO_PROXY', 'localhost,127.0.0.1,.internal', 'proxy exclusions'],
    ['DATABASE_URL', 'postgres://localhost:5432/app', 'a URL without a password'],
    ['REDIS_URL', 'redis://cache:6379/0', 'a URL without a password'],
    ['GIT_REMOTE', 'ssh://git@github.com/o/r.git', 'a user without a password'],
    ['DOCKER_HOST', 'unix:///var/run/docker.sock', 'no userinfo'],
    ['EMAIL', 'someone@example.com', 'an address is not a URL'],
    ['NPM_CONFIG_REGISTRY', 'https://registry.example:8443/@scope/', 'port and path, no userinfo'],
    ['SSL_CERT_FILE', '/etc/ssl/certs/ca-certificates.crt', 'a CA bundle is public'],
    ['NODE_EXTRA_CA_CERTS', '/etc/ssl/certs/ca.pem', 'a CA bundle is public'],
    ['TASK', `disk-${body(30)}`, 'sk- only at a word start'],
    ['BUILD_ID', 'AKIAIOSFODNN7EXAMPLEX', 'not a 20-character AWS id'],
    ['LS_COLORS', 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33', 'colour table'],
    ['_', '/usr/bin/env', 'the last command'],
  ]
  it.each(cases)('%s=%s (%s)', (name, value) => {
    expect(credentialMatch(name, value)).toBeUndefined()
  })
})

describe('a value that cannot be a secret is none, whatever its name', () => {
  it.each(['', '0', '1', 'true', 'false', 'TRUE', 'False', 'yes', 'No', 'on', 'OFF'])('%j', (value) => {
    expect(cannotBeSecret(value)).toBe(true)
    expect(credentialMatch('COREPACK_INTEGRITY_KEYS', value)).toBeUndefined()
    expect(credentialMatch('SSH_AUTH_SOCK', value)).toBeUndefined()
  })

  it.each(['2', '01', 'y', 'n', 'yes!', 'enabled', 'truest', ' 0', 'hunter2'])('%j could be one', (value) => {
    expect(cannotBeSecret(value)).toBe(false)
    expect(credentialMatch('COREPACK_INTEGRITY_KEYS', value)?.rule).toBe('credential-name')
  })
})

describe('nameTokens', () => {
  it.each([
    ['MYSQL_PWD', 'MYSQL_PWD'],
    ['dbPassword', 'DB_PASSWORD'],
    ['APIKey', 'API_KEY'],
    ['GithubToken', 'GITHUB_TOKEN'],
    ['http_proxy', 'HTTP_PROXY'],
    ['npm_config_//r.org/:_authToken', 'NPM_CONFIG_R_ORG_AUTH_TOKEN'],
    ['MONKEY', 'MONKEY'],
  ])('%s → %s', (name, tokens) => {
    expect(nameTokens(name)).toBe(tokens)
  })
})
