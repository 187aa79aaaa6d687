// A labelled corpus of real commands run through LocalShellExecutor under the real Landlock
// backend: each row says whether `sandbox.denied` must hold (dsh-semantics §1.7 as cordon
// refines it in src/sandbox/denials/classify.ts), which path a denial must name, and — for every row —
// that nothing outside the grant was created or changed. The unprivileged rows run the whole
// executor as uid 65534 (through dist/, so `npx tsc -p tsconfig.build.json` must have run) to
// tell DAC EACCES apart from a sandbox denial.
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, expect, it } from 'vitest'
import type { SandboxMode } from '../../../src/policy/vocabulary.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import type { ShellRunResult } from '../../../src/shell/types.js'
import { describeWithBackend } from '../../support/sandbox/backends.js'

const run = promisify(execFile)
const REPO = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '')
const tmp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

// ---------------------------------------------------------------------------------------------
// Fixtures (host side, unconfined): the workspace root R, a sibling dir O outside it, and a few
// system paths that must never appear. Everything is removed in afterAll.
// ---------------------------------------------------------------------------------------------
const R = tmp('cordon-corpus-')
const O = tmp('cordon-outside-')
const OUT = path.basename(O)
const TAG = `cordon-corpus-${process.pid}`
const SYS = {
  etc: `/etc/${TAG}`,
  etcKill: `/etc/${TAG}-killed`,
  etcTrue: `/etc/${TAG}-true`,
  usrLocal: `/usr/local/${TAG}`,
  hostTmp: path.join(os.tmpdir(), `${TAG}-host-tmp`),
}

fs.writeFileSync(path.join(O, 'victim.txt'), 'keep\n')
fs.writeFileSync(path.join(O, 'sedme.txt'), 'keep\n')
fs.writeFileSync(path.join(O, 'trunc.txt'), 'keep\n')
fs.writeFileSync(path.join(O, 'noexec.sh'), '#!/bin/sh\necho ran\n', { mode: 0o644 })
fs.mkdirSync(path.join(O, 'sub'))
execFileSync('git', ['init', '-q', path.join(O, 'repo')])
fs.writeFileSync(path.join(R, 'noexec.sh'), '#!/bin/sh\necho ran\n', { mode: 0o644 })
fs.writeFileSync(path.join(R, 'ro-by-mode.txt'), 'keep\n', { mode: 0o444 })

