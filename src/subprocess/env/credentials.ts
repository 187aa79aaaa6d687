/**
 * Which environment entries are credentials. Three families of rules, checked in this order:
 *
 * 1. Agent and control sockets, by name: handles through which a command can USE a credential or
 *    drive an unconfined program without seeing a secret (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`, the
 *    keyring, Kerberos, askpass helpers, VS Code's, Neovim's and the host tmux server's
 *    remote-control sockets, WSL interop: a confined `tmux new-window CMD` under `$TMUX` runs CMD
 *    outside). Names whose socket lies at a well-known path anyway (`DBUS_SESSION_BUS_ADDRESS`,
 *    `XDG_RUNTIME_DIR`, `DISPLAY`) stay: dropping them would break tools and protect nothing; the
 *    sandbox's socket rules are the control for those.
 * 2. Credential names, by whole name TOKEN: the name is split at `_` (and any other non-alphanumeric
 *    character) and at camel-case boundaries, so `MYSQL_PWD`, `apiKey` and `CI_JOB_JWT_V2` match while
 *    `MONKEY`, `KEYMAP`, `PASSAGE`, `TOX_TESTENV_PASSENV`, `GIT_AUTHOR_NAME` and
 *    `TOKENIZERS_PARALLELISM` do not. Words with no innocent compounds (SECRET, PASSWORD, PASSWD,
 *    PASSPHRASE, CREDENTIAL, COOKIE, WEBHOOK) match anywhere, and TOKEN or a credential-ish KEY
 *    (`APIKEY`, `ACCESSKEY`, …) also match at the end of a glued token. Exceptions: `PWD` and
 *    `OLDPWD` themselves (the shell's directories), and SESSION inside desktop-session metadata
 *    (`XDG_SESSION_*`, `DBUS_SESSION_BUS_*`, `SESSION_MANAGER`, `DESKTOP_SESSION`).
 * 3. Credential values, by shape, whatever the name: URL userinfo with a password, PEM private keys,
 *    JWTs, and the prefixes of well-known tokens (GitHub, GitLab, `sk-`, Stripe, Slack, AWS access
 *    key ids, Google, npm, Hugging Face, PyPI) and webhook URLs.
 *
 * A value that cannot be a secret (empty, `0`, `1`, `true`, `false`, `yes`, `no`, `on`, `off`, in any
 * case) is none of these whatever its name: `COREPACK_INTEGRITY_KEYS=0` is a switch, not a key.
 *
 * Pure functions; every regex is compiled once, and a value is scanned in one pass only when it is
 * long enough to hold a secret. A match says which rule fired, never the value.
 */

/** Which family of rules dropped an entry. */
export type CredentialRule = 'agent-socket' | 'credential-name' | 'credential-value'

/** One credential verdict: the family and a short human label (never the value). */
export interface CredentialMatch {
  readonly rule: CredentialRule
  readonly detail: string
}

// The usual SCREAMING_SNAKE name is already its own token string: no rewriting, no allocation.
const PLAIN_NAME = /^[A-Z0-9_]*$/
const LOWER_THEN_UPPER = /([a-z0-9])([A-Z])/g
const ACRONYM_THEN_WORD = /([A-Z])([A-Z][a-z])/g
const NON_ALNUM = /[^A-Za-z0-9]+/g

/** `name` as upper-case tokens joined by `_`: `dbPassword` → `DB_PASSWORD`, `APIKey` → `API_KEY`. */
export function nameTokens(name: string): string {
  if (PLAIN_NAME.test(name)) return name
  return name
    .replace(LOWER_THEN_UPPER, '$1_$2')
    .replace(ACRONYM_THEN_WORD, '$1_$2')
    .replace(NON_ALNUM, '_')
    .toUpperCase()
}

// Family 1. Agent, keyring and askpass handles by whole tokens; editor, terminal and interop sockets
// by exact name (`NVIM_APPNAME` only picks a config directory).
const AGENT_SOCKET_TOKENS =
  /(?:^|_)(?:AUTH_SOCK|AGENT_(?:SOCK|SOCKET|INFO|PID)|ASKPASS|IPC_(?:HANDLE|HOOK)|KEYRING_(?:CONTROL|PID))(?=_|$)/
