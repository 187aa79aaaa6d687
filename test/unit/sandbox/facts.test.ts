// The denial classifier's pure parts: which paths a denial line names (quoted or bare, relative
// ones against the command's directories), the directories a command switches to, and the facts
// that keep a line from counting (no signature, a writable path, a failure ordinary permissions
// would have caused too, a file that simply is not executable).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { classifyDenial, type DenialInput, directoriesIn, isWithin, pathsInLine } from '../../../src/sandbox/facts.js'
import { scratchDir } from '../../support/scratch.js'

describe('pathsInLine', () => {
  it('reads quoted paths in every quoting style tools use', () => {
    expect(pathsInLine("touch: cannot touch '/etc/a': Permission denied", '/w')).toEqual(['/etc/a'])
    expect(pathsInLine('grep: "/etc/b": Permission denied', '/w')).toEqual(['/etc/b'])
    expect(pathsInLine("cp: cannot create regular file `/etc/c': Permission denied", '/w')).toEqual(['/etc/c'])
    expect(pathsInLine('mkdir: cannot create directory ‘/etc/d’: Permission denied', '/w')).toEqual(['/etc/d'])
  })

  it('reads the bare token before ": <error>" and leaves program names out', () => {
    expect(pathsInLine('sh: 1: cannot create /etc/e: Permission denied', '/w')).toEqual(['/etc/e'])
    expect(pathsInLine('bash: /usr/f: Read-only file system', '/w')).toEqual(['/usr/f'])
    expect(pathsInLine('tee: /etc/g: Operation not permitted', '/w')).toEqual(['/etc/g'])
    expect(pathsInLine('touch: Permission denied', '/w')).toEqual([])
  })

  it('takes a bare name for a path only where a path stands, never a word of the message', () => {
    expect(pathsInLine('bash: Makefile: Permission denied', '/w')).toEqual(['/w/Makefile'])
    expect(pathsInLine('bash: line 1: out: Read-only file system', '/w')).toEqual(['/w/out'])
    expect(pathsInLine('script: failed to create pseudo-terminal: Permission denied', '/w')).toEqual([])
    expect(pathsInLine('/usr/bin/ld: cannot open output file hello: Permission denied', '/w')).toEqual(['/w/hello'])
    expect(pathsInLine('tar: build: Cannot mkdir: Read-only file system', '/w')).toEqual(['/w/build'])
  })

  it('names each path once, and normalises absolute ones', () => {
    expect(pathsInLine("rm: cannot remove '/etc//h/../h': Permission denied", '/w')).toEqual(['/etc/h'])
    expect(pathsInLine("ln: '/etc/h': Permission denied (at '/etc/h')", '/w')).toEqual(['/etc/h'])
  })

  it('resolves a relative path against the one base that could hold it; never guesses between several', () => {
    const base = scratchDir('cordon-facts')
    fs.mkdirSync(path.join(base, 'sub', 'out'), { recursive: true })
    const line = "touch: cannot touch 'out/x': Permission denied"
    expect(pathsInLine(line, base, [path.join(base, 'sub'), base])).toEqual([path.join(base, 'sub', 'out', 'x')])
    expect(pathsInLine(line, base, ['/nonexistent-base', base])).toEqual([])
    fs.mkdirSync(path.join(base, 'out'))
    expect(pathsInLine(line, base, [path.join(base, 'sub'), base])).toEqual([])
    expect(pathsInLine("touch: cannot touch 'y': Permission denied", base)).toEqual([path.join(base, 'y')])
  })
})

describe('directoriesIn', () => {
  it('finds cd DIR, git -C DIR and make -C DIR, quoted or not, resolved against the cwd', () => {
    expect(directoriesIn('cd sub && touch x', '/w')).toEqual(['/w/sub'])
    expect(directoriesIn("git -C '/repo two' commit; make -C build", '/w')).toEqual(['/repo two', '/w/build'])
    expect(directoriesIn('(cd "a b"; ls) | cd /abs', '/w')).toEqual(['/w/a b', '/abs'])
    expect(directoriesIn('echo cdrom -Cx', '/w')).toEqual([])
  })
})

describe('isWithin', () => {
  it('is the root itself or below it, never a sibling sharing a prefix', () => {
    expect(isWithin('/a/b', '/a/b')).toBe(true)
    expect(isWithin('/a/b/c', '/a/b')).toBe(true)
    expect(isWithin('/a/bc', '/a/b')).toBe(false)
    expect(isWithin('/a', '/a/b')).toBe(false)
    expect(isWithin('/x', '/')).toBe(true)
  })
})

