/**
 * The CLI's argument parsing: node:util parseArgs reads the words, and this file judges them, so
 * that each mistake is one line naming the flag and what was expected (parseArgs' own strict
 * errors are several lines, and call `--timeout -5` "ambiguous" without saying what is wrong).
 */
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { displayLine } from '../../policy/display-text.js'
import { shellQuote } from '../shell-quote.js'
import { UsageError } from '../usage-error.js'

/** The options one verb takes, as parseArgs describes them. */
export type CliOptions = NonNullable<ParseArgsConfig['options']>

/** Parsed words: each option's value (a string, a boolean, or a list), and the words that are not options. */
export interface ParsedWords {
  values: Record<string, unknown>
  positionals: string[]
}

/** One option token as parseArgs reports it (its `tokens: true` form). */
interface OptionToken {
  name: string
  rawName: string
  index: number
  value?: string | undefined
  inlineValue?: boolean | undefined
}

/** The edit distance of `a` and `b` (insertions, deletions, substitutions, swapped neighbours): a typo is one or two. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j))
  const at = (i: number, j: number) => d[i]?.[j] as number
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1)
      ;(d[i] as number[])[j] = best
    }
  }
  return at(a.length, b.length)
}

/** The known long option `name` most likely meant (a prefix of one, or a typo away), if exactly one is. */
export function closestOption(name: string, options: CliOptions): string | undefined {
  const names = Object.keys(options)
  const prefixed = names.filter((n) => n.startsWith(name))
  if (name.length >= 3 && prefixed.length === 1) return prefixed[0]
  const most = name.length > 5 ? 2 : 1
  // Lengths further apart than that are further apart in edits too: a long word costs no table.
  const near = names.filter((n) => Math.abs(n.length - name.length) <= most && editDistance(n, name) <= most)
  return near.length === 1 ? near[0] : undefined
}

/** Whether `word`, taken as an option's value, is rather the next option (or `--`): the value was left out. */
function isOptionWord(word: string, options: CliOptions): boolean {
  if (word.startsWith('--')) return true
  return /^-[A-Za-z]$/.test(word) && Object.values(options).some((o) => o.short === word.slice(1))
}

/** The UsageError for an unknown option: the nearest known one, or where the command's words go. */
function unknownOption(
  token: OptionToken,
  args: readonly string[],
  options: CliOptions,
  firstWord?: number,
): UsageError {
  const raw = args[token.index] ?? token.rawName
  // `--name=value` is shown by its name; a short group (`-x=1`, `-=`) is one word, shown whole.
  const shown = displayLine(raw.startsWith('--') && raw.includes('=') ? raw.slice(0, raw.indexOf('=')) : raw)
  if (firstWord !== undefined && firstWord < token.index) {
    const words = args.slice(firstWord).map(shellQuote).join(' ')
    return new UsageError(`unknown option ${shown}; the command goes after --, as in: -- ${displayLine(words)}`)
  }
  const meant = token.rawName.startsWith('--') ? closestOption(token.name, options) : undefined
  return new UsageError(`unknown option ${shown}${meant === undefined ? '' : ` (did you mean --${meant}?)`}`)
}

/** The UsageError for a known option used wrongly: a value left out, or one given to a flag that takes none. */
function misusedOption(token: OptionToken, options: CliOptions): UsageError | undefined {
  const spec = options[token.name] as CliOptions[string]
  if (spec.type === 'boolean') {
    return token.value === undefined
      ? undefined
      : new UsageError(`${token.rawName} takes no value (got ${displayLine(`${token.rawName}=${token.value}`)})`)
  }
  if (token.value === undefined) return new UsageError(`${token.rawName} needs a value`)
  if (token.inlineValue !== true && isOptionWord(token.value, options)) {
    const next = token.value === '--' ? 'the -- that starts the command' : displayLine(token.value)
    return new UsageError(`${token.rawName} needs a value, but the next word is ${next}`)
  }
  return undefined
}

/**
 * Parses `args` against `options`; throws a UsageError naming the first mistake: an unknown option
 * (with the known one it most likely meant, or, for a verb that takes a command, after the
 * command's first word: that the command goes after --), a value left out, a value given to a
 * flag. A value may start with one dash (`--timeout -5` reaches the check of --timeout, which says
 * what is wrong).
 */
export function parseWords(args: string[], options: CliOptions, takes: { command?: boolean } = {}): ParsedWords {
  const { values, positionals, tokens } = parseArgs({
    args,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  })
  let firstWord: number | undefined
  for (const token of tokens) {
    if (token.kind === 'option-terminator') break
    if (token.kind === 'positional') {
      if (takes.command) firstWord ??= token.index
      continue
    }
    if (!Object.hasOwn(options, token.name)) throw unknownOption(token, args, options, firstWord)
    const misused = misusedOption(token, options)
    if (misused) throw misused
  }
  return { values, positionals }
}
