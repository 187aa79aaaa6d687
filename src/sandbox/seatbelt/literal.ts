/**
 * Paths as Seatbelt sees them, and as SBPL string literals that no path can break out of.
 *
 * Spelling: Seatbelt matches the path the kernel resolved, so `/tmp/x` must be written
 * `/private/tmp/x` (likewise `/var` and `/etc`, symlinks into `/private` on every macOS). A
 * rule written with the alias spelling silently matches nothing. `grantsFor` realpaths what
 * exists; on a Mac that already yields `/private/...`, and the lexical mapping here makes the
 * same profile come out of a Linux host (goldens, `explain`) and covers paths that do not exist.
 *
 * Quoting: SBPL is read by a Scheme reader. Inside `"..."` only `\` and `"` are special, so
 * escaping exactly those two makes every other character (newlines, `;`, parentheses, any
 * UTF-8, whose multi-byte sequences never contain either byte) plain text of the string. NUL
 * cannot pass through argv or C strings and is refused, and so is a lone UTF-16 surrogate: it
 * would reach the kernel as U+FFFD, a different path from the one the profile names.
 */

/** The macOS top-level aliases that are symlinks into `/private`. */
export const DARWIN_PRIVATE_ALIASES = ['/tmp', '/var', '/etc'] as const

/** `p` spelled as the macOS kernel resolves it: `/tmp`, `/var` and `/etc` prefixes move under `/private`. */
export function darwinCanonicalPath(p: string): string {
  for (const alias of DARWIN_PRIVATE_ALIASES) {
    if (p === alias || p.startsWith(`${alias}/`)) return `/private${p}`
  }
  return p
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why `text` cannot be an SBPL string (undefined when it can). */
export function sbplStringProblem(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain a NUL byte'
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (no lone surrogate)'
  return undefined
}

/** `text` as an SBPL string literal: `\` and `"` escaped, everything else verbatim; throws on NUL or a lone surrogate. */
export function sbplString(text: string): string {
  const problem = sbplStringProblem(text)
  if (problem !== undefined) throw new Error(`sbplString: ${problem}: ${JSON.stringify(text)}`)
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`
}
