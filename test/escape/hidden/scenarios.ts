/**
 * The red team's attacks on hidden paths, protected paths, run-as-owner and the failure log,
 * each run twice by whoever runs this (root, or uid 65534 through setpriv): confined through a
 * LocalSandbox of one backend, and unconfined by the same user (the control). A scenario reports
 * whether the attack's effect was seen in each run, and the confined run's account, so the test
 * can tell a break (the effect under a plan that claims the class) from a partial run that owns
 * up to it.
 *
 * The effects are real: a git hook planted by the command is run by an unconfined `git commit`
 * afterwards; a patched dependency of an installed cordon is run by the next unconfined import;
 * a hidden secret is read back by the command.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { REPO } from '../host/run-as.js'

/** A confined mode a scenario runs under. */
export type RedteamMode = 'read-only' | 'workspace-write'

/** One verdict of the confined run's account. */
export interface Verdict {
  governed: boolean
  how: string
}

/** What one scenario saw, confined and unconfined. */
export interface RedteamOutcome {
  scenario: string
  backend: SandboxBackendName
  mode: RedteamMode
  uid: number
  /** The attack's effect was seen unconfined (the control must show it). */
  controlEffect: boolean
  /** The attack's effect was seen under cordon. */
  confinedEffect: boolean
  /** The class of the account that would have to admit the effect. */
  claimClass: 'protected' | 'secrets' | 'content'
  /** The confined run's enforcement and that class's verdict (absent: the plan was refused). */
  enforcement?: string
  verdict?: Verdict
  /** The confined plan was refused (a typed error): the attack never ran. */
  refused?: string
  /** Outputs and notes, for the failure message. */
  detail: string
}

const GIT_ENV = (home: string) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'r',
  GIT_AUTHOR_EMAIL: 'r@example.invalid',
  GIT_COMMITTER_NAME: 'r',
  GIT_COMMITTER_EMAIL: 'r@example.invalid',
})

function sh(script: string, cwd: string, env: NodeJS.ProcessEnv): { stdout: string; stderr: string; code: number } {
  const r = spawnSync('/bin/sh', ['-c', script], { cwd, env, encoding: 'utf8', timeout: 60_000 })
  return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', code: r.status ?? -1 }
}

function must(script: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const r = sh(script, cwd, env)
  if (r.code !== 0) throw new Error(`setup failed (${r.code}): ${script}\n${r.stderr}`)
  return r.stdout
}

/** A shell command that writes an executable hook `file` (relative to the cwd) recording who ran it in `marker`. */
const plantHook = (file: string, marker: string) =>
  `printf '#!/bin/sh\\nid -u > %s\\n' '${marker}' > ${file} && chmod +x ${file}`

/** Runs `script` confined by `sandbox` under `policy`; its output and the plan's account. */
async function confined(
  sandbox: LocalSandbox,
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  policy: Record<string, unknown>,
  claimClass: RedteamOutcome['claimClass'],
): Promise<{ stdout: string; stderr: string; enforcement?: string; verdict?: Verdict; refused?: string }> {
  let c: ReturnType<LocalSandbox['confine']>
  try {
    c = sandbox.confine(specFor(['/bin/sh', '-c', script], cwd, env), policy as never)
  } catch (error) {
    return {
      stdout: '',
      stderr: '',
      refused: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }
  }
  const r = await runSpec(c.spec)
  const verdict = c.plan?.account.classes[claimClass] as Verdict | undefined
  return {
    stdout: r.stdout,
    stderr: r.stderr,
    ...(c.enforcement ? { enforcement: c.enforcement } : {}),
    ...(verdict ? { verdict } : {}),
  }
}