describe('classifyDenial', () => {
  const base = scratchDir('cordon-classify')
  const outside = path.join(base, 'outside')
  fs.mkdirSync(outside)
  const root = path.join(base, 'root')
  fs.mkdirSync(root)
  const run = (over: Partial<DenialInput>): DenialInput => ({
    backend: 'landlock',
    exitCode: 1,
    runnerFailed: false,
    stderr: `touch: cannot touch '${outside}/x': Permission denied`,
    cwd: root,
    writable: [root],
    ...over,
  })

  it('a denial: nonzero exit, the signature, a path outside the writable set the uid could write unsandboxed', () => {
    expect(classifyDenial(run({}))).toEqual({ denied: true, deniedPaths: [path.join(outside, 'x')] })
  })

  it('never for exit 0, a signal death, a runner failure or a backend without signatures', () => {
    for (const over of [{ exitCode: 0 }, { exitCode: null }, { runnerFailed: true }, { backend: 'none' }])
      expect(classifyDenial(run(over))).toEqual({ denied: false, deniedPaths: [] })
  })

  it("only the backend's own denial text counts", () => {
    const eperm = `touch: cannot touch '${outside}/x': Operation not permitted`
    expect(classifyDenial(run({ stderr: eperm })).denied).toBe(false)
    expect(classifyDenial(run({ stderr: eperm, backend: 'seatbelt' })).denied).toBe(true)
    // EROFS is bubblewrap's dialect, and a Landlock read-only view's (its mounts refuse first).
    const erofs = `touch: cannot touch '${outside}/x': Read-only file system`
    expect(classifyDenial(run({ stderr: erofs })).denied).toBe(false)
    expect(classifyDenial(run({ stderr: erofs, backend: 'landlock-view' })).denied).toBe(true)
  })

  it('not a path inside the writable set, nor one ordinary permissions refuse anyway', () => {
    expect(classifyDenial(run({ stderr: `touch: cannot touch '${root}/x': Permission denied` })).denied).toBe(false)
    // A refusal ordinary permissions would make anyway is not the sandbox's.
    const locked = path.join(outside, 'locked')
    fs.mkdirSync(locked, { recursive: true, mode: 0o555 })
    fs.chmodSync(locked, 0o555)
    const who = { uid: 12345, gids: [12345] }
    expect(
      classifyDenial(run({ stderr: `touch: cannot touch '${locked}/x': Permission denied`, commandUser: who })).denied,
    ).toBe(false)
  })

  it('a 126 on an existing file that is not executable is the file, not the sandbox', () => {
    const script = path.join(outside, 'script.sh')
    fs.writeFileSync(script, 'echo\n', { mode: 0o644 })
    const stderr = `bash: ${script}: Permission denied`
    expect(classifyDenial(run({ exitCode: 126, stderr })).denied).toBe(false)
  })

  it('relative paths resolve where the failed command ran, as the shell logged it', () => {
    const stderr = "touch: cannot touch 'x': Permission denied"
    const command = `cd ${outside} && touch x`
    const logged = classifyDenial(run({ stderr, command, failures: [{ cwd: outside, command: 'touch x' }] }))
    expect(logged).toEqual({ denied: true, deniedPaths: [path.join(outside, 'x')] })
    // Without the log the command could have failed in the cwd (writable) or after the cd: no guess.
    expect(classifyDenial(run({ stderr, command }))).toEqual({ denied: false, deniedPaths: [] })
    // Both candidates refused by the sandbox: a denial, its path unknown.
    const elsewhere = path.join(outside, 'elsewhere')
    fs.mkdirSync(elsewhere, { recursive: true })
    const both = classifyDenial(run({ stderr, command: `cd ${elsewhere} && touch x`, cwd: outside }))
    expect(both).toEqual({ denied: true, deniedPaths: [] })
  })

  it('error codes are not relative paths; npm names the path on a later line', () => {
    const npm = ['npm error code EACCES', 'npm error syscall mkdir', `npm error path ${outside}/cache`].join('\n')
    expect(classifyDenial(run({ stderr: npm }))).toEqual({ denied: true, deniedPaths: [`${outside}/cache`] })
    expect(pathsInLine('open EACCES: Permission denied', '/w')).toEqual([])
  })

  it('a write through a symlink inside the root lands outside: that is the path denied', () => {
    const link = path.join(root, 'out-link')
    fs.rmSync(link, { force: true })
    fs.symlinkSync(outside, link)
    const facts = classifyDenial(run({ stderr: `sh: 1: cannot create ${link}/f: Permission denied` }))
    expect(facts).toEqual({ denied: true, deniedPaths: [path.join(outside, 'f')] })
  })

  it("git's 'could not create leading directories' of a path whose parent does not exist", () => {
    const stderr = `fatal: could not create leading directories of '${outside}/a/b/c': Permission denied`
    expect(classifyDenial(run({ stderr })).deniedPaths).toEqual([`${outside}/a/b/c`])
  })

  it('a refused read of a hidden path is not a write denial; errors on stdout count', () => {
    const secret = path.join(outside, 'id_rsa')
    const stderr = `cat: ${secret}: Permission denied`
    expect(classifyDenial(run({ stderr, hidden: [secret] })).denied).toBe(false)
    expect(
      classifyDenial(run({ stderr: '', stdout: `sh: 1: cannot create ${outside}/y: Permission denied` })).denied,
    ).toBe(true)
  })
})
