// Two surfaces attacked as an attacker on this host would, each attack with its unconfined control.
// A: confined terminals and host descriptors (the Landlock ruleset built per spawn and handed to
// cordon-exec through node-pty's fork, and every other host fd). B: the installed package's CLI
// loader, bundle, code cache and the modules it require()s at run time (zod, node-pty), planted
// from a confined workspace-write command and run by a later unconfined cordon.
import { spawnSync } from 'node:child_process'
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { isSpawnError } from '../../../src/policy/errors.js'
import type { SandboxExecutionPolicy, SandboxMode } from '../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { loadNative } from '../../../src/subprocess/native.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import type { SubprocessTerminalHandle, SubprocessTerminalSpawnSpec } from '../../../src/subprocess/types.js'
import { describeWithBackend, needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir, scratchDirAs } from '../../support/scratch.js'
import { describeConfinedTerminals, Screen } from '../../support/subprocess/terminal.js'
import { PYTHON } from '../host/host-objects.js'
import { NOBODY, REPO } from '../host/run-as.js'
import {
  cli,
  type Installed,
  installCopy,
  type LayoutOptions,
  laterRunExecutesPlant,
  markerJs,
  plant,
  protectedGoverned,
  REFUSED_PLAN,
} from '../host/installed-package.js'
import { LIST_SESSION_FDS, sessionFds, WIDEN_HELD_RULESETS, widenedFds } from './fd-probes.js'

const runtime = new LocalSubprocessRuntime({ spillDir: scratchDir('cordon-hostfds') })

/** A fresh workspace root and, beside it, a dir outside every root. */
function rootAndOutside(label: string): { root: string; outside: string } {
  const base = scratchDir(label)
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  mkdirSync(root)
  mkdirSync(outside)
  return { root, outside }
}
afterAll(() => runtime.dispose())
const opened: SubprocessTerminalHandle[] = []
afterEach(() => Promise.all(opened.splice(0).map((t) => t.terminate())).then(() => undefined))

const CONFINED: readonly SandboxMode[] = ['read-only', 'workspace-write']
const native = loadNative()

function termSpec(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): SubprocessTerminalSpawnSpec {
  return { argv, cwd, cols: 200, rows: 50, graceMs: 1000, env: { PATH: process.env.PATH, ...env } }
}

/** Starts `spec` on a terminal and returns everything it printed once it exited. */
async function runTerminal(spec: SubprocessTerminalSpawnSpec): Promise<{ text: string; exitCode: number | null }> {
  const terminal = await runtime.spawnTerminal(spec)
  opened.push(terminal)
  const screen = new Screen(terminal)
  const outcome = await terminal.done
  await terminal.terminate()
  return { text: screen.text, exitCode: outcome.exitCode }
}

/** `spec` run unconfined (no launcher) but handed `ruleset` the way spawnTerminal hands a confined one over. */
function handedUnconfined(
  argv: readonly string[],
  cwd: string,
  ruleset: NonNullable<SubprocessTerminalSpawnSpec['ruleset']>,
  env: NodeJS.ProcessEnv = {},
): SubprocessTerminalSpawnSpec {
  // handOver only asks that the argv asks for it: a trailing `--ruleset-fd @ruleset` the program ignores.
  return { ...termSpec([...argv, '--ruleset-fd', '@ruleset'], cwd, env), ruleset }
}

/**
 * Whether a probe's entry names a descriptor it could read the target of: a refused fd table,
 * an fd whose target is refused (EACCES: the supervisor, outside the domain) and the probe's own
 * listing fd gone by the time it was read (ENOENT) name none.
 */
function holdsDescriptor(entry: string): boolean {
  return !/:refused:\d+$/.test(entry) && !/:unreadable\d+$/.test(entry)
}

/** A host file opened without close-on-exec (a descriptor every fork of the host inherits). */
function inheritableHostFile(dir: string): { fd: number; path: string; close(): void } {
  const path = join(dir, 'host-secret')
  writeFileSync(path, 'cordon-host-secret\n')
  const fd = openSync(path, 'r')
  expect(native.setCloexec(fd, false)).toBe(0)
  return { fd, path, close: () => closeSync(fd) }
}