/** A fresh directory `name` under `base`. */
function fresh(base: string, name: string): string {
  const dir = path.join(base, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

/** A git checkout with one commit at `dir`. */
function gitRepo(dir: string, env: NodeJS.ProcessEnv): void {
  must('git init -q . && git commit -q --allow-empty -m init', dir, env)
}

/** Whether an unconfined `git commit` in `dir` ran a hook that wrote `marker`. */
function commitRunsHook(dir: string, env: NodeJS.ProcessEnv, marker: string): boolean {
  fs.rmSync(marker, { force: true })
  sh('git commit -q --allow-empty -m next', dir, env)
  return fs.existsSync(marker)
}

interface GitAttack {
  name: string
  /** Lays out the checkout; returns the workspace root and the dir where the person commits. */
  setup(base: string, env: NodeJS.ProcessEnv): { root: string; commitIn: string }
  /** The command that plants a hook (run in the root). */
  plant(marker: string, root: string): string
}

/** Ways to plant a git hook that an unconfined `git commit` runs later. */
export const GIT_ATTACKS: readonly GitAttack[] = [
  {
    // $GIT_DIR/commondir names the dir git takes hooks/ and config from: a writable .git
    // (only hooks/ and config are read-only) can point it at a copy the command owns.
    name: 'git-commondir',
    setup(base, env) {
      const root = fresh(base, 'commondir')
      gitRepo(root, env)
      return { root, commitIn: root }
    },
    plant: (marker) =>
      `set -e; mkdir .evil; cp -a .git/objects .git/refs .git/HEAD .evil/; printf '[core]\\n\\trepositoryformatversion = 0\\n' > .evil/config; mkdir .evil/hooks; ${plantHook('.evil/hooks/pre-commit', marker)}; echo ../.evil > .git/commondir`,
  },
  {
    // A repository whose core.hooksPath lies in the work tree (husky's `.husky`): the hooks git
    // runs are ordinary workspace files.
    name: 'git-hookspath-in-worktree',
    setup(base, env) {
      const root = fresh(base, 'hookspath')
      gitRepo(root, env)
      must('git config core.hooksPath .husky && mkdir .husky', root, env)
      return { root, commitIn: root }
    },
    plant: (marker) => plantHook('.husky/pre-commit', marker),
  },
  {
    // A linked worktree as the workspace: its `.git` is a file naming the git dir; rewritten, it
    // names a git dir the command made, hooks included.
    name: 'git-worktree-dotgit-file',
    setup(base, env) {
      const main = fresh(base, 'wt-main')
      gitRepo(main, env)
      const root = path.join(base, 'wt-linked')
      fs.rmSync(root, { recursive: true, force: true })
      must(`git worktree add -q '${root}'`, main, env)
      return { root, commitIn: root }
    },
    plant: (marker) =>
      `set -e; git init -q .tmprepo; mv .tmprepo/.git .evil; rmdir .tmprepo; ${plantHook('.evil/hooks/pre-commit', marker)}; echo 'gitdir: .evil' > .git`,
  },
  {
    // A workspace holding checkouts below its root (a directory of repositories): only the
    // root's own .git is protected.
    name: 'git-nested-checkout',
    setup(base, env) {
      const root = fresh(base, 'nested')
      const app = path.join(root, 'app')
      fs.mkdirSync(app)
      gitRepo(app, env)
      return { root, commitIn: app }
    },
    plant: (marker) => plantHook('app/.git/hooks/pre-commit', marker),
  },
]

/** Runs one git attack confined (workspace-write) and as its control. */
async function gitAttack(
  attack: GitAttack,
  backend: SandboxBackendName,
  base: string,
  sandbox: LocalSandbox,
): Promise<RedteamOutcome> {
  const home = fresh(base, `git-home-${attack.name}`)
  const env = GIT_ENV(home)
  const marker = path.join(base, `hook-ran-${attack.name}`)
  // the control: the same plant, unconfined, then the person's commit
  let layout = attack.setup(base, env)
  const ctl = sh(attack.plant(marker, layout.root), layout.root, env)
  const controlEffect = commitRunsHook(layout.commitIn, env, marker)
  // under cordon
  layout = attack.setup(base, env)
  const run = await confined(
    sandbox,
    attack.plant(marker, layout.root),
    layout.root,
    env,
    { mode: 'workspace-write', workspaceRoot: layout.root, sessionId: 'redteam' },
    'protected',
  )
  const confinedEffect = run.refused === undefined && commitRunsHook(layout.commitIn, env, marker)
  return {
    scenario: attack.name,
    backend,
    mode: 'workspace-write',
    uid: process.getuid?.() ?? -1,
    controlEffect,
    confinedEffect,
    claimClass: 'protected',
    ...outcomeOf(run),
    detail: `control: ${ctl.stdout}${ctl.stderr}\nconfined stdout: ${run.stdout}\nconfined stderr: ${run.stderr}`,
  }
}

function outcomeOf(run: { enforcement?: string; verdict?: Verdict; refused?: string }) {
  return {
    ...(run.enforcement ? { enforcement: run.enforcement } : {}),
    ...(run.verdict ? { verdict: run.verdict } : {}),
    ...(run.refused ? { refused: run.refused } : {}),
  }
}

/**
 * A copy of the installed package inside a workspace (`<root>/node_modules/cordon`, its
 * dependencies beside it as npm hoists them): cordon protects its own directory, but the engine
 * imports zod from `<root>/node_modules/zod`, which the command may patch.
 */
async function packageDependency(backend: SandboxBackendName, base: string): Promise<RedteamOutcome> {
  const marker = path.join(base, 'dependency-ran')
  const layout = () => {
    const root = fresh(base, 'project')
    const pkg = path.join(root, 'node_modules', 'cordon')
    fs.mkdirSync(path.join(pkg, 'build', 'Release'), { recursive: true })
    for (const part of ['package.json', 'dist', 'profiles'])
      fs.cpSync(path.join(REPO, part), path.join(pkg, part), { recursive: true })
    for (const bin of ['cordon.node', 'cordon-exec'])
      fs.copyFileSync(path.join(REPO, 'build', 'Release', bin), path.join(pkg, 'build', 'Release', bin))
    for (const dep of ['zod', 'node-gyp-build'])
      fs.cpSync(path.join(REPO, 'node_modules', dep), path.join(root, 'node_modules', dep), { recursive: true })
    fs.chmodSync(path.join(pkg, 'build', 'Release', 'cordon-exec'), 0o755)
    return { root, pkg }
  }
  // Both of zod's entries: cordon loads the CommonJS one (src/policy/schema/zod-on-demand.ts), a caller's
  // \`import 'zod'\` the ESM one.
  const plant = [
    `echo 'import fs from "node:fs"; fs.writeFileSync(${JSON.stringify(marker)}, String(process.getuid()))' >> node_modules/zod/index.js`,
    `echo 'require("node:fs").writeFileSync(${JSON.stringify(marker)}, String(process.getuid()))' >> node_modules/zod/index.cjs`,
  ].join(' && ')
  const importRunsIt = (pkg: string) => {
    fs.rmSync(marker, { force: true })
    spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(`${pkg}/dist/index.js`)})`],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    )
    return fs.existsSync(marker)
  }
  let { root, pkg } = layout()
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base }
  const ctl = sh(plant, root, env)
  const controlEffect = importRunsIt(pkg)
  ;({ root, pkg } = layout())
  // The host that confines is the installed copy itself (its PACKAGE_ROOT is what it protects).
  const driver = path.join(base, 'drive-installed.mjs')
  fs.writeFileSync(driver, INSTALLED_DRIVER)
  const r = spawnSync(process.execPath, [driver, pkg, backend, root, plant], {
    encoding: 'utf8',
    timeout: 120_000,
    env,
  })
  let run: { stdout: string; stderr: string; enforcement?: string; verdict?: Verdict; refused?: string }
  try {
    run = JSON.parse(r.stdout)
  } catch {
    throw new Error(`the installed copy's driver failed (${r.status}): ${r.stderr}`)
  }
  const confinedEffect = run.refused === undefined && importRunsIt(pkg)
  return {
    scenario: 'cordon-package-dependency',
    backend,
    mode: 'workspace-write',
    uid: process.getuid?.() ?? -1,
    controlEffect,
    confinedEffect,
    claimClass: 'protected',
    ...outcomeOf(run),
    detail: `control: ${ctl.stderr}\nconfined: ${run.stdout}${run.stderr}`,
  }
}

