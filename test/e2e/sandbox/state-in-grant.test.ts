// cordon's own state inside a grant (issue 21): a writable root that holds cordon's private parent
// (the cached probe verdict) or its configuration dir is refused with STATE_IN_GRANT before any
// run, on every backend, and the cache stays as it was; the control shows the very same grant lets
// a confined run rewrite that file when the parent lies elsewhere. A root that holds cordon's
// package runs only where the package stays read-only (bubblewrap), never on Landlock; a root that
// is the package, or holds a runner the host starts, is refused everywhere.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxBackendName, SandboxCapabilities } from '../../../src/policy/backends.js'
import { isStateInGrantError, STATE_IN_GRANT } from '../../../src/policy/errors.js'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { refusedRoot } from '../../../src/sandbox/roots.js'
import { PACKAGE_ROOT } from '../../../src/sandbox/view/protected-paths.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { runSpec, specFor } from '../../support/sandbox/run-confined.js'
import { scratchDir } from '../../support/scratch.js'

const uid = process.getuid?.() ?? 'user'

/** A home of its own (its ~/.cache/cordon is the private parent), a workspace beside it. */
function layout(extraEnv: NodeJS.ProcessEnv = {}) {
  const base = scratchDir('cordon-state')
  const home = path.join(base, 'home')
  const ws = path.join(base, 'ws')
  fs.mkdirSync(path.join(home, '.cache'), { recursive: true, mode: 0o700 })
  fs.mkdirSync(ws)
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, ...extraEnv }
  delete env.XDG_RUNTIME_DIR
  delete env.XDG_CONFIG_HOME
  if (extraEnv.CORDON_PRIVATE_DIR === undefined) delete env.CORDON_PRIVATE_DIR
  const parent = path.join(home, '.cache', 'cordon')
  return { base, home, ws, env, parent, cacheFile: path.join(parent, `probe-${uid}.json`) }
}

const writing = (ws: string, extra: string[]): SandboxExecutionPolicy => ({
  mode: 'workspace-write',
  workspaceRoot: ws,
  writableRoots: extra,
})
const sh = (script: string, cwd: string) => specFor(['/bin/sh', '-c', script], cwd)

/** The error `fn` throws (undefined when it throws none). */
function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  return undefined
}

async function sandboxFor(name: SandboxBackendName, env: NodeJS.ProcessEnv, capabilities?: SandboxCapabilities) {
  return LocalSandbox.create({ backends: [name], env, ...(capabilities ? { capabilities } : {}) })
}

describe.each(TEST_BACKENDS)("cordon's state inside a grant [%s]", (name) => {
  it('a writable ~/.cache holding the private parent: refused, the cached verdict unchanged', async (ctx) => {
    await needBackend(ctx, name)
    const l = layout()
    const sandbox = await sandboxFor(name, l.env)
    try {
      // The first plan makes the parent; the cached verdict is planted in it.
      sandbox.plan({ mode: 'read-only', workspaceRoot: l.ws })
      fs.writeFileSync(l.cacheFile, 'VERDICT', { mode: 0o600 })
      const attack = sh(`echo forged > ${l.cacheFile}`, l.ws)
      const error = thrown(() => sandbox.confine(attack, writing(l.ws, [path.join(l.home, '.cache')])))
      expect(isStateInGrantError(error), String(error)).toBe(true)
      expect(error).toMatchObject({ code: STATE_IN_GRANT, root: path.join(l.home, '.cache'), path: l.parent })
      expect((error as Error).message).toContain('probe verdict')
      // The workspace itself: at ~/.cache, and at a home holding it.
      for (const ws of [path.join(l.home, '.cache'), l.home])
        expect(thrown(() => sandbox.plan(writing(ws, [])))).toMatchObject({ code: STATE_IN_GRANT })
      expect(fs.readFileSync(l.cacheFile, 'utf8')).toBe('VERDICT')
    } finally {
      await sandbox.dispose()
    }
  })

  it('control: the same grant and plant, the check bypassed: the confined run rewrites the file', async (ctx) => {
    await needBackend(ctx, name)
    const l = layout()
    // The check bypassed: this host's state is in another home, so the grant holds none of it.
    const other = path.join(l.base, 'other-home')
    fs.mkdirSync(other)
    const sandbox = await sandboxFor(name, { ...l.env, HOME: other, CORDON_PRIVATE_DIR: path.join(l.base, 'private') })
    try {
      fs.mkdirSync(l.parent, { mode: 0o700 })
      fs.writeFileSync(l.cacheFile, 'VERDICT', { mode: 0o600 })
      const confined = sandbox.confine(
        sh(`echo forged > ${l.cacheFile}`, l.ws),
        writing(l.ws, [path.join(l.home, '.cache')]),
      )
      const r = await runSpec(confined.spec)
      expect(r.exitCode, r.stderr).toBe(0)
      expect(fs.readFileSync(l.cacheFile, 'utf8')).toBe('forged\n')
    } finally {
      await sandbox.dispose()
    }
  })

  it("the configuration dir ($XDG_CONFIG_HOME/cordon), present or not, is refused as a writable root's content", async (ctx) => {
    await needBackend(ctx, name)
    const l = layout()
    const config = path.join(l.base, 'config')
    fs.mkdirSync(config)
    const sandbox = await sandboxFor(name, { ...l.env, XDG_CONFIG_HOME: config })
    try {
      const error = thrown(() => sandbox.plan(writing(l.ws, [config])))
      expect(error).toMatchObject({ code: STATE_IN_GRANT, root: config, path: path.join(config, 'cordon') })
    } finally {
      await sandbox.dispose()
    }
  })

  it('a runner the probe names inside a writable root is refused: no backend keeps it read-only', async (ctx) => {
    await needBackend(ctx, name)
    const l = layout()
    const probed = await sandboxFor(name, l.env)
    const caps = structuredClone(probed.capabilities)
    await probed.dispose()
    const runner = path.join(l.ws, 'bin', 'bwrap')
    fs.mkdirSync(path.dirname(runner))
    fs.writeFileSync(runner, '#!/bin/sh\n', { mode: 0o755 })
    ;(caps.backends[name] as { executable?: string }).executable = runner
    const sandbox = await sandboxFor(name, l.env, caps)
    try {
      expect(thrown(() => sandbox.plan(writing(l.ws, [])))).toMatchObject({ code: STATE_IN_GRANT, path: runner })
    } finally {
      await sandbox.dispose()
    }
  })

  it("a workspace that is cordon's package is refused", async (ctx) => {
    await needBackend(ctx, name)
    const l = layout()
    const sandbox = await sandboxFor(name, l.env)
    try {
      expect(thrown(() => sandbox.plan(writing(PACKAGE_ROOT, [])))).toMatchObject({
        code: STATE_IN_GRANT,
        path: PACKAGE_ROOT,
      })
    } finally {
      await sandbox.dispose()
    }
  })
})