/** Exact names of credential caches and remote-control sockets that reach programs outside the sandbox. */
export const AGENT_SOCKET_NAMES: ReadonlySet<string> = new Set([
  'KRB5CCNAME',
  'KRB5_KTNAME',
  'NVIM',
  'NVIM_LISTEN_ADDRESS',
  'KITTY_LISTEN_ON',
  'WEZTERM_UNIX_SOCKET',
  'ALACRITTY_SOCKET',
  'WSL_INTEROP',
  'TMUX',
  'TMUX_PANE',
])
const AGENT_SOCKET_MATCH: CredentialMatch = Object.freeze({ rule: 'agent-socket', detail: 'agent or control socket' })

// Family 2. The shell's own directory names carry PWD as a whole token but are not passwords.
const SHELL_DIRECTORIES: ReadonlySet<string> = new Set(['PWD', 'OLDPWD'])
// Desktop-session metadata (ids, types, the bus address): SESSION there is a login, not a cookie.
const SESSION_METADATA = /^(?:XDG_SESSION_[A-Z0-9_]+|DBUS_SESSION_BUS_[A-Z0-9_]+|SESSION_MANAGER|DESKTOP_SESSION)$/
const SESSION_TOKEN = /(?:^|_)SESSION(?=_|$)/

/** Whole tokens that mark a credential. TOKENS is left out on purpose: `MAX_TOKENS` is a model setting. */
export const CREDENTIAL_NAME_TOKENS: readonly string[] = Object.freeze([
  'PASS',
  'PASSWD',
  'PASSWORD',
  'PWD',
  'PASSPHRASE',
  'AUTH',
  'OAUTH',
  'AUTHORIZATION',
  'BEARER',
  'JWT',
  'COOKIE',
  'COOKIES',
  'SESSION',
  'CREDENTIAL',
  'CREDENTIALS',
  'DSN',
  'WEBHOOK',
  'WEBHOOKS',
  'PRIVATE',
  'KEY',
  'KEYS',
  'SECRET',
  'SECRETS',
  'TOKEN',
  'PAT',
  'CONNECTION_STRING',
  'CONNECTION_STRINGS',
  'CONNECTIONSTRING',
  'CONNECTIONSTRINGS',
])

/** Substrings with no innocent compounds in environment names: they match anywhere in the name. */
export const CREDENTIAL_NAME_SUBSTRINGS: readonly string[] = Object.freeze([
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'COOKIE',
  'WEBHOOK',
])

// Longest alternatives first, so the reported token is the whole one (CONNECTION_STRINGS, not PASS).
const byLength = (words: readonly string[]) => [...words].sort((a, b) => b.length - a.length).join('|')
const NAME_TOKEN = new RegExp(`(?:^|_)(${byLength(CREDENTIAL_NAME_TOKENS)})(?=_|$)`)
const NAME_SUBSTRING = new RegExp(byLength(CREDENTIAL_NAME_SUBSTRINGS))
// A token ending in TOKEN or in a KEY that names a credential (`GITHUBTOKEN`, `APIKEY`); a bare
// glued KEY (`MONKEY`, `HOTKEY`, `TURNKEY`) is not one.
const NAME_GLUED =
  /(TOKEN|(?:API|ACCESS|PRIVATE|SIGNING|ENCRYPTION|MASTER|LICENSE|CLIENT|SERVICE|DEPLOY|ADMIN|AUTH|APP)KEY)(?=_|$)/

// Labels are built once per marker, so a verdict allocates nothing.
const nameMatches = new Map<string, CredentialMatch>()
function nameMatch(how: string, marker: string): CredentialMatch {
  const label = `${how} ${marker}`
  let match = nameMatches.get(label)
  if (match === undefined) {
    match = Object.freeze({ rule: 'credential-name', detail: label })
    nameMatches.set(label, match)
  }
  return match
}

