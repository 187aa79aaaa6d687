// Attacker's pass 4: the host's after-run repairs of protected paths no mount can hold
// (src/subprocess/process/must-not-appear.ts) act on paths inside the workspace, which the confined
// command controls. Replacing a DIRECTORY on the way (npm's `node_modules/.bin`, the dir of a
// missing `include.path` file) with a link made the host, as root, act in the link's target:
//  - `.bin` -> a host dir: the host renamed the host's `cordon` there aside and made a symlink;
//  - `.bin` -> a dir of the workspace holding `cordon` -> ../cordon/bin/cordon.js: the link the
//    host checked read right, and `npx cordon` ran the planted ../cordon/bin/cordon.js unconfined;
//  - `conf` -> a host dir: the host renamed the host's `conf/extra.gitconfig` aside.
// Each control makes the same layout unconfined and shows where it leads (by path, or by running
// the planted code); cordon acts inside each directory opened by descriptor, never through a
// link, and moves the link itself aside. Both as root and as uid 65534 (the host, the workspace
// and the host dir theirs, so only the repairs' own care stands between the run and that dir).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../../src/policy/backends.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'
import type { AttackUser } from '../attacks/attack.js'
import {
  type Installed,
  installCopy,
  laterRunExecutesPlant,
  markerJs,
  ownByNobody,
  plant,
  protectedGoverned,
  REFUSED_PLAN,
} from '../host/installed-package.js'
import { entries } from './link-repairs.js'
import { NOBODY, runScriptAs, USERS } from '../host/run-as.js'

const TARGET = '../cordon/bin/cordon.js'
const HOST_FILE = 'host file\n'

/** A host dir (outside the workspace, not writable to the command) holding `name`. */
function hostDir(i: Installed, name: string): string {
  const dir = path.join(i.base, 'host')
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, name), HOST_FILE)
  return dir
}

const binOfHost = (dir: string) => `rm -rf node_modules/.bin && ln -s ${dir} node_modules/.bin`
// The link it leaves reads exactly as the one it replaced: a check of the link's text passes.
const binOfOwn = (i: Installed) =>
  `mkdir -p own cordon/bin && printf '#!${process.execPath}\\n%s\\n' '${markerJs(i)}' > cordon/bin/cordon.js && chmod +x cordon/bin/cordon.js && ln -s ${TARGET} own/cordon && rm -rf node_modules/.bin && ln -s ../own node_modules/.bin`
const confOfHost = (dir: string) => `ln -s ${dir} conf`

/** A copy whose git config includes a missing conf/extra.gitconfig (a path that must not appear). */
function withInclude(base: string, name: string): Installed {
  const i = installCopy(base, name)
  expect(spawnSync('git', ['init', '-q', i.root]).status).toBe(0)
  fs.appendFileSync(path.join(i.root, '.git', 'config'), '[include]\n\tpath = ../conf/extra.gitconfig\n')
  return i
}

const npxCordon = (i: Installed, user: AttackUser) =>
  laterRunExecutesPlant(i, [path.join(i.root, 'node_modules', '.bin', 'cordon'), '--version'], user)

const LINKS_HOST = path.join(import.meta.dirname, 'link-repairs-host.ts')
/** The by-path repair, run as `user` (the control). */
async function byPath(user: AttackUser, ...args: string[]): Promise<string> {
  const r = await runScriptAs(user, LINKS_HOST, args, { timeoutMs: 60_000 })
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.trim()
}

/** Hands the layout to `user` (root keeps it). */
function ownedBy(i: Installed, user: AttackUser): Installed {
  if (user === 'nobody') ownByNobody(i)
  return i
}

/** A scratch dir `user` can use (uid 65534 must reach the layouts inside it). */
function scratchFor(user: AttackUser, prefix: string): string {
  const base = scratchDir(`${prefix}-${user}`)
  if (user === 'nobody') fs.chownSync(base, NOBODY, NOBODY)
  return base
}

