// A command text as its simple commands: quotes taken away (and remembered), separators and
// redirections outside quotes ending commands and words, expansions kept as written.
import { describe, expect, it } from 'vitest'
import { simpleCommands } from '../../../../src/sandbox/remedy/shell-words.js'

const texts = (command: string) => simpleCommands(command).map((words) => words.map((w) => w.text))

describe('simpleCommands', () => {
  it('splits lists and pipelines at ; & | && || newlines and parentheses', () => {
    expect(texts('cd a && rm -rf b; ls | wc -l\n(echo x) || true & wait')).toEqual([
      ['cd', 'a'],
      ['rm', '-rf', 'b'],
      ['ls'],
      ['wc', '-l'],
      ['echo', 'x'],
      ['true'],
      ['wait'],
    ])
  })

  it("takes quotes and backslashes away and says a word was quoted; a separator inside quotes is the word's", () => {
    const [words] = simpleCommands(`rm -rf 'a b;c' "d|e" f\\ g plain`)
    expect(words?.map((w) => [w.text, w.quoted])).toEqual([
      ['rm', false],
      ['-rf', false],
      ['a b;c', true],
      ['d|e', true],
      ['f g', true],
      ['plain', false],
    ])
  })

  it('keeps an expansion as written and marks it, a $( ) with its parentheses whole; single quotes expand nothing', () => {
    const [words] = simpleCommands(`rm -rf "$HOME/x" $(dirname "$(pwd)")/y '$HOME' \`pwd\``)
    expect(words?.map((w) => [w.text, w.expands])).toEqual([
      ['rm', false],
      ['-rf', false],
      ['$HOME/x', true],
      ['$(dirname "$(pwd)")/y', true],
      ['$HOME', false],
      ['`pwd`', true],
    ])
  })

  it('leaves redirections out, their fd number and target too, and comments', () => {
    expect(texts('rm -rf a 2>&1 >/dev/null b < in # rm -rf c')).toEqual([['rm', '-rf', 'a', 'b']])
    expect(texts('rm -rf x 2> err.log')).toEqual([['rm', '-rf', 'x']])
  })
})
