// The refusal classifier: over the labelled corpus of real tools' messages (corpus.json, collected
// by running each tool confined on both backends, plus the cases that must not count), then the
// facts that keep a line from counting (no signature, a writable path, a failure ordinary
// permissions would have caused too, a file that simply is not executable), refusals whatever the
// exit, and writes at hidden places.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { classifyDenial, type DenialInput } from '../../../../src/sandbox/denials/classify.js'
import { scratchDir } from '../../../support/scratch.js'

interface CorpusEntry {
  tool: string
  backend: string
  mode: 'read-only' | 'workspace-write'
  command: string
  cwd: string
  exit: number | null
  stderr: string
  stdout?: string
  setup: string[]
  hidden?: string[]
  protected?: string[]
  failures?: Array<{ cwd: string; command: string }>
  expected: { refused: string[]; denied: boolean }
  why?: string
}

const corpus = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'corpus.json'), 'utf8')) as {
  entries: CorpusEntry[]
}
/** As the verdict judges a root host's command: without any capability. */
const commandUser = process.getuid?.() === 0 ? { uid: 0, gids: [0] } : undefined

describe('the labelled corpus of real tools’ messages', () => {
  const scratch = scratchDir('cordon-corpus')
  it('holds every tool the issue names, on both backends, and cases that must not count', () => {
    const tools = new Set(corpus.entries.map((e) => e.tool))
    for (const t of ['git push', 'cmake -B', 'perl -pi', 'cargo test', 'sqlite3', 'npm config set', 'ssh-keygen'])
      expect(tools).toContain(t)
    expect(corpus.entries.filter((e) => e.expected.refused.length === 0).length).toBeGreaterThanOrEqual(15)
    for (const b of ['landlock', 'bubblewrap']) expect(corpus.entries.some((e) => e.backend === b)).toBe(true)
  })

  for (const [i, e] of corpus.entries.entries()) {
    it(`${i}: ${e.tool} on ${e.backend}, exit ${e.exit}${e.why ? ` (${e.why})` : ''}`, () => {
      const base = path.join(scratch, `case-${i}`)
      const places = { root: path.join(base, 'root'), out: path.join(base, 'out'), home: path.join(base, 'home') }
      for (const dir of Object.values(places)) fs.mkdirSync(dir, { recursive: true })
      const fill = (t: string) =>
        t
          .replaceAll('{root}', places.root)
          .replaceAll('{out}', places.out)
          .replaceAll('{home}', places.home)
          .replaceAll('{base}', base)
      for (const entry of e.setup) {
        const [where, mode] = fill(entry).split(' ')
        const target = path.resolve(where!)
        if (where!.endsWith('/')) fs.mkdirSync(target, { recursive: true })
        else {
          fs.mkdirSync(path.dirname(target), { recursive: true })
          fs.writeFileSync(target, 'x\n')
        }
        if (mode !== undefined) fs.chmodSync(target, Number.parseInt(mode, 8))
      }
      const input: DenialInput = {
        backend: e.backend,
        exitCode: e.exit,
        runnerFailed: false,
        stderr: fill(e.stderr),
        stdout: fill(e.stdout ?? ''),
        cwd: fill(e.cwd),
        command: fill(e.command),
        writable: e.mode === 'workspace-write' ? [places.root] : [],
        hidden: e.hidden?.map(fill),
        protectedPaths: e.protected?.map(fill),
        failures: e.failures?.map((f) => ({ cwd: fill(f.cwd), command: fill(f.command) })),
        commandUser,
      }
      const facts = classifyDenial(input)
      const refused = e.expected.refused.map((p) => path.resolve(fill(p)))
      const sorted = (paths: string[]) => [...paths].sort()
      expect({ refused: sorted(facts.refusedPaths), denied: facts.denied }).toEqual({
        refused: sorted(refused),
        denied: e.expected.denied,
      })
      expect(sorted(facts.deniedPaths)).toEqual(e.expected.denied ? sorted(refused) : [])
    })
  }
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
  const x = path.join(outside, 'x')

  it('a denial: nonzero exit, the signature, a path outside the writable set the uid could write unsandboxed', () => {
    expect(classifyDenial(run({}))).toEqual({ denied: true, deniedPaths: [x], refusedPaths: [x] })
  })

  it('a refusal is reported whatever the exit; denied only for a failed run', () => {
    for (const exitCode of [0, null])
      expect(classifyDenial(run({ exitCode }))).toEqual({ denied: false, deniedPaths: [], refusedPaths: [x] })
  })

  it('nothing for a runner failure or a backend without signatures', () => {
    for (const over of [{ runnerFailed: true }, { backend: 'none' }])
      expect(classifyDenial(run(over))).toEqual({ denied: false, deniedPaths: [], refusedPaths: [] })
  })

  it("only the backend's own denial text counts", () => {
    const erofs = `touch: cannot touch '${outside}/x': Read-only file system`
    expect(classifyDenial(run({ stderr: erofs })).denied).toBe(false)
    expect(classifyDenial(run({ stderr: erofs, backend: 'bubblewrap' })).denied).toBe(true)
    // A Landlock read-only view's mounts refuse before Landlock does: EROFS is its dialect too.
    expect(classifyDenial(run({ stderr: erofs, backend: 'landlock-view' })).denied).toBe(true)
  })

  it('not a path inside the writable set, nor one ordinary permissions refuse anyway', () => {
    expect(classifyDenial(run({ stderr: `touch: cannot touch '${root}/x': Permission denied` })).denied).toBe(false)
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
    expect(classifyDenial(run({ exitCode: 126, stderr: `bash: ${script}: Permission denied` })).denied).toBe(false)
  })

  it('relative paths resolve where the failed command ran, as the shell logged it or the text says', () => {
    const stderr = "touch: cannot touch 'x': Permission denied"
    const command = `cd ${outside} && touch x`
    const logged = classifyDenial(run({ stderr, command, failures: [{ cwd: outside, command: 'touch x' }] }))
    expect(logged.deniedPaths).toEqual([x])
    // `touch x` runs only once the cd succeeded: the text alone says where.
    expect(classifyDenial(run({ stderr, command })).deniedPaths).toEqual([x])
    // It could have run in the cwd (writable) or after the cd: no guess.
    fs.writeFileSync(path.join(root, 'x'), '')
    expect(classifyDenial(run({ stderr, command: `touch x; ${command}` })).denied).toBe(false)
    // Both candidates refused by the sandbox: a denial, its path unknown.
    const elsewhere = path.join(outside, 'elsewhere')
    fs.mkdirSync(elsewhere, { recursive: true })
    fs.writeFileSync(path.join(elsewhere, 'x'), '')
    const both = classifyDenial(run({ stderr, command: `touch x; cd ${elsewhere} && touch x`, cwd: outside }))
    expect(both).toEqual({ denied: true, deniedPaths: [], refusedPaths: [] })
  })

  it('a path the failure log does not name is placed by the command text (a run that exits 0 logs none of it)', () => {
    fs.writeFileSync(path.join(outside, 'f.txt'), 'abc')
    const stderr = "Can't do inplace edit on f.txt: Cannot make temp name: Permission denied."
    const command = `false; cd ${outside} && perl -pi -e s/a/b/ f.txt`
    const facts = classifyDenial(run({ exitCode: 0, stderr, command, failures: [{ cwd: root, command: 'false' }] }))
    expect(facts).toEqual({ denied: false, deniedPaths: [], refusedPaths: [path.join(outside, 'f.txt')] })
  })

  it('error codes are not relative paths; npm names the path on a later line', () => {
    const npm = ['npm error code EACCES', 'npm error syscall mkdir', `npm error path ${outside}/cache`].join('\n')
    expect(classifyDenial(run({ stderr: npm })).deniedPaths).toEqual([`${outside}/cache`])
  })

  it('a write through a symlink inside the root lands outside: that is the path denied', () => {
    const link = path.join(root, 'out-link')
    fs.rmSync(link, { force: true })
    fs.symlinkSync(outside, link)
    const facts = classifyDenial(run({ stderr: `sh: 1: cannot create ${link}/f: Permission denied` }))
    expect(facts.deniedPaths).toEqual([path.join(outside, 'f')])
  })

  it("git's 'could not create leading directories' of a path whose parent does not exist", () => {
    const stderr = `fatal: could not create leading directories of '${outside}/a/b/c': Permission denied`
    expect(classifyDenial(run({ stderr })).deniedPaths).toEqual([`${outside}/a/b/c`])
  })

  it('at a hidden place a read is the secrets class, a write is a denial; errors on stdout count', () => {
    const secret = path.join(outside, 'id_rsa')
    fs.writeFileSync(secret, 'key')
    const hidden = [secret, path.join(outside, 'keys')]
    expect(classifyDenial(run({ stderr: `cat: ${secret}: Permission denied`, hidden })).denied).toBe(false)
    // A verb that writes, EROFS, or a path that is not there (only a creation can be refused) is a write.
    const saving = `Saving key "${secret}" failed: Permission denied`
    expect(classifyDenial(run({ stderr: saving, hidden })).deniedPaths).toEqual([secret])
    const erofs = `cat: ${secret}: Read-only file system`
    expect(classifyDenial(run({ stderr: erofs, hidden, backend: 'bubblewrap' })).deniedPaths).toEqual([secret])
    const created = `bash: ${outside}/keys/new: Permission denied`
    expect(classifyDenial(run({ stderr: created, hidden })).deniedPaths).toEqual([`${outside}/keys/new`])
    const stdout = `sh: 1: cannot create ${outside}/y: Permission denied`
    expect(classifyDenial(run({ stderr: '', stdout })).denied).toBe(true)
  })
})