/** Confines argv[5] with the installed copy at argv[2] (backend argv[3], workspace argv[4]); prints JSON. */
const INSTALLED_DRIVER = `
const [pkg, backend, root, script] = process.argv.slice(2)
const { LocalSandbox, LocalSubprocessRuntime } = await import(pkg + '/dist/index.js')
const sb = await LocalSandbox.create({ backends: [backend] })
const out = {}
try {
  const c = sb.confine({ argv: ['/bin/sh', '-c', script], cwd: root, graceMs: 500, env: { PATH: process.env.PATH },
    stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' } }, { mode: 'workspace-write', workspaceRoot: root, sessionId: 'redteam' })
  out.enforcement = c.enforcement
  out.verdict = c.plan.account.classes.protected
  out.protectedInWritable = c.plan.shield.protectedInWritable
  const rt = new LocalSubprocessRuntime()
  const h = rt.spawn({ ...c.spec, stdio: { stdin: 'ignore', stdout: { maxBytes: 65536 }, stderr: { maxBytes: 65536 } } })
  await h.done
  await h.waitForExit()
  out.stdout = 'protected: ' + JSON.stringify(out.protectedInWritable) + '\\n' + h.collected.stdout.readFrom(0).text
  out.stderr = h.collected.stderr.readFrom(0).text
} catch (e) { out.refused = String(e); out.stdout = ''; out.stderr = '' }
await sb.dispose()
process.stdout.write(JSON.stringify(out), () => process.exit(0))
`