const needsRoot = process.getuid?.() !== 0
for (const user of USERS) {
  const skip = user === 'nobody' && needsRoot
  const as = skip ? `as ${user} (skipped: only a root test process can act as uid 65534)` : `as ${user}`

  describe.skipIf(skip)(
    `controls ${as}: the plants, made unconfined, lead the host to a host file or run planted code`,
    () => {
      const base = scratchFor(user, 'cordon-rt4-links-control')

      it('node_modules/.bin -> a host dir: a restore by path renames the host file and links there', async () => {
        const i = installCopy(base, 'bin-host', { binLink: true })
        const host = hostDir(i, 'cordon')
        ownedBy(i, user)
        expect(plant(i, 'none', binOfHost(host), user).status).toBe(0)
        expect(await byPath(user, 'restore', path.join(i.root, 'node_modules', '.bin', 'cordon'), TARGET)).toBe(
          'restored',
        )
        expect(entries(host)).toEqual(['cordon@', expect.stringMatching(/^cordon\.cordon-refused-\d+$/)])
      })

      it('node_modules/.bin -> a dir of its own: the link reads right, and npx cordon runs the planted code', () => {
        const i = ownedBy(installCopy(base, 'bin-own', { binLink: true }), user)
        expect(plant(i, 'none', binOfOwn(i), user).status).toBe(0)
        expect(fs.readlinkSync(path.join(i.root, 'node_modules', '.bin', 'cordon'))).toBe(TARGET)
        expect(npxCordon(i, user)).toBe(true)
      })

      it('conf -> a host dir: taking away conf/extra.gitconfig by path renames the host file', async () => {
        const i = withInclude(base, 'conf-host')
        const host = hostDir(i, 'extra.gitconfig')
        ownedBy(i, user)
        expect(plant(i, 'none', confOfHost(host), user).status).toBe(0)
        expect(await byPath(user, 'take-away', path.join(i.root, 'conf', 'extra.gitconfig'))).toBe('taken')
        expect(entries(host)).toEqual([expect.stringMatching(/^extra\.gitconfig\.cordon-refused-\d+$/)])
      })
    },
  )

  describe.skipIf(skip)(`confined ${as}: the host repairs inside the workspace and never through a link`, () => {
    const base = scratchFor(user, 'cordon-rt4-links')
    for (const backend of TEST_BACKENDS) {
      describe(backend, () => {
        let governed: boolean | 'refused' | undefined
        const verdict = (i: Installed) => (governed ??= protectedGoverned(i, backend as SandboxBackendName, user))
        /**
         * False (the claim holds by the account) when the backend admits the protected class
         * ungoverned, or is refused the plan (it cannot keep the package read-only: nothing ran).
         */
        const claimed = (i: Installed, output: string) => {
          const v = verdict(i)
          if (v === 'refused') expect(output, 'the plan is refused (STATE_IN_GRANT)').toMatch(REFUSED_PLAN)
          else if (!v) expect(output, 'an ungoverned protected class is reported').toMatch(/enforced only partially/)
          return v === true
        }

        it('node_modules/.bin -> a host dir: the host dir is untouched', async (ctx) => {
          await needBackend(ctx, backend)
          const i = installCopy(base, `${backend}-bin-host`, { binLink: true })
          const host = hostDir(i, 'cordon')
          ownedBy(i, user)
          const run = plant(i, backend, `${binOfHost(host)}; echo x > ${host}/x || echo denied`, user)
          if (verdict(i) !== 'refused')
            expect(run.output, 'reach: the command cannot write the host dir itself').toMatch(/denied/)
          expect(entries(host), `BREAK under ${backend}:\n${run.output}`).toEqual(['cordon'])
          expect(fs.readFileSync(path.join(host, 'cordon'), 'utf8')).toBe(HOST_FILE)
          // Where the backend admits the class ungoverned, the account saying so is the claim.
          if (claimed(i, run.output)) {
            // The link the run made is moved aside and the real link made again in a real .bin.
            const bin = path.join(i.root, 'node_modules', '.bin')
            expect(fs.lstatSync(bin).isDirectory()).toBe(true)
            expect(fs.readlinkSync(path.join(bin, 'cordon'))).toBe(TARGET)
            expect(run.output).toMatch(/\.bin\/cordon/)
          }
        }, 120_000)

        it('node_modules/.bin -> a dir of its own: npx cordon runs no planted code', async (ctx) => {
          await needBackend(ctx, backend)
          const i = ownedBy(installCopy(base, `${backend}-bin-own`, { binLink: true }), user)
          const run = plant(i, backend, binOfOwn(i), user)
          const effect = npxCordon(i, user)
          // Where the backend admits the class ungoverned, the account saying so is the claim.
          if (claimed(i, run.output)) {
            expect(effect, `BREAK under ${backend}:\n${run.output}`).toBe(false)
            expect(fs.readlinkSync(path.join(i.root, 'node_modules', '.bin', 'cordon'))).toBe(TARGET)
          }
        }, 120_000)

        it('conf -> a host dir (a missing include.path): the host file stays, the link goes', async (ctx) => {
          await needBackend(ctx, backend)
          const i = withInclude(base, `${backend}-conf-host`)
          const host = hostDir(i, 'extra.gitconfig')
          ownedBy(i, user)
          const run = plant(i, backend, confOfHost(host), user)
          expect(run.status).toBe(verdict(i) === 'refused' ? 125 : 0)
          expect(entries(host), `BREAK under ${backend}:\n${run.output}`).toEqual(['extra.gitconfig'])
          // Where the backend admits the class ungoverned, the account saying so is the claim.
          if (claimed(i, run.output)) {
            expect(fs.existsSync(path.join(i.root, 'conf')), 'the link the run made is moved aside').toBe(false)
            expect(run.output).toMatch(/conf\/extra\.gitconfig/)
          }
        }, 120_000)
      })
    }
  })
}
