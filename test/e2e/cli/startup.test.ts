// What keeps `cordon run` quick to start (bench/startup.mjs measures it): the CLI loads as one
// bundle with a code cache V8 accepts, and its happy path loads neither zod nor node:crypto.
// Each check runs in a fresh node, as the person's shell would start it.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const loader = path.resolve('bin/cli-loader.js')

/** Runs `script` (CommonJS, `loader` bound) in a fresh node in `cwd`; returns its JSON line. */
function inFreshNode(script: string, cwd: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['-e', `const loader = require(${JSON.stringify(loader)});\n${script}`], {
    cwd,
    encoding: 'utf8',
  })
  if (r.status !== 0) throw new Error(`node exited ${r.status}: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>
}

describe('the CLI start', () => {
  it('loads the bundle, with its code cache accepted by this node', () => {
    for (const f of [loader, path.resolve('dist/cli/cordon.bundle.cjs'), path.resolve('dist/cli/cordon.bundle.cache')])
      if (!fs.existsSync(f)) throw new Error(`${f} is missing: run npm run build:ts`)
    const facts = inFreshNode(
      `const b = loader.loadBundle(true)
       console.log(JSON.stringify({ bundle: b !== undefined, rejected: b?.script.cachedDataRejected }))`,
      scratchDir('cli-startup-cache'),
    )
    expect(facts).toEqual({ bundle: true, rejected: false })
  })

  it('runs `cordon run -- true` without loading zod or node:crypto (control: an invalid flag loads zod)', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const cwd = scratchDir('cli-startup-modules')
    const probe = (argv: string[]) =>
      inFreshNode(
        `const { Writable } = require('node:stream')
         const sink = new Writable({ write: (_c, _e, done) => done() })
         const before = new Set(process.moduleLoadList)
         loader.run(${JSON.stringify(argv)}, { stdout: sink, stderr: sink }).then((status) => {
           const zod = Object.keys(require.cache).some((k) => k.includes('/node_modules/zod/'))
           const crypto = process.moduleLoadList.some((m) => !before.has(m) && m === 'NativeModule crypto')
           console.log(JSON.stringify({ status, zod, crypto }))
         })`,
        cwd,
      )
    expect(probe(['run', '--', 'true'])).toEqual({ status: 0, zod: false, crypto: false })
    // The control: a policy the hand check cannot pass goes to the schema, which loads zod.
    expect(probe(['run', '--mode', 'workspace-write', '--protect', '../outside', '--', 'true'])).toMatchObject({
      status: 125,
      zod: true,
    })
  })
})