/**
 * A hidden file the host replaces by rename while a command runs (editors, git-credential-store,
 * passwd and most tools that save atomically do), and a hidden dir the host creates meanwhile
 * (`aws configure` while a dev server runs): the command waits for the host, then reads both.
 */
async function hiddenDuringRun(
  backend: SandboxBackendName,
  mode: RedteamMode,
  base: string,
): Promise<RedteamOutcome[]> {
  const script = [
    'echo "first:$(cat "$HOME/.netrc" 2>/dev/null)"',
    ': > "$TMPDIR/ready"',
    'i=0; while [ ! -e "$TMPDIR/go" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done',
    'echo "second:$(cat "$HOME/.netrc" 2>/dev/null)"',
    'echo "aws:$(cat "$HOME/.aws/credentials" 2>/dev/null)"',
  ].join('\n')
  const prepare = () => {
    const home = fresh(base, `home-${mode}`)
    fs.writeFileSync(path.join(home, '.netrc'), 'machine old password OLD-NETRC\n', { mode: 0o600 })
    return home
  }
  const hostActs = (home: string) => {
    const temp = path.join(home, '.netrc.tmp')
    fs.writeFileSync(temp, 'machine new password NEW-NETRC\n', { mode: 0o600 })
    fs.renameSync(temp, path.join(home, '.netrc'))
    fs.mkdirSync(path.join(home, '.aws'), { mode: 0o700 })
    fs.writeFileSync(path.join(home, '.aws', 'credentials'), 'aws_secret_access_key = AWS-SECRET\n', { mode: 0o600 })
  }
  const ws = fresh(base, `ws-${mode}`)
  // control: the same script, unconfined, with a TMPDIR of the host's
  let home = prepare()
  const ctlTmp = fresh(base, `ctl-tmp-${mode}`)
  const rt = new LocalSubprocessRuntime()
  const ctl = await runWaiting(rt, specFor(['/bin/sh', '-c', script], ws, { HOME: home, TMPDIR: ctlTmp }), ctlTmp, () =>
    hostActs(home),
  )
  // under cordon, the hidden set read from the same HOME
  home = prepare()
  const sandbox = await LocalSandbox.create({ backends: [backend], env: { ...process.env, HOME: home } })
  let run: { stdout: string; enforcement?: string; verdict?: Verdict; refused?: string }
  try {
    const policy = { mode, sessionId: 'redteam', workspaceRoot: ws }
    const c = sandbox.confine(specFor(['/bin/sh', '-c', script], ws, { HOME: home }), policy as never)
    const tmp = c.tempDir as string
    const out = await runWaiting(rt, c.spec, tmp, () => hostActs(home))
    run = {
      stdout: out,
      ...(c.enforcement ? { enforcement: c.enforcement } : {}),
      verdict: c.plan?.account.classes.secrets as Verdict,
    }
  } catch (error) {
    run = { stdout: '', refused: String(error) }
  } finally {
    await sandbox.dispose()
    await rt.dispose()
  }
  const base0 = { backend, mode, uid: process.getuid?.() ?? -1, claimClass: 'secrets' as const, ...outcomeOf(run) }
  const detail = `control:\n${ctl}\nconfined:\n${run.stdout}`
  return [
    {
      ...base0,
      scenario: 'hidden-file-replaced-during-run',
      controlEffect: ctl.includes('second:machine new password NEW-NETRC'),
      confinedEffect: run.stdout.includes('NEW-NETRC'),
      detail,
    },
    {
      ...base0,
      scenario: 'hidden-dir-created-during-run',
      controlEffect: ctl.includes('aws:aws_secret_access_key = AWS-SECRET'),
      confinedEffect: run.stdout.includes('AWS-SECRET'),
      detail,
    },
  ]
}

