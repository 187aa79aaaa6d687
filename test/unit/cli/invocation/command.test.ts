// The command `cordon run` executes: `-c STRING` as it is, or the words after `--` quoted one by
// one; and the hint for one quoted word that bash did not find.
import { describe, expect, it } from 'vitest'
import { commandOf, oneWordHint, runCommandFrom } from '../../../../src/cli/invocation/command.js'

describe('runCommandFrom', () => {
  it('-c: the string as it is; words: each quoted; a lone bash -c SCRIPT: the script', () => {
    expect(runCommandFrom('echo $HOME | wc', [])).toBe('echo $HOME | wc')
    expect(runCommandFrom(undefined, ['echo', 'a b', '$HOME'])).toBe("echo 'a b' '$HOME'")
    expect(runCommandFrom(undefined, ['bash', '-c', 'cd x && make'])).toBe('cd x && make')
    expect(commandOf(['/bin/bash', '-c', 'true'])).toBe('true')
    expect(commandOf(['sh', '-c', 'true'])).toBe('sh -c true')
  })

  it('neither, both, or an empty string: a usage error saying how', () => {
    expect(() => runCommandFrom(undefined, [])).toThrow(
      /^give the command after --, e\.g\. cordon run -- ls -la, or as one string: cordon run -c 'ls -la'$/,
    )
    expect(() => runCommandFrom('ls', ['-la'])).toThrow(
      '-c takes the whole command as one string; drop the words after it (-la…) or drop -c',
    )
    expect(() => runCommandFrom('  ', [])).toThrow('-c: the command is empty')
  })

  it('a NUL byte, which no program can take: a usage error naming the word, before anything starts', () => {
    expect(() => runCommandFrom('echo a\0b', [])).toThrow(/^-c: the command \$'echo a\\x00b' holds a NUL byte/)
    expect(() => runCommandFrom(undefined, ['echo', 'a\0'])).toThrow(
      /^the command's word \$'a\\x00' holds a NUL byte, which no command can take$/,
    )
  })
})

describe('oneWordHint', () => {
  it('one word with a space or shell syntax, exit 127: the hint, the word quoted', () => {
    expect(oneWordHint(['echo $HOME'], 127)).toBe(
      "cordon: hint: 'echo $HOME' ran as one word, the name of a program; to run it as a shell command: cordon run -c 'echo $HOME'",
    )
    for (const word of ['ls|wc', 'a;b', 'x>y', 'ls *', "it's"]) expect(oneWordHint([word], 127)).toBeDefined()
  })

  it('nothing otherwise: another status, several words, a plain name', () => {
    expect(oneWordHint(['echo $HOME'], 0)).toBeUndefined()
    expect(oneWordHint(['echo $HOME'], 1)).toBeUndefined()
    expect(oneWordHint(['echo $HOME'], null)).toBeUndefined()
    expect(oneWordHint(['echo $HOME', 'x'], 127)).toBeUndefined()
    expect(oneWordHint(['no-such-program'], 127)).toBeUndefined()
    expect(oneWordHint([], 127)).toBeUndefined()
  })

  it('a word with terminal controls is shown escaped', () => {
    expect(oneWordHint(['a b\x1b[2J'], 127)).toContain("$'a b\\x1b[2J'")
  })
})