/** The rule that makes `name` a credential or an agent socket, or undefined when none does. */
export function credentialNameMatch(name: string): CredentialMatch | undefined {
  let tokens = nameTokens(name)
  if (AGENT_SOCKET_NAMES.has(name) || AGENT_SOCKET_TOKENS.test(tokens)) return AGENT_SOCKET_MATCH
  if (SHELL_DIRECTORIES.has(name)) return undefined
  if (SESSION_METADATA.test(name)) tokens = tokens.replace(SESSION_TOKEN, '')
  const token = NAME_TOKEN.exec(tokens)
  if (token !== null) return nameMatch('name token', token[1] ?? '')
  const substring = NAME_SUBSTRING.exec(tokens)
  if (substring !== null) return nameMatch('name contains', substring[0])
  const glued = NAME_GLUED.exec(tokens)
  if (glued !== null) return nameMatch('name token ends in', glued[1] ?? '')
  return undefined
}

/** True iff `name` alone marks a credential or an agent socket (the name rules, no value check). */
export function isCredentialShapedName(name: string): boolean {
  return credentialNameMatch(name) !== undefined
}

// Family 3. Each shape starts with a literal or a narrow class, so one combined scan decides the
// usual clean value in a single pass (about 1.5 ns a character here).
const VALUE_SHAPES: readonly (readonly [string, RegExp])[] = [
  // scheme://user:pass@ or scheme://:pass@ (Redis); a user without a password is not a secret.
  ['URL with a password', /:\/\/[^\s/?#@:]*:[^\s/?#@]+@/],
  ['PEM private key', /-----BEGIN [A-Z0-9 ]*PRIVATE KEY/],
  ['JWT', /\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/],
  ['GitHub token', /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})/],
  ['GitLab token', /\bgl(?:pat|ptt|dt|rt)-[\w-]{20,}/],
  ['sk- API key', /\bsk-[\w-]{20,}/],
  ['Stripe key', /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/],
  ['Slack token', /\b(?:xox[abeoprs]-|xapp-)[\w-]{10,}/],
  ['AWS access key id', /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/],
  ['Google API key', /\bAIza[\w-]{35}/],
  ['npm token', /\bnpm_[A-Za-z0-9]{36}\b/],
  ['Hugging Face token', /\bhf_[A-Za-z0-9]{30,}/],
  ['PyPI token', /\bpypi-AgEIcHlwaS5vcmc/],
  ['webhook URL', /hooks\.slack\.com\/(?:services|workflows|triggers)\/|discord(?:app)?\.com\/api\/webhooks\//],
]
const ANY_VALUE_SHAPE = new RegExp(VALUE_SHAPES.map(([, re]) => `(?:${re.source})`).join('|'))
const VALUE_MATCHES: readonly (readonly [CredentialMatch, RegExp])[] = VALUE_SHAPES.map(([detail, re]) => [
  Object.freeze({ rule: 'credential-value', detail }),
  re,
])
/** No shape above fits in fewer characters (`://:x@` is the shortest). */
const SHORTEST_SECRET = 6

/** The shape that makes `value` a credential, or undefined when none does. */
export function credentialValueMatch(value: string): CredentialMatch | undefined {
  if (value.length < SHORTEST_SECRET || !ANY_VALUE_SHAPE.test(value)) return undefined
  // Only a hit pays for finding which shape it was.
  for (const [match, re] of VALUE_MATCHES) if (re.test(value)) return match
  return undefined
}

/** The values no secret can be: switches and flags (compared lower-cased). */
const NOT_SECRET_VALUES: ReadonlySet<string> = new Set(['', '0', '1', 'true', 'false', 'yes', 'no', 'on', 'off'])

/** True iff `value` cannot be a secret (a switch: empty, 0, 1, true, false, yes, no, on, off, any case). */
export function cannotBeSecret(value: string): boolean {
  return value.length <= 5 && NOT_SECRET_VALUES.has(value.toLowerCase())
}

/**
 * The first rule (sockets, then names, then values) that makes one entry a credential; none for a
 * value that cannot be a secret.
 */
export function credentialMatch(name: string, value: string): CredentialMatch | undefined {
  if (cannotBeSecret(value)) return undefined
  return credentialNameMatch(name) ?? credentialValueMatch(value)
}