/** Runs `spec`; once it has created `<tmp>/ready`, does `act` and creates `<tmp>/go`; its stdout. */
async function runWaiting(
  rt: LocalSubprocessRuntime,
  spec: ReturnType<typeof specFor>,
  tmp: string,
  act: () => void,
): Promise<string> {
  const handle = rt.spawn({
    ...spec,
    signal: AbortSignal.timeout(60_000),
    stdio: { stdin: 'ignore', stdout: { maxBytes: 1 << 16 }, stderr: { maxBytes: 1 << 16 } },
  })
  const ready = path.join(tmp, 'ready')
  const until = Date.now() + 30_000
  let acted = false
  const poll = setInterval(() => {
    if (acted || !fs.existsSync(ready)) {
      if (Date.now() > until) clearInterval(poll)
      return
    }
    acted = true
    clearInterval(poll)
    act()
    fs.writeFileSync(path.join(tmp, 'go'), '')
  }, 20)
  await handle.done
  await handle.waitForExit()
  clearInterval(poll)
  return `${handle.collected.stdout?.readFrom(0).text ?? ''}${acted ? '' : '(the host never acted)'}`
}

/**
 * A policy's hidden file inside the workspace: one run renames its parent directory (the mount
 * over the file moves along), the next plan finds nothing at the hidden path and mounts nothing,
 * and the next run reads the file under its new name.
 */
async function hiddenParentRenamed(backend: SandboxBackendName, base: string): Promise<RedteamOutcome> {
  const layout = () => {
    const root = fresh(base, 'hidden-in-root')
    fs.mkdirSync(path.join(root, 'config'))
    fs.writeFileSync(path.join(root, 'config', 'secrets.json'), '{"token":"WORKSPACE-SECRET"}\n')
    return root
  }
  let root = layout()
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base }
  const ctl = sh('mv config moved && cat moved/secrets.json', root, env)
  root = layout()
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  const policy = {
    mode: 'workspace-write',
    workspaceRoot: root,
    sessionId: 'redteam',
    hiddenPaths: [path.join(root, 'config', 'secrets.json')],
  }
  let run1: Awaited<ReturnType<typeof confined>>
  let run2: Awaited<ReturnType<typeof confined>>
  try {
    run1 = await confined(sandbox, 'cat config/secrets.json; mv config moved', root, env, policy, 'secrets')
    run2 = await confined(sandbox, 'cat moved/secrets.json', root, env, policy, 'secrets')
  } finally {
    await sandbox.dispose()
  }
  return {
    scenario: 'hidden-in-workspace-parent-renamed',
    backend,
    mode: 'workspace-write',
    uid: process.getuid?.() ?? -1,
    controlEffect: ctl.stdout.includes('WORKSPACE-SECRET'),
    confinedEffect: `${run1.stdout}${run2.stdout}`.includes('WORKSPACE-SECRET'),
    claimClass: 'secrets',
    ...outcomeOf(run2),
    detail: `control: ${ctl.stdout}${ctl.stderr}\nrun 1: ${run1.stdout}${run1.stderr}\nrun 2: ${run2.stdout}${run2.stderr}`,
  }
}

/**
 * Root host, workspace = another user's home (a bind-mounted home in a container): the command
 * runs as the owner and writes the owner's dotfiles, which run unconfined at their next login.
 * roots.ts refuses a root that is or contains the HOST's home, not the owner's. Needs root and a
 * private mount namespace (the test starts this runner under `unshare -m`): a scratch dir is
 * bound over the owner's real home, so nothing of theirs is touched.
 */
async function ownerHomeAsRoot(backend: SandboxBackendName, base: string): Promise<RedteamOutcome> {
  const owner = ownerWithHome()
  if (owner === undefined) throw new Error('no passwd user other than root has an existing home here')
  const fake = fresh(base, 'owner-home')
  fs.chownSync(fake, owner.uid, owner.gid)
  fs.chmodSync(fake, 0o755)
  must(`mount --bind '${fake}' '${owner.home}'`, '/', process.env)
  const rc = path.join(owner.home, '.bashrc')
  const reset = () => {
    fs.writeFileSync(rc, '# owner rc\n')
    fs.chownSync(rc, owner.uid, owner.gid)
  }
  const plant = `echo 'echo planted-by-command' >> '${rc}'`
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/' }
  try {
    reset()
    const ctl = sh(
      `setpriv --reuid=${owner.uid} --regid=${owner.gid} --clear-groups -- /bin/sh -c "${plant}"`,
      '/',
      env,
    )
    const controlEffect = fs.readFileSync(rc, 'utf8').includes('planted-by-command')
    reset()
    const sandbox = await LocalSandbox.create({ backends: [backend] })
    let run: Awaited<ReturnType<typeof confined>>
    try {
      run = await confined(
        sandbox,
        plant,
        owner.home,
        env,
        { mode: 'workspace-write', workspaceRoot: owner.home, sessionId: 'redteam' },
        'content',
      )
    } finally {
      await sandbox.dispose()
    }
    const confinedEffect = fs.readFileSync(rc, 'utf8').includes('planted-by-command')
    return {
      scenario: 'run-as-owner-home-as-workspace',
      backend,
      mode: 'workspace-write',
      uid: process.getuid?.() ?? -1,
      controlEffect,
      confinedEffect,
      claimClass: 'content',
      ...outcomeOf(run),
      detail: `owner ${owner.uid} home ${owner.home}\ncontrol: ${ctl.stderr}\nconfined: ${run.stdout}${run.stderr}${run.refused ?? ''}`,
    }
  } finally {
    sh(`umount -l '${owner.home}'`, '/', env)
  }
}