describe("a writable root holding cordon's package", () => {
  const outer = path.dirname(PACKAGE_ROOT)
  const outerRefused = refusedRoot(outer, process.env.HOME)
  const planted = path.join(PACKAGE_ROOT, `.cordon-planted-${process.pid}`)

  it.skipIf(outerRefused !== undefined)(
    'Landlock refuses the plan (it cannot keep the package read-only)',
    async (ctx) => {
      await needBackend(ctx, 'landlock')
      const l = layout()
      const sandbox = await sandboxFor('landlock', l.env)
      try {
        const error = thrown(() => sandbox.plan(writing(l.ws, [outer])))
        expect(error).toMatchObject({ code: STATE_IN_GRANT, root: outer, path: PACKAGE_ROOT })
        expect((error as Error).message).toMatch(/Install cordon outside the workspace, or make bubblewrap usable/)
        expect((error as Error).message).toMatch(
          /landlock cannot keep it so inside a writable root, and no backend of the chain can/,
        )
      } finally {
        await sandbox.dispose()
      }
    },
  )

  it.skipIf(outerRefused !== undefined)(
    'the default chain moves to bubblewrap, which keeps the package read-only: a plant fails',
    async (ctx) => {
      await needBackend(ctx, 'landlock')
      await needBackend(ctx, 'bubblewrap')
      const l = layout()
      const sandbox = await LocalSandbox.create({ env: l.env })
      try {
        const confined = sandbox.confine(sh(`touch ${planted}`, l.ws), writing(l.ws, [outer]))
        expect(confined.backend).toBe('bubblewrap')
        const r = await runSpec(confined.spec)
        expect(r.exitCode).not.toBe(0)
        expect(fs.existsSync(planted)).toBe(false)
      } finally {
        fs.rmSync(planted, { force: true })
        await sandbox.dispose()
      }
    },
  )

  it('control: Landlock leaves a subdir of a writable root writable (what the refusal stands in for)', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const l = layout()
    const fakePackage = path.join(l.ws, 'node_modules', 'cordon')
    fs.mkdirSync(fakePackage, { recursive: true })
    const sandbox = await sandboxFor('landlock', l.env)
    try {
      const confined = sandbox.confine(sh(`touch ${fakePackage}/planted`, l.ws), writing(l.ws, []))
      const r = await runSpec(confined.spec)
      expect(r.exitCode, r.stderr).toBe(0)
      expect(fs.existsSync(path.join(fakePackage, 'planted'))).toBe(true)
    } finally {
      await sandbox.dispose()
    }
  })
})
