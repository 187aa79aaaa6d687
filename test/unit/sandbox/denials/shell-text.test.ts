// Where each word of a command text ran: cd and -C followed through operators and subshells,
// nested shells' scripts read the same way (sh, dash, bash -lc, quotes within quotes), and what
// the text cannot say left unknown.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  basesForToken,
  directoriesIn,
  placesNaming,
  placesOfCommands,
  readCommandText,
} from '../../../../src/sandbox/denials/shell-text.js'
import { scratchDir } from '../../../support/scratch.js'

/** The places of the command whose first word is `program`. */
const placeOf = (command: string, program: string, cwd = '/w') =>
  readCommandText(command, cwd).commands.find((c) => c.words[0] === program)?.dirs

describe('directoriesIn', () => {
  it('finds cd DIR, git -C DIR and make -C DIR, quoted or not, resolved against the cwd', () => {
    expect(directoriesIn('cd sub && touch x', '/w')).toEqual(['/w/sub'])
    expect(directoriesIn("git -C '/repo two' commit; make -C build", '/w')).toEqual(['/repo two', '/w/build'])
    expect(directoriesIn('(cd "a b"; ls) | cd /abs', '/w')).toEqual(['/w/a b', '/abs'])
    expect(directoriesIn('echo cdrom -Cx', '/w')).toEqual([])
  })

  it("sees a cd inside a nested shell's script, in any shell and any quoting", () => {
    expect(directoriesIn("sh -c 'cd a && echo x > ../../../f'", '/w')).toEqual(['/w/a'])
    expect(directoriesIn(`bash -c "dash -c 'cd a && cd b'"`, '/w')).toEqual(['/w/a', '/w/a/b'])
    expect(directoriesIn("env FOO=1 bash -lc 'cd /x && make -C y'", '/w')).toEqual(['/x', '/x/y'])
  })
})

describe('readCommandText', () => {
  it('a command after `cd DIR &&` runs in DIR; a subshell keeps its cd to itself', () => {
    expect(placeOf('cd a && touch x', 'touch')).toEqual(['/w/a'])
    expect(placeOf('(cd a && true); touch x', 'touch')).toEqual(['/w'])
    expect(placeOf('cd a | true; touch x', 'touch')).toEqual(['/w'])
    expect(placeOf("sh -c 'cd a && touch x'", 'touch')).toEqual(['/w/a'])
    expect(placeOf(`bash -c "sh -c 'cd a; cd /b && touch x'"`, 'touch')).toEqual(['/b'])
  })

  it('after `cd DIR;` DIR when it exists (the cd succeeded), else either', () => {
    const base = scratchDir('cordon-shell-text')
    fs.mkdirSync(path.join(base, 'here'))
    expect(placeOf('cd here; touch x', 'touch', base)).toEqual([path.join(base, 'here')])
    expect(placeOf('cd gone; touch x', 'touch', base)).toEqual([base, path.join(base, 'gone')])
    // `cd D || exit`: the fallback runs where the shell was; what follows, where the cd went.
    expect(placeOf('cd here || echo no; touch x', 'echo', base)).toEqual([base])
    expect(placeOf('cd here || echo no; touch x', 'touch', base)).toEqual([path.join(base, 'here')])
  })

  it('what the text cannot say stays unknown: cd to a variable, to ~, back, or nowhere', () => {
    for (const cd of ['cd "$d"', 'cd ~/x', 'cd -', 'cd', 'cd $(mktemp -d)', 'popd'])
      expect(placeOf(`${cd} && touch x`, 'touch')).toBeUndefined()
    expect(placeOf('cd "$d" && cd /abs && touch x', 'touch')).toEqual(['/abs'])
  })

  it('-C DIR moves the command; assignments and comments are not programs', () => {
    expect(placeOf('cd a && git -C b -C c status', 'git')).toEqual(['/w/a/b/c'])
    expect(placeOf('ls -C x', 'ls')).toEqual(['/w'])
    expect(readCommandText('A=1 B=2 make # cd x', '/w').commands).toEqual([
      { words: ['A=1', 'B=2', 'make'], dirs: ['/w'] },
    ])
  })
})

describe('placesNaming and placesOfCommands', () => {
  it('undefined when no word names the token; empty when one does where the text cannot say', () => {
    const runs = (command: string) => [{ cwd: '/w', command }]
    expect(placesNaming('x', runs('make'))).toBeUndefined()
    expect(placesNaming('x', runs('cd "$d" && touch x'))).toEqual([])
    expect(placesNaming('x', runs('touch --reference=x y'))).toEqual(['/w'])
    expect(placesOfCommands(runs('cd a && make; cd /b && make'))).toEqual(['/w/a', '/b'])
    expect(
      placesOfCommands([
        { cwd: '/l', command: 'touch x' },
        { cwd: '/m', command: 'cd "$d" && ls' },
      ]),
    ).toEqual([])
  })
})

describe('basesForToken', () => {
  it('the places of the words naming the token; else every place a command ran; else unknown', () => {
    const runs = (command: string) => [{ cwd: '/w', command }]
    expect(basesForToken('../../../f', runs("sh -c 'cd a && echo x > ../../../f'"))).toEqual(['/w/a'])
    expect(basesForToken('out.txt', runs('cd a && make'))).toEqual(['/w/a'])
    expect(basesForToken('x', runs('touch x; cd /o && touch x'))).toEqual(['/w', '/o'])
    expect(basesForToken('f', runs('cd "$d" && make'))).toEqual([])
    expect(basesForToken('f', runs('cd a'))).toEqual(['/w'])
    expect(basesForToken('out', runs('tar -x --directory=out'))).toEqual(['/w'])
  })
})