describe('A: confined terminals and host descriptors', async () => {
  await describeConfinedTerminals(
    'the confined program holds no host fd, nor can it read its session’s',
    (backend, sandbox) => {
      for (const mode of CONFINED) {
        it(`${mode}: no fd above 2 in the program; the supervisor's fd table is refused`, async () => {
          const root = scratchDir(`cordon-hostfds-${backend}`)
          const host = inheritableHostFile(root)
          try {
            const probe = termSpec([PYTHON, '-c', LIST_SESSION_FDS], root)
            // Control: the same probe on an unconfined terminal sees the host's inheritable fd
            // (node-pty closes nothing), and under Landlock the handed-over ruleset too.
            const confined = sandbox().confineTerminal(probe, { mode, workspaceRoot: root })
            const control = confined.spec.ruleset ? handedUnconfined(probe.argv, root, confined.spec.ruleset) : probe
            const seen = sessionFds((await runTerminal(control)).text)
            expect(seen, 'control printed its fds').toBeDefined()
            expect(seen?.some((e) => e.endsWith(`:${host.path}`))).toBe(true)
            if (confined.spec.ruleset) expect(seen?.some((e) => e.includes('landlock-ruleset'))).toBe(true)

            const { text } = await runTerminal(confined.spec)
            const fds = sessionFds(text)
            expect(fds, `confined probe printed its fds:\n${text}`).toBeDefined()
            // Every entry is a refused fd table (the supervisor, outside the domain), none a descriptor.
            expect(fds?.filter(holdsDescriptor), text).toEqual([])
          } finally {
            host.close()
          }
        })
      }
    },
  )

  await describeWithBackend('landlock', 'the ruleset a terminal inherits', (sandbox) => {
    it('whoever holds a handed-over ruleset (the control: an unconfined holder adds a rule to it) widens no later terminal; the confined program holds none', async () => {
      const { root, outside } = rootAndOutside('cordon-hostfds-widen')
      const policy: SandboxExecutionPolicy = { mode: 'read-only', workspaceRoot: root }
      const writeOutside = termSpec(['/bin/sh', '-c', `echo x > ${outside}/f && echo WROTE || echo REFUSED`], root)
      const env = { WIDEN_DIR: outside }
      const first = sandbox().confineTerminal(termSpec([PYTHON, '-c', WIDEN_HELD_RULESETS], root, env), policy)
      const handed = first.spec.ruleset
      expect(handed, 'a Landlock terminal carries a ruleset to hand over').toBeDefined()
      // Control: an unconfined program handed the ruleset adds a write rule outside the root to it.
      const held = handedUnconfined([PYTHON, '-c', WIDEN_HELD_RULESETS], root, handed!, env)
      const added = widenedFds((await runTerminal(held)).text)
      expect(added?.length, 'the holder widened the ruleset it was handed').toBe(1)
      // …and yet the next terminal of the same policy is as narrow as planned: its ruleset is new.
      expect((await runTerminal(sandbox().confineTerminal(writeOutside, policy).spec)).text).toContain('REFUSED')
      // Attack: the confined program itself tries every fd it holds.
      const { text } = await runTerminal(first.spec)
      expect(widenedFds(text), text).toEqual([])
      expect((await runTerminal(sandbox().confineTerminal(writeOutside, policy).spec)).text).toContain('REFUSED')
    })

    it('a spec whose sandbox was disposed refuses to run (SpawnError at landlock) and runs nothing', async () => {
      const { root, outside } = rootAndOutside('cordon-hostfds-reuse')
      const first = await LocalSandbox.create({ backends: ['landlock'] })
      const stale = first.confineTerminal(termSpec(['/bin/sh', '-c', `echo x > ${outside}/f; echo RAN`], root), {
        mode: 'read-only',
        workspaceRoot: root,
      })
      await first.dispose()
      const error = await runtime.spawnTerminal(stale.spec).then(
        (t) => {
          opened.push(t)
          return undefined
        },
        (e: unknown) => e,
      )
      expect(isSpawnError(error) && error.stage, String(error)).toBe('landlock')
      expect(existsSync(join(outside, 'f'))).toBe(false)
    })

    it('a forged ruleset that hands over a host file: the file is handed over (control), cordon-exec runs nothing', async () => {
      const root = scratchDir('cordon-hostfds-forged')
      const host = inheritableHostFile(root)
      host.close()
      // Each spawn closes what it was handed: the forgery opens the file anew each time.
      const forged = { closed: false, fresh: () => openSync(host.path, 'r') }
      // Control: an unconfined program handed the forged ruleset reads the host's file.
      // $2 is the number spawnTerminal put where the argv asked for the ruleset.
      const control = handedUnconfined(['/bin/sh', '-c', 'cat "/proc/self/fd/$2"', 'sh'], root, forged)
      expect((await runTerminal(control)).text).toContain('cordon-host-secret')
      const confined = sandbox().confineTerminal(termSpec(['/bin/sh', '-c', 'echo PROGRAM-RAN'], root), {
        mode: 'read-only',
        workspaceRoot: root,
      })
      const { text, exitCode } = await runTerminal({ ...confined.spec, ruleset: forged })
      expect(text).not.toContain('PROGRAM-RAN')
      expect(exitCode).toBe(125)
    })
  })

  describe('through the CLI (run --tty), as root and as uid 65534', () => {
    const LEAKED_FD = 40
    for (const backend of TEST_BACKENDS)
      for (const user of ['root', 'nobody'] as const)
        for (const mode of CONFINED)
          it(`${backend}, ${user}, ${mode}: the program holds no host fd (control: a danger-full-access terminal does)`, async (ctx) => {
            await needBackend(ctx, backend)
            const base = scratchDirAs(user, 'cordon-hostfds-cli')
            // The workspace is not the home directory (cordon refuses that as a writable root).
            const root = join(base, 'project')
            mkdirSync(root)
            if (user === 'nobody') chownSync(root, NOBODY, NOBODY)
            const secret = join(base, 'cli-secret')
            writeFileSync(secret, 'cordon-cli-secret\n')
            const cliRun = (m: SandboxMode) => {
              const fd = openSync(secret, 'r')
              try {
                const argv = [
                  process.execPath,
                  join(REPO, 'bin', 'cordon.js'),
                  'run',
                  '--tty',
                  '--backend',
                  backend,
                  '--mode',
                  m,
                  '--root',
                  root,
                  '--',
                  PYTHON,
                  '-c',
                  LIST_SESSION_FDS,
                ]
                const full =
                  user === 'root'
                    ? argv
                    : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...argv]
                // fd 40 of the CLI: the secret, inherited without close-on-exec (as a harness's leaked
                // fd would be). A high number: Node's start-up reuses the lowest free ones.
                const r = spawnSync(full[0] as string, full.slice(1), {
                  cwd: root,
                  encoding: 'utf8',
                  timeout: 60_000,
                  stdio: ['pipe', 'pipe', 'pipe', ...Array<'ignore'>(LEAKED_FD - 3).fill('ignore'), fd],
                  env: { PATH: process.env.PATH, HOME: base },
                })
                return `${r.stdout}${r.stderr}`
              } finally {
                closeSync(fd)
              }
            }
            // Control: the unconfined terminal the CLI starts holds the secret the CLI inherited
            // (node-pty closes nothing), and nothing else of the test's making decides that.
            const controlText = cliRun('danger-full-access')
            expect(sessionFds(controlText)?.filter(holdsDescriptor), controlText).toContainEqual(
              expect.stringMatching(new RegExp(`:${LEAKED_FD}:${secret}$`)),
            )
            const text = cliRun(mode)
            const fds = sessionFds(text)
            expect(fds, text).toBeDefined()
            expect(fds?.filter(holdsDescriptor), text).toEqual([])
          }, 120_000)
  })
})

