/**
 * What a command takes away, read from its text: the operands of `rm -r`, `rmdir`, `rimraf`,
 * `find … -delete`, the sources of `mv`, the literal argument of Python's `shutil.rmtree('…')`
 * and Node's recursive `fs.rm('…')`, and the work tree of `git clean`. Removing a tree needs its
 * parent writable (the tree itself goes); cleaning a work tree needs only the tree. A remedy
 * that widens to these converges in one step (src/sandbox/remedy.ts): widening to the dirs of the
 * files a removal could not unlink would leave the dirs themselves.
 *
 * A word the text does not pin down (a variable other than $HOME, a command substitution, a glob
 * before the last name) names no removal: never a guess.
 */
import path from 'node:path'
import { type ShellWord, simpleCommands } from './shell-words.js'

/** One removal a command runs. */
export interface Removal {
  /** The absolute path removed (`tree`) or emptied (`contents`). */
  path: string
  /** `tree`: the path itself goes, so its parent must be writable; `contents`: what lies in it goes. */
  kind: 'tree' | 'contents'
}

/** Shells whose `-c TEXT` is read too. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh'])

/** Words that run the next word as the command (with their own options before it). */
const WRAPPERS = new Set(['sudo', 'command', 'exec', 'time', 'nice', 'nohup', 'env', 'builtin', 'npx', 'xargs'])