/** A passwd user other than root whose home exists and is theirs. */
export function ownerWithHome(): { uid: number; gid: number; home: string } | undefined {
  for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const f = line.split(':')
    const uid = Number(f[2])
    const home = f[5] ?? ''
    if (!(uid > 0) || uid === 65534 || !path.isAbsolute(home) || home === '/') continue
    try {
      const st = fs.statSync(home)
      if (st.isDirectory() && st.uid === uid) return { uid, gid: Number(f[3]), home }
    } catch {
      // no such home
    }
  }
  return undefined
}

/**
 * The directory log is a file in the command's own TMPDIR, named in a shell variable the command
 * can read: made a directory, it makes the host's readFailureLog throw, and the executor's run()
 * rejects with a raw EISDIR instead of the run's result.
 */
async function failureLogDirectory(
  backend: SandboxBackendName,
  mode: RedteamMode,
  base: string,
): Promise<RedteamOutcome> {
  const root = fresh(base, `flog-${mode}`)
  const command = 'echo output-of-the-run; mkdir "$__cordon_dir_log" 2>/dev/null; false'
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  const outcome = async (ex: LocalShellExecutor, policy: object) => {
    try {
      const r = await ex.run(ex.resolve({ command, sandboxPolicy: policy as never }))
      return `resolved: exit ${r.exitCode}`
    } catch (error) {
      return `REJECTED: ${error instanceof Error ? `${error.name} ${(error as NodeJS.ErrnoException).code}: ${error.message}` : String(error)}`
    }
  }
  try {
    const policy = { mode, sessionId: 'redteam', workspaceRoot: root }
    const ex = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox, graceMs: 300 })
    const ctl = await outcome(ex, { mode: 'danger-full-access', workspaceRoot: root })
    const conf = await outcome(ex, policy)
    const plan = sandbox.plan(policy as never)
    return {
      scenario: 'failure-log-made-a-directory',
      backend,
      mode,
      uid: process.getuid?.() ?? -1,
      // the control: the very same command, unconfined through the same executor, gets its result
      controlEffect: ctl.startsWith('resolved'),
      confinedEffect: conf.startsWith('REJECTED'),
      claimClass: 'content',
      ...(plan ? { enforcement: plan.account.enforcement } : {}),
      detail: `unconfined: ${ctl}\nconfined: ${conf}`,
    }
  } finally {
    await sandbox.dispose()
  }
}

/** Every scenario this user can run on `backend`, in `base` (an empty dir this user owns). */
export async function runRedteam(
  backend: SandboxBackendName,
  base: string,
  which: 'all' | 'owner-home',
): Promise<RedteamOutcome[]> {
  if (which === 'owner-home') return [await ownerHomeAsRoot(backend, base)]
  const out: RedteamOutcome[] = []
  const sandbox = await LocalSandbox.create({ backends: [backend] })
  try {
    for (const attack of GIT_ATTACKS) out.push(await gitAttack(attack, backend, base, sandbox))
  } finally {
    await sandbox.dispose()
  }
  out.push(await packageDependency(backend, base))
  for (const mode of ['read-only', 'workspace-write'] as const)
    out.push(...(await hiddenDuringRun(backend, mode, base)))
  out.push(await hiddenParentRenamed(backend, base))
  for (const mode of ['read-only', 'workspace-write'] as const) out.push(await failureLogDirectory(backend, mode, base))
  return out
}