/** One plant in the installed copy's workspace and the later unconfined run that may execute it. */
interface PackageAttack {
  name: string
  layout?: LayoutOptions
  plant(i: Installed): string
  /** Whether the plant took effect (default: the installed CLI's `--version` runs the planted code). */
  effect?(i: Installed): boolean
}

const PTY_RUN = (i: Installed) =>
  laterRunExecutesPlant(i, cli(i, 'run', '--tty', '--mode', 'danger-full-access', '--', 'true'))
const VERSION = (i: Installed) => laterRunExecutesPlant(i, cli(i, '--version'))

const PACKAGE_ATTACKS: readonly PackageAttack[] = [
  {
    name: 'append to bin/cli-loader.js',
    plant: (i) => `echo '${markerJs(i)}' >> node_modules/cordon/bin/cli-loader.js`,
  },
  { name: 'append to bin/cordon.js', plant: (i) => `echo '${markerJs(i)}' >> node_modules/cordon/bin/cordon.js` },
  {
    name: 'replace bin/package.json (type: module breaks the CommonJS loader)',
    plant: () => `echo '{"type":"module"}' > node_modules/cordon/bin/package.json`,
    effect: (i) => readFileSync(join(i.pkg, 'bin', 'package.json'), 'utf8').includes('module'),
  },
  {
    name: 'append to dist/cli/cordon.bundle.cjs',
    plant: (i) => `echo '${markerJs(i)}' >> node_modules/cordon/dist/cli/cordon.bundle.cjs`,
  },
  {
    name: 'replace dist/cli/cordon.bundle.cache',
    plant: () => 'head -c 4096 /dev/urandom > node_modules/cordon/dist/cli/cordon.bundle.cache',
    effect: (i) =>
      !readFileSync(join(i.pkg, 'dist', 'cli', 'cordon.bundle.cache')).equals(
        readFileSync(join(REPO, 'dist', 'cli', 'cordon.bundle.cache')),
      ),
  },
  {
    name: 'create dist/cli/cordon.bundle.cache where the package ships none',
    layout: { codeCache: false },
    plant: () => 'head -c 4096 /dev/urandom > node_modules/cordon/dist/cli/cordon.bundle.cache',
    effect: (i) => existsSync(join(i.pkg, 'dist', 'cli', 'cordon.bundle.cache')),
  },
  {
    name: 'rename the package directory away and put a patched copy in its place',
    plant: (i) =>
      `mv node_modules/cordon node_modules/cordon-old && cp -a node_modules/cordon-old node_modules/cordon && echo '${markerJs(i)}' >> node_modules/cordon/bin/cordon.js`,
    effect: VERSION,
  },
  {
    name: 'rename node_modules away and put a patched copy in its place',
    plant: (i) =>
      `mv node_modules nm-old && mkdir node_modules && cp -a nm-old/* node_modules/ && echo '${markerJs(i)}' >> node_modules/cordon/bin/cordon.js`,
    effect: VERSION,
  },
  {
    name: 'plant node_modules/node-pty.js beside the installed node-pty (a file wins over the directory)',
    plant: (i) =>
      `echo '${markerJs(i)} module.exports = require("../node-pty/lib/index.js")' > node_modules/node-pty.js`,
    effect: PTY_RUN,
  },
  {
    name: 'plant node_modules/node-pty where the optional node-pty is not installed',
    layout: { nodePty: false },
    plant: (i) =>
      `mkdir -p node_modules/node-pty && echo '${markerJs(i)}' > node_modules/node-pty/index.js && echo '{"name":"node-pty","main":"index.js"}' > node_modules/node-pty/package.json`,
    effect: PTY_RUN,
  },
  {
    name: "replace npm's node_modules/.bin/cordon link",
    layout: { binLink: true },
    plant: (i) =>
      `rm -f node_modules/.bin/cordon && printf '#!/bin/sh\\n${process.execPath} -e '"'"'${markerJs(i)}'"'"'\\n' > node_modules/.bin/cordon && chmod +x node_modules/.bin/cordon`,
    effect: (i) => laterRunExecutesPlant(i, [join(i.root, 'node_modules', '.bin', 'cordon'), '--version']),
  },
]

