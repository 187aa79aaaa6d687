// What a command takes away, read from its text: every removal tool's operands, against the dir
// the command runs in (its own `cd`s followed), and nothing the text does not pin down.
import { describe, expect, it } from 'vitest'
import { removalsIn } from '../../../../src/sandbox/remedy/removals.js'

const cwd = '/w/root'
const home = '/home/u'
const of = (command: string) => removalsIn(command, cwd, home)
const tree = (p: string) => ({ path: p, kind: 'tree' })
const contents = (p: string) => ({ path: p, kind: 'contents' })

describe('removalsIn', () => {
  it('rm -r / -rf / -R / --recursive: each operand a tree; plain rm none', () => {
    expect(of('rm -rf ~/code ~/.config')).toEqual([tree('/home/u/code'), tree('/home/u/.config')])
    expect(of('rm -R ../out/a && rm --recursive -f -- -odd')).toEqual([tree('/w/out/a'), tree('/w/root/-odd')])
    expect(of('rm -fr "$HOME/x" ${HOME}/y')).toEqual([tree('/home/u/x'), tree('/home/u/y')])
    expect(of('rm -f a.txt')).toEqual([])
  })

  it('a glob in the last name empties its dir; an unknown word, a quoted ~, or / names nothing', () => {
    expect(of('rm -rf /w/out/code/*')).toEqual([contents('/w/out/code')])
    expect(of('rm -rf "$DEST" $(pwd)/x /w/*/y / "~/z"')).toEqual([tree('/w/root/~/z')])
  })

  it('rmdir (-p: up to the first name), rimraf, mv sources (-t DIR: all but DIR)', () => {
    expect(of('rmdir -p a/b/c /w/out/e')).toEqual([tree('/w/root/a'), tree('/w/out/e')])
    expect(of('npx -y rimraf build')).toEqual([tree('/w/root/build')])
    expect(of('rimraf build dist')).toEqual([tree('/w/root/build'), tree('/w/root/dist')])
    expect(of('mv /w/out/a /w/out/b dest/')).toEqual([tree('/w/out/a'), tree('/w/out/b')])
    expect(of('mv -t dest /w/out/a')).toEqual([tree('/w/out/a')])
  })

  it('find START… -delete: the start points as trees when nothing could spare them, else emptied; without -delete none', () => {
    expect(of('find /w/out/c /w/out/d -delete')).toEqual([tree('/w/out/c'), tree('/w/out/d')])
    expect(of('find . -depth -maxdepth 3 -delete')).toEqual([tree('/w/root')])
    expect(of('find /w/out/c -name "*.o" -delete')).toEqual([contents('/w/out/c')])
    expect(of('find -L /w/out/c -mindepth 1 -delete')).toEqual([contents('/w/out/c')])
    expect(of('find /w/out -name x -print')).toEqual([])
  })

  it('git clean: the dir it runs in is emptied (each -C relative to the one before)', () => {
    expect(of('git clean -fdx')).toEqual([contents('/w/root')])
    expect(of('git -C /w/out -C repo -c core.x=y clean -fd')).toEqual([contents('/w/out/repo')])
    expect(of('git status')).toEqual([])
  })

  it("follows the text's own cd, and nothing after a cd it cannot follow", () => {
    expect(of('cd /w/out && rm -rf code; cd sub && rm -r x')).toEqual([tree('/w/out/code'), tree('/w/out/sub/x')])
    expect(of('cd "$D" && rm -rf code')).toEqual([])
    expect(of('cd && rm -rf code')).toEqual([tree('/home/u/code')])
  })

  it('reads a shell -c script, wrappers and assignments, and literal library calls (Python, Node)', () => {
    expect(of(`bash -c 'cd /w/out && rm -rf code'`)).toEqual([tree('/w/out/code')])
    expect(of('LC_ALL=C sudo -n rm -rf /w/out/x')).toEqual([tree('/w/out/x')])
    expect(of(`python3 -c "import shutil; shutil.rmtree('/w/out/venv')"`)).toEqual([tree('/w/out/venv')])
    expect(of(`node -e "require('fs').rmSync('dist', { recursive: true, force: true })"`)).toEqual([
      tree('/w/root/dist'),
    ])
    expect(of(`node -e "require('fs').rmSync('file.txt')"`)).toEqual([])
  })
})
