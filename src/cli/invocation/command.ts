/**
 * The bash command of `cordon run`: `-c STRING` (`--command`) as it is, or the words after `--`,
 * each shell-quoted (so `-- echo 'a b'` runs exactly that). One quoted word that reads like a
 * shell command (`-- 'echo $HOME'`) names a program no one has: when bash says so (127), a hint.
 */
import { displayShellWord, shellQuote } from '../shell-quote.js'
import { UsageError } from '../usage-error.js'

/** The exit status bash gives a command it did not find. */
const NOT_FOUND = 127

/** What separates words or means something to a shell: a word holding one was likely meant for `-c`. */
const SHELL_SYNTAX = /[\s$|&;<>()`*?[\]{}~'"\\]/

/**
 * The bash command for `cordon run -- WORD...`: the words shell-quoted, except that a lone
 * `bash -c SCRIPT` runs SCRIPT itself — the same program (the executor's own shell is bash), and
 * cordon then sees where each of its commands failed (denial paths after a `cd`).
 */
export function commandOf(words: readonly string[]): string {
  if (
    words.length === 3 &&
    (words[0] === 'bash' || words[0] === '/bin/bash' || words[0] === '/usr/bin/bash') &&
    words[1] === '-c'
  )
    return words[2] as string
  return words.map(shellQuote).join(' ')
}

/**
 * Throws a UsageError naming the first of the command's `words` that holds a NUL byte: no program
 * or argument can (execve ends a string there), so it is refused before anything starts.
 */
export function refuseNulWords(words: readonly string[], what = "the command's word"): void {
  const word = words.find((w) => w.includes('\0'))
  if (word !== undefined)
    throw new UsageError(`${what} ${displayShellWord(word)} holds a NUL byte, which no command can take`)
}

/**
 * The command `run` executes, from `-c STRING` or the words after `--`. Neither, both, an
 * empty STRING or a NUL byte throws a UsageError saying how to give it.
 */
export function runCommandFrom(command: unknown, words: readonly string[]): string {
  if (typeof command === 'string') {
    if (words.length > 0)
      throw new UsageError(
        `-c takes the whole command as one string; drop the words after it (${displayShellWord(words[0] as string)}…) or drop -c`,
      )
    if (command.trim() === '') throw new UsageError('-c: the command is empty')
    refuseNulWords([command], '-c: the command')
    return command
  }
  if (words.length === 0)
    throw new UsageError(
      "give the command after --, e.g. cordon run -- ls -la, or as one string: cordon run -c 'ls -la'",
    )
  refuseNulWords(words)
  return commandOf(words)
}

/**
 * The hint for a run of one word that holds a space or shell syntax and that bash did not find
 * (exit 127): the word was run as a program's name; `-c` runs it as a shell command. Else undefined.
 */
export function oneWordHint(words: readonly string[], exitCode: number | null): string | undefined {
  const word = words[0]
  if (words.length !== 1 || word === undefined || exitCode !== NOT_FOUND || !SHELL_SYNTAX.test(word)) return undefined
  return `cordon: hint: ${displayShellWord(word)} ran as one word, the name of a program; to run it as a shell command: cordon run -c ${displayShellWord(word)}`
}