/** A literal `rmtree('p')` / `rm('p', { recursive: true })` / `rmSync(…)` in program text (Python, Node). */
const LIBRARY_CALLS = [
  /\brmtree\(\s*r?(['"])([^'"\n]+)\1/g,
  /\b(?:rm|rmSync|rmdirSync)\(\s*(['"`])([^'"`\n$]+)\1\s*,[^)]*\brecursive\s*:\s*true/g,
]

/** The removals of `command`, run in `cwd`; `home` expands `~` and `$HOME`. */
export function removalsIn(command: string, cwd: string, home = process.env.HOME): Removal[] {
  const out: Removal[] = []
  walk(command, cwd, home, out, 0)
  const seen = new Set<string>()
  return out.filter((r) => {
    const key = `${r.kind}:${r.path}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function walk(text: string, cwd: string, home: string | undefined, out: Removal[], depth: number): void {
  if (depth > 3) return
  for (const call of LIBRARY_CALLS) {
    for (const m of text.matchAll(call)) out.push({ path: path.resolve(cwd, m[2]!), kind: 'tree' })
  }
  // The dir each command runs in, as the text's own `cd`s move it ('' once a cd cannot be followed).
  let base = cwd
  for (const words of simpleCommands(text)) {
    const argv = commandWords(words)
    const name = argv[0]?.text
    if (name === undefined) continue
    const here = base
    const known = (w: ShellWord, from = here) => resolveWord(w, from, home)
    if (name === 'cd') base = (argv[1] === undefined ? home : known(argv[1])) ?? ''
    else if (base !== '') visit(argv, known, base, (script) => walk(script, here, home, out, depth + 1), out)
  }
}

/** One simple command: a shell's `-c` script is walked in turn, any other command's removals are added. */
function visit(
  argv: readonly ShellWord[],
  known: Resolver,
  base: string,
  nested: (script: string) => void,
  out: Removal[],
): void {
  const name = path.basename(argv[0]!.text)
  if (!SHELLS.has(name)) {
    out.push(...removalsOf(name, argv.slice(1), known, base))
    return
  }
  const script = argv.findIndex((w) => w.text === '-c')
  if (script > 0 && argv[script + 1]) nested(argv[script + 1]!.text)
}

/** The words from the command name on: assignments and wrappers (with their options) left out. */
function commandWords(words: readonly ShellWord[]): ShellWord[] {
  let i = 0
  while (i < words.length) {
    const w = words[i]!
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text) && !w.quoted) i++
    else if (WRAPPERS.has(w.text)) {
      i++
      while (i < words.length && words[i]!.text.startsWith('-')) i++
    } else break
  }
  return words.slice(i)
}

/** A word as an absolute path against `base`, or undefined when the text does not fix it. */
function resolveWord(word: ShellWord, base: string, home: string | undefined): string | undefined {
  let text = word.text
  if (word.expands) {
    // Only $HOME is known (the command's own environment is the host's here).
    if (home === undefined) return undefined
    text = text.replace(/\$\{HOME\}|\$HOME\b/g, home)
    if (/[$`]/.test(text)) return undefined
  }
  if (!word.quoted && (text === '~' || text.startsWith('~/'))) {
    if (home === undefined) return undefined
    text = home + text.slice(1)
  }
  return path.resolve(base, text)
}

/** A word as an absolute path (against the dir the command runs in, or `from`), or undefined. */
type Resolver = (w: ShellWord, from?: string) => string | undefined

/** The removals one command makes, by its name. */
function removalsOf(name: string, args: readonly ShellWord[], known: Resolver, base: string): Removal[] {
  switch (name) {
    case 'rm':
    case 'rimraf': {
      const { options, operands } = split(args)
      const recursive = name === 'rimraf' || options.some((o) => /^-[a-zA-Z]*[rR]/.test(o) || o === '--recursive')
      return recursive ? trees(operands, known) : []
    }
    case 'rmdir': {
      const { options, operands } = split(args)
      const parents = options.some((o) => /^-[a-zA-Z]*p/.test(o) || o === '--parents')
      // `rmdir -p a/b` removes a too: its top-most name is what goes last.
      const top = (w: ShellWord): ShellWord =>
        parents && !path.isAbsolute(w.text) ? { ...w, text: w.text.split('/')[0] as string } : w
      return trees(operands.map(top), known)
    }
    case 'mv': {
      const { options, operands } = split(args)
      const intoDir = options.some((o) => o === '-t' || o.startsWith('--target-directory'))
      return trees(intoDir ? operands.slice(1) : operands.slice(0, -1), known)
    }
    case 'find':
      return findDeletes(args, known)
    case 'git':
      return gitClean(args, known, base)
    default:
      return []
  }
}

/** Options and operands (after `--`, every word is an operand); `-t DIR` keeps DIR first among operands. */
function split(args: readonly ShellWord[]): { options: string[]; operands: ShellWord[] } {
  const options: string[] = []
  const operands: ShellWord[] = []
  let ended = false
  for (const w of args) {
    if (!ended && w.text === '--') ended = true
    else if (!ended && w.text.startsWith('-') && w.text !== '-' && !w.quoted) options.push(w.text)
    else operands.push(w)
  }
  return { options, operands }
}

/** Each operand as a removed tree; a glob in its last name empties its dir instead. */
function trees(operands: readonly ShellWord[], known: Resolver): Removal[] {
  const out: Removal[] = []
  for (const w of operands) {
    const globbed = !w.quoted && /[*?[]/.test(w.text)
    if (globbed) {
      const dir = path.dirname(w.text)
      if (/[*?[]/.test(dir)) continue
      const p = known({ ...w, text: dir })
      if (p !== undefined) out.push({ path: p, kind: 'contents' })
      continue
    }
    const p = known(w)
    if (p !== undefined && p !== '/') out.push({ path: p, kind: 'tree' })
  }
  return out
}

/** find's options that select nothing: an expression of only these (and -delete) deletes every start point too. */
const FIND_NO_TEST = /^-(?:delete|depth|d|mount|xdev|ignore_readdir_race|noleaf|maxdepth|\d+)$/

/** `find START… EXPR -delete`: each start point goes too when nothing in EXPR could spare it, else only what is below it. */
function findDeletes(args: readonly ShellWord[], known: Resolver): Removal[] {
  const texts = args.map((w) => w.text)
  if (!texts.includes('-delete')) return []
  let i = 0
  while (i < args.length && /^-[HLP]$|^-[OD]/.test(texts[i]!)) i++
  const starts: ShellWord[] = []
  for (; i < args.length && !/^[-(!,]/.test(texts[i]!); i++) starts.push(args[i]!)
  // `-maxdepth N` takes a number; any other word of the expression is a test that may spare a start point.
  const whole = texts.slice(i).every((t) => FIND_NO_TEST.test(t) || /^\d+$/.test(t))
  const points = starts.length > 0 ? starts : [{ text: '.', quoted: false, expands: false }]
  return points.flatMap((w) => {
    const p = known(w)
    return p === undefined ? [] : [{ path: p, kind: whole ? ('tree' as const) : ('contents' as const) }]
  })
}

/** `git [-C DIR]… clean`: what is untracked below the dir it runs in goes, that dir stays. */
function gitClean(args: readonly ShellWord[], known: Resolver, base: string): Removal[] {
  let dir: string | undefined = base
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text
    if (t === '-C') {
      // Each -C is relative to the one before.
      const next = args[i + 1]
      dir = next === undefined || dir === undefined ? undefined : known(next, dir)
      i++
    } else if (t === '-c') i++
    else if (t === 'clean') return dir === undefined ? [] : [{ path: dir, kind: 'contents' }]
    else if (!t.startsWith('-')) return []
  }
  return []
}
