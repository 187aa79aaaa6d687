// Several cordon hosts making another user's private parent at once (a root host running commands
// as a workspace's owner, with parallel runs): every one of them must get a fit directory, never
// "is owned by uid 0" because it looked between another host's mkdir and chown.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const layoutFile = path.resolve('dist/subprocess/private-dirs/layout.js')
const layout = pathToFileURL(layoutFile).href
const isRoot = process.getuid?.() === 0

/** Starts `count` node processes that each wait for `go` to exist, then make the owner's sessions dir. */
function race(count: number, base: string, go: string): Promise<{ code: number | null; out: string }[]> {
  const script = `
    const fs = require('node:fs')
    import(${JSON.stringify(layout)}).then((m) => {
      while (!fs.existsSync(${JSON.stringify(go)})) {}
      try {
        const dir = m.privateSubdir('sessions', { CORDON_PRIVATE_DIR: ${JSON.stringify(base)} }, { uid: 65534, gid: 65534 })
        process.stdout.write('ok ' + dir)
      } catch (e) { process.stdout.write('error ' + e.message); process.exitCode = 1 }
    })`
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
          let out = ''
          child.stdout.on('data', (d) => (out += d))
          child.on('close', (code) => resolve({ code, out }))
        }),
    ),
  )
}

describe('private directories of another user', () => {
  it('are made whole by concurrent hosts: each gets one, owned by the user, mode 0700', async (ctx) => {
    if (!isRoot) ctx.skip('only a root host makes another user’s private directories')
    if (!fs.existsSync(layoutFile)) throw new Error(`${layoutFile} is not built (run npm run build)`)
    for (let round = 0; round < 5; round++) {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-layout-race-'))
      try {
        const base = path.join(tmp, 'private')
        const go = path.join(tmp, 'go')
        const racing = race(6, base, go)
        // Give every process time to load the module and spin on `go`.
        await new Promise((r) => setTimeout(r, 700))
        fs.writeFileSync(go, '')
        const results = await racing
        expect(results.filter((r) => r.code !== 0).map((r) => r.out)).toEqual([])
        for (const d of [`${base}-uid65534`, `${base}-uid65534/sessions`]) {
          const st = fs.lstatSync(d)
          expect([st.uid, st.gid, st.mode & 0o777]).toEqual([65534, 65534, 0o700])
        }
        // No staging dir is left beside it.
        expect(fs.readdirSync(tmp).sort()).toEqual(['go', 'private-uid65534'])
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true })
      }
    }
  })
})