describe('B: the installed package, planted from a confined workspace-write command', () => {
  const base = scratchDir('cordon-hostfds-pkg')
  for (const backend of ['none', ...TEST_BACKENDS] as const) {
    const title = backend === 'none' ? 'control: the plant made unconfined runs in the later cordon' : backend
    describe(title, () => {
      let governed: boolean | 'refused' | undefined
      for (const attack of PACKAGE_ATTACKS)
        it(attack.name, async (ctx) => {
          if (backend !== 'none') await needBackend(ctx, backend)
          const installed = installCopy(base, `${backend}-${PACKAGE_ATTACKS.indexOf(attack)}`, attack.layout)
          const planted = plant(installed, backend, attack.plant(installed))
          const effect = (attack.effect ?? VERSION)(installed)
          if (backend === 'none') {
            expect(effect, `control: the plant did not take effect\n${planted.output}`).toBe(true)
            return
          }
          governed ??= protectedGoverned(installed, backend as SandboxBackendName)
          // A backend that cannot keep the package read-only (Landlock) is refused the plan: nothing ran.
          if (governed === 'refused') {
            expect(planted.output, 'the plan is refused (STATE_IN_GRANT)').toMatch(REFUSED_PLAN)
            expect(effect, `BREAK under ${backend} (plan refused, yet the plant took):\n${planted.output}`).toBe(false)
            return
          }
          // A backend that admits the protected class ungoverned (Landlock: a subpath of a writable
          // root cannot be made read-only; the run says partial) holds by its account.
          if (!governed) {
            expect(planted.output, 'an ungoverned protected class is reported').toMatch(/enforced only partially/)
            return
          }
          expect(effect, `BREAK under ${backend} (protected claimed governed):\n${planted.output}`).toBe(false)
        }, 120_000)
    })
  }
})