/** The real interpreter behind `python3` (pyenv shims are scripts), or undefined when absent. */
const PYTHON = (() => {
  try {
    return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
  } catch {
    return undefined
  }
})()
const hasCommand = (name: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const RG = hasCommand('rg')
const NODE = process.execPath

/** One labelled case. `name` is the one-line reason the expectation holds. */
interface Row {
  name: string
  mode: SandboxMode
  command: string
  expectDenied: boolean
  /** A denial must name this path (or a path matching it) in `deniedPaths`. */
  expectPath?: string | RegExp
  /** The exact exit code expected (null: a signal death). */
  expectExit?: number | null
  workdir?: string
  /** A path this command is allowed to create although it is not under the grant (danger-full-access). */
  writes?: string
  /** Skip with this visible reason. */
  skip?: string
}

const o = (name: string) => path.join(O, name)
const ro: SandboxMode = 'read-only'
const ww: SandboxMode = 'workspace-write'

const rows: Row[] = [
  // --- denials: writes outside what the policy grants --------------------------------------
  {
    name: 'bash redirection outside the root (ww)',
    mode: ww,
    command: `echo x > ${o('redir.txt')}`,
    expectDenied: true,
    expectPath: o('redir.txt'),
  },
  {
    name: 'bash redirection outside (read-only)',
    mode: ro,
    command: `echo x > ${o('redir-ro.txt')}`,
    expectDenied: true,
    expectPath: o('redir-ro.txt'),
  },
  {
    name: 'dash redirection: "sh: 1: cannot create PATH: Permission denied"',
    mode: ww,
    command: `sh -c 'echo x > ${o('sh.txt')}'`,
    expectDenied: true,
    expectPath: o('sh.txt'),
  },
  {
    name: 'redirection into /etc (root could write it without the sandbox)',
    mode: ro,
    command: `echo x > ${SYS.etc}`,
    expectDenied: true,
    expectPath: SYS.etc,
  },
  {
    name: 'read-only: even the workspace root is not writable',
    mode: ro,
    command: `echo x > ${path.join(R, 'ro-inside.txt')}`,
    expectDenied: true,
    expectPath: path.join(R, 'ro-inside.txt'),
  },
  {
    name: 'the host /tmp itself is never writable (only the session TMPDIR is)',
    mode: ww,
    command: `echo x > ${SYS.hostTmp}`,
    expectDenied: true,
    expectPath: SYS.hostTmp,
  },
  { name: 'touch outside', mode: ww, command: `touch ${o('touched')}`, expectDenied: true, expectPath: o('touched') },
  {
    name: 'mkdir outside (read-only)',
    mode: ro,
    command: `mkdir ${o('newdir')}`,
    expectDenied: true,
    expectPath: o('newdir'),
  },
  {
    name: 'mkdir -p under /usr/local',
    mode: ww,
    command: `mkdir -p ${SYS.usrLocal}/sub`,
    expectDenied: true,
    expectPath: SYS.usrLocal,
  },
  {
    name: 'cp from the root to outside',
    mode: ww,
    command: `echo hi > cp-src.txt && cp cp-src.txt ${o('copied')}`,
    expectDenied: true,
    expectPath: o('copied'),
  },
  {
    name: 'mv from the root to outside (source inside is not blamed)',
    mode: ww,
    command: `echo hi > mv-src.txt && mv mv-src.txt ${o('moved')}`,
    expectDenied: true,
    expectPath: o('moved'),
  },
  {
    name: 'rm of an outside file',
    mode: ww,
    command: `rm -f ${o('victim.txt')}`,
    expectDenied: true,
    expectPath: o('victim.txt'),
  },
  {
    name: 'ln -s into an outside dir',
    mode: ww,
    command: `ln -s /etc/hostname ${o('link')}`,
    expectDenied: true,
    expectPath: o('link'),
  },
  {
    name: "python3 open(..., 'w'): PermissionError [Errno 13] names the path",
    mode: ro,
    command: `${PYTHON ?? 'python3'} -c "open('${o('py.txt')}', 'w')"`,
    expectDenied: true,
    expectPath: o('py.txt'),
    ...(PYTHON ? {} : { skip: 'python3 is not installed' }),
  },
  {
    name: 'node fs.writeFileSync: "EACCES: permission denied, open \'PATH\'"',
    mode: ww,
    command: `${NODE} -e "require('fs').writeFileSync('${o('node.txt')}', 'x')"`,
    expectDenied: true,
    expectPath: o('node.txt'),
  },
  {
    name: 'git init in an outside dir',
    mode: ww,
    command: `git init -q ${o('newrepo')}`,
    expectDenied: true,
    expectPath: o('newrepo'),
  },
  {
    // CLASSIFIER GAP (kept on purpose): git prints the config path relative to the dir it was
    // pointed at ("could not lock config file .git/config"), the classifier resolves it against
    // the command's workdir (R), lands inside the root and drops it -> denied: false.
    name: "git -C outside-repo config: writes the outside repo's .git/config",
    mode: ww,
    command: `git -C ${o('repo')} config user.name corpus`,
    expectDenied: true,
    expectPath: o('repo/.git/config'),
  },
  {
    name: 'git config --file on an outside config (absolute path in the message)',
    mode: ww,
    command: `git config --file ${o('repo/.git/config')} user.name corpus`,
    expectDenied: true,
    expectPath: o('repo/.git/config'),
  },
  {
    name: 'sed -i on an outside file: its temp file beside it is refused',
    mode: ww,
    command: `sed -i s/keep/gone/ ${o('sedme.txt')}`,
    expectDenied: true,
    expectPath: new RegExp(`^${O}/sed\\w+$`),
  },
  {
    name: "tee to an outside file (pipeline exit is tee's)",
    mode: ro,
    command: `echo x | tee ${o('tee.txt')}`,
    expectDenied: true,
    expectPath: o('tee.txt'),
  },
  {
    name: 'dd of= outside',
    mode: ww,
    command: `dd if=/dev/zero of=${o('dd.bin')} bs=1 count=1`,
    expectDenied: true,
    expectPath: o('dd.bin'),
  },
  {
    name: 'truncate -s 0 of an outside file',
    mode: ww,
    command: `truncate -s 0 ${o('trunc.txt')}`,
    expectDenied: true,
    expectPath: o('trunc.txt'),
  },
  {
    name: 'install into an outside dir',
    mode: ww,
    command: `echo hi > inst-src && install -m 644 inst-src ${o('installed')}`,
    expectDenied: true,
    expectPath: o('installed'),
  },
  {
    name: 'relative ../outside/x from the root resolves against the workdir',
    mode: ww,
    command: `echo x > ../${OUT}/rel.txt`,
    expectDenied: true,
    expectPath: o('rel.txt'),
  },
  {
    name: 'relative write from a workdir inside the root',
    mode: ww,
    command: `echo x > ../../${OUT}/rel2.txt`,
    workdir: path.join(R, 'wd'),
    expectDenied: true,
    expectPath: o('rel2.txt'),
  },
  {
    name: 'a denial followed by a failing command still counts',
    mode: ww,
    command: `touch ${o('then-fail')}; false`,
    expectDenied: true,
    expectPath: o('then-fail'),
  },

  // --- look-alikes that must NOT count -----------------------------------------------------
  {
    name: 'grep with no match exits 1 and prints nothing',
    mode: ro,
    command: `printf 'a\\n' | grep zzz`,
    expectDenied: false,
    expectExit: 1,
  },
  {
    name: 'rg with no match exits 1 (the postmortem-0004 case)',
    mode: ro,
    command: `printf 'a\\n' | rg zzz`,
    expectDenied: false,
    expectExit: 1,
    ...(RG ? {} : { skip: 'rg (ripgrep) is not installed on this host' }),
  },
  {
    name: 'cat of a missing file: ENOENT, not EACCES',
    mode: ro,
    command: 'cat missing.txt',
    expectDenied: false,
    expectExit: 1,
  },
  { name: 'ls of a missing dir', mode: ro, command: `ls ${o('no-such-dir')}`, expectDenied: false, expectExit: 2 },
  {
    name: "a program printing 'Permission denied' with no path and exiting 1",
    mode: ww,
    command: "echo 'Permission denied' >&2; exit 1",
    expectDenied: false,
    expectExit: 1,
  },
  {
    name: "'Read-only file system' is bubblewrap's dialect, not Landlock's",
    mode: ww,
    command: `echo "${o('x')}: Read-only file system" >&2; exit 1`,
    expectDenied: false,
    expectExit: 1,
  },
  {
    name: 'exit 13 (the EACCES number) with no text',
    mode: ro,
    command: 'exit 13',
    expectDenied: false,
    expectExit: 13,
  },
  {
    name: 'a real denial but exit 0: never a denial',
    mode: ro,
    command: `touch ${SYS.etcTrue}; true`,
    expectDenied: false,
    expectExit: 0,
  },
  {
    name: 'a real denial, then killed by a signal: never a denial',
    mode: ww,
    command: `touch ${SYS.etcKill}; kill -TERM $$`,
    expectDenied: false,
    expectExit: null,
  },
  {
    name: 'writes inside the root succeed',
    mode: ww,
    command: 'echo x > inside.txt && mkdir -p sub/dir && touch sub/dir/f && cp inside.txt sub/ && rm sub/inside.txt',
    expectDenied: false,
    expectExit: 0,
  },
  {
    name: 'writes into the session TMPDIR succeed',
    mode: ww,
    command: 'echo x > "$TMPDIR/t" && cat "$TMPDIR/t" >/dev/null',
    expectDenied: false,
    expectExit: 0,
  },
  {
    name: 'cd into a dir (and outside, read only) is fine',
    mode: ro,
    command: `cd ${O} && ls >/dev/null && cd /etc && pwd`,
    expectDenied: false,
    expectExit: 0,
  },
  {
    name: 'a printed denial naming a path inside the root is not the sandbox',
    mode: ww,
    command: `echo "cannot open ${path.join(R, 'x')}: Permission denied" >&2; exit 1`,
    expectDenied: false,
    expectExit: 1,
  },
  {
    name: 'DAC inside the root: a 0444 file (caps are dropped, so even root gets EACCES)',
    mode: ww,
    command: 'echo x > ro-by-mode.txt',
    expectDenied: false,
    expectExit: 1,
  },
  {
    name: 'exec of a non-executable script inside the root (exit 126)',
    mode: ww,
    command: './noexec.sh',
    expectDenied: false,
    expectExit: 126,
  },
  {
    // CLASSIFIER GAP candidate (kept on purpose): execve EACCES from a missing x bit names a path
    // outside the root that the host could write, so the write-oriented heuristic counts it.
    name: 'exec of a non-executable script OUTSIDE the root is DAC (no x bit), not the sandbox',
    mode: ww,
    command: o('noexec.sh'),
    expectDenied: false,
    expectExit: 126,
  },
  {
    name: 'reading anywhere is granted',
    mode: ro,
    command: 'cat /etc/hostname >/dev/null && ls /usr/local >/dev/null',
    expectDenied: false,
    expectExit: 0,
  },
  {
    name: 'danger-full-access is unconfined: a write outside succeeds and nothing is classified',
    mode: 'danger-full-access',
    command: `echo x > ${o('danger.txt')}`,
    expectDenied: false,
    expectExit: 0,
    writes: o('danger.txt'),
  },
]

// ---------------------------------------------------------------------------------------------
// "Nothing outside the grant changed": a snapshot of O's whole tree, the system targets, and
// (under read-only, where nothing is granted) R's tree too.
// ---------------------------------------------------------------------------------------------
function tree(dir: string, skip: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (p: string) => {
    if (skip.has(p)) return
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch {
      out[p] = 'absent'
      return
    }
    const mode = (st.mode & 0o7777).toString(8)
    if (st.isSymbolicLink()) out[p] = `link ${fs.readlinkSync(p)}`
    else if (st.isFile()) out[p] = `file ${mode} ${fs.readFileSync(p, 'base64')}`
    else if (st.isDirectory()) {
      out[p] = `dir ${mode}`
      for (const e of fs.readdirSync(p).sort()) walk(path.join(p, e))
    } else out[p] = `other ${mode}`
  }
  walk(dir)
  return out
}

function snapshot(row: Row): Record<string, string> {
  const skip = new Set(row.writes ? [row.writes] : [])
  return {
    ...tree(O, skip),
    ...Object.assign({}, ...Object.values(SYS).map((p) => tree(p, skip))),
    ...(row.mode === 'read-only' ? tree(R, skip) : {}),
  }
}

function matches(paths: readonly string[] | undefined, want: string | RegExp): boolean {
  return (paths ?? []).some((p) => (typeof want === 'string' ? p === want : want.test(p)))
}

/** The assertions every row gets, whichever uid ran it. */
function check(row: Row, r: ShellRunResult): void {
  const facts = { exitCode: r.exitCode, signal: r.signal, stderr: r.stderr.text, sandbox: r.sandbox }
  expect(r.sandbox, JSON.stringify(facts)).toBeDefined()
  expect(r.sandbox!.mode).toBe(row.mode)
  expect(r.sandbox!.denied, `denied for ${JSON.stringify(row.command)}; ${JSON.stringify(facts)}`).toBe(
    row.expectDenied,
  )
  if (row.expectExit !== undefined) expect(r.exitCode, JSON.stringify(facts)).toBe(row.expectExit)
  if (row.expectDenied) {
    expect(r.exitCode, JSON.stringify(facts)).not.toBe(0)
    expect(r.stderr.text).toMatch(/permission denied|read-only file system/i)
    expect(
      matches(r.sandbox!.deniedPaths, row.expectPath!),
      `deniedPaths ${JSON.stringify(r.sandbox!.deniedPaths)} ∌ ${String(row.expectPath)}`,
    ).toBe(true)
  } else {
    expect(r.sandbox!.deniedPaths).toBeUndefined()
  }
}

afterAll(() => {
  for (const p of [R, O, ...Object.values(SYS)]) fs.rmSync(p, { recursive: true, force: true })
})

await describeWithBackend('landlock', 'denial corpus: real commands, labelled', (sandbox) => {
  let ex: LocalShellExecutor
  afterAll(async () => {
    await ex?.dispose()
  })

  it('the corpus is large enough and each row is labelled', () => {
    expect(rows.length).toBeGreaterThanOrEqual(30)
    for (const row of rows) expect(row.expectDenied ? row.expectPath : 'n/a', row.name).toBeDefined()
  })

  for (const row of rows) {
    const title = `${row.expectDenied ? 'DENIED' : 'not denied'} [${row.mode}] ${row.name}${row.skip === undefined ? '' : ` (skipped: ${row.skip})`}`
    it.skipIf(row.skip !== undefined)(title, async () => {
      ex ??= new LocalShellExecutor({ sandbox: sandbox(), cwd: R, workspaceRoot: R, graceMs: 1000 })
      if (row.workdir) fs.mkdirSync(row.workdir, { recursive: true })
      const before = snapshot(row)
      const r = await ex.run(
        ex.resolve({
          command: row.command,
          workdir: row.workdir,
          timeoutMs: 30_000,
          sandboxPolicy: { mode: row.mode, workspaceRoot: R },
        }),
      )
      check(row, r)
      expect(snapshot(row), 'something outside the grant was created or changed').toEqual(before)
      if (row.writes) expect(fs.existsSync(row.writes)).toBe(true)
    })
  }

  // -------------------------------------------------------------------------------------------
  // The same executor as uid 65534 (nobody), in a child process: DAC refusals are not denials;
  // a write the uid could have made but the sandbox refused is.
  // -------------------------------------------------------------------------------------------
  const NOBODY = 65534
  const unprivilegedSkip =
    process.getuid?.() !== 0
      ? 'needs root to drop to uid 65534 with setpriv'
      : !hasCommand('setpriv')
        ? 'setpriv is not installed'
        : !fs.existsSync(path.join(REPO, 'dist/shell/executor.js'))
          ? 'dist/ is not built (npx tsc -p tsconfig.build.json)'
          : undefined

  const U = {
    harness: tmp('cordon-harness-'),
    root: tmp('cordon-corpus-nobody-'),
    open: tmp('cordon-outside-0777-'),
  }
  afterAll(() => {
    for (const p of Object.values(U)) fs.rmSync(p, { recursive: true, force: true })
  })
  const roFile = path.join(U.root, 'ro-file')
  fs.chmodSync(U.harness, 0o755)
  fs.chmodSync(U.open, 0o777)
  fs.writeFileSync(roFile, 'keep\n', { mode: 0o444 })
  // Root's read-only file in nobody's 0777 (non-sticky) dir: DAC lets nobody unlink it.
  fs.writeFileSync(path.join(U.open, 'root-ro.txt'), 'keep\n', { mode: 0o444 })
  if (unprivilegedSkip === undefined) {
    fs.chownSync(U.root, NOBODY, NOBODY)
    fs.chownSync(roFile, NOBODY, NOBODY)
  }
  const script = path.join(U.harness, 'run-one.mjs')
  fs.writeFileSync(
    script,
    `const { repo, root, command, mode } = JSON.parse(process.argv[2])
const { LocalSandbox } = await import(repo + '/dist/sandbox/local-sandbox.js')
const { LocalShellExecutor } = await import(repo + '/dist/shell/executor.js')
const sandbox = await LocalSandbox.create({ backends: ['landlock'] })
const ex = new LocalShellExecutor({ sandbox, cwd: root, workspaceRoot: root, graceMs: 1000 })
try {
  const r = await ex.run(ex.resolve({ command, timeoutMs: 30000, sandboxPolicy: { mode, workspaceRoot: root } }))
  process.stdout.write(JSON.stringify({ uid: process.getuid(), r }))
} finally {
  await ex.dispose()
  await sandbox.dispose()
}
`,
    { mode: 0o644 },
  )

  const unprivileged: Row[] = [
    {
      name: 'nobody writing its own 0444 file inside the root: DAC EACCES, not the sandbox',
      mode: ww,
      command: 'echo x > ro-file',
      expectDenied: false,
      expectExit: 1,
    },
    {
      name: 'nobody writing into a 0777 dir outside the root: it could, the sandbox refused',
      mode: ww,
      command: `echo x > ${path.join(U.open, 'by-nobody.txt')}`,
      expectDenied: true,
      expectPath: path.join(U.open, 'by-nobody.txt'),
    },
    {
      name: 'nobody touching in a 0777 dir outside the root (read-only)',
      mode: ro,
      command: `touch ${path.join(U.open, 'touched')}`,
      expectDenied: true,
      expectPath: path.join(U.open, 'touched'),
    },
    {
      // CLASSIFIER GAP candidate (kept on purpose): unlink needs write on the PARENT dir, but the
      // host check asks W_OK of the existing file itself (0444, root's), so it says "could not".
      name: "nobody removing root's 0444 file from a 0777 dir: DAC allows unlink, the sandbox refused",
      mode: ww,
      command: `rm -f ${path.join(U.open, 'root-ro.txt')}`,
      expectDenied: true,
      expectPath: path.join(U.open, 'root-ro.txt'),
    },
    {
      name: 'nobody reading /etc/shadow: a read refused by DAC',
      mode: ww,
      command: 'cat /etc/shadow',
      expectDenied: false,
      expectExit: 1,
    },
    {
      name: 'nobody writing into /etc: DAC would refuse it anyway, so not a sandbox denial',
      mode: ww,
      command: `echo x > ${SYS.etc}-nobody`,
      expectDenied: false,
      expectExit: 1,
    },
  ]

  for (const row of unprivileged) {
    const title = `uid ${NOBODY}: ${row.expectDenied ? 'DENIED' : 'not denied'} [${row.mode}] ${row.name}${unprivilegedSkip === undefined ? '' : ` (skipped: ${unprivilegedSkip})`}`
    it.skipIf(unprivilegedSkip !== undefined)(title, async () => {
      const before = { ...tree(U.open, new Set()), ...tree(`${SYS.etc}-nobody`, new Set()), ...tree(roFile, new Set()) }
      const arg = JSON.stringify({ repo: REPO, root: U.root, command: row.command, mode: row.mode })
      const { stdout } = await run(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', NODE, script, arg],
        {
          cwd: U.harness,
          timeout: 45_000,
        },
      )
      const { uid, r } = JSON.parse(stdout) as { uid: number; r: ShellRunResult }
      expect(uid).toBe(NOBODY)
      if (!row.expectDenied) {
        expect(r.exitCode).not.toBe(0)
        expect(r.stderr.text).toMatch(/permission denied/i)
      }
      check(row, r)
      expect({
        ...tree(U.open, new Set()),
        ...tree(`${SYS.etc}-nobody`, new Set()),
        ...tree(roFile, new Set()),
      }).toEqual(before)
    })
  }
})
