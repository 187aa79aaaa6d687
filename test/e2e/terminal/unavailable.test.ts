// Without node-pty, spawnTerminal fails with a typed error that says how to get it, and nothing
// else breaks. A real Node host (over dist/) runs with a resolver hook that makes `node-pty`
// unresolvable (cordon require()s it), exactly as when the optional dependency was not installed.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { scratchDir } from '../../support/scratch.js'

const dist = join(import.meta.dirname, '..', '..', '..', 'dist', 'index.js')

it('spawnTerminal throws TERMINAL_UNAVAILABLE naming the remedy; spawn and the package root still work', () => {
  const dir = scratchDir('cordon-term-missing')
  writeFileSync(
    join(dir, 'hide-pty.cjs'),
    "const Module = require('node:module')\nconst resolve = Module._resolveFilename\nModule._resolveFilename = function (request, ...rest) {\n  if (request === 'node-pty' || request.startsWith('node-pty/'))\n    throw Object.assign(new Error(\"Cannot find module 'node-pty'\"), { code: 'MODULE_NOT_FOUND' })\n  return resolve.call(this, request, ...rest)\n}\n",
  )
  writeFileSync(
    join(dir, 'host.mjs'),
    `import { LocalSubprocessRuntime, isTerminalUnavailableError } from ${JSON.stringify(dist)}\n` +
      `const rt = new LocalSubprocessRuntime()\n` +
      `const error = await rt.spawnTerminal({ argv: ['sh'], cwd: '/', cols: 80, rows: 24, graceMs: 1000 }).catch((e) => e)\n` +
      `const h = rt.spawn({ argv: ['echo', 'still fine'], cwd: '/', graceMs: 1000, stdio: { stdin: 'ignore', stdout: { maxBytes: 1024 }, stderr: 'inherit' } })\n` +
      `const outcome = await h.done\n` +
      `console.log(JSON.stringify({ branded: isTerminalUnavailableError(error), name: error.name, code: error.code, message: error.message, outcome, stdout: h.collected.stdout.readFrom(0).text, live: rt.liveCount }))\n` +
      `await rt.dispose()\n`,
  )
  const r = spawnSync(process.execPath, ['--require', join(dir, 'hide-pty.cjs'), join(dir, 'host.mjs')], {
    encoding: 'utf8',
    timeout: 30_000,
  })
  expect(r.status, r.stderr).toBe(0)
  const facts = JSON.parse(r.stdout.trim()) as Record<string, unknown>
  expect(facts).toMatchObject({
    branded: true,
    name: 'TerminalUnavailableError',
    code: 'TERMINAL_UNAVAILABLE',
    outcome: { exitCode: 0, signal: null },
    stdout: 'still fine\n',
    live: 0,
  })
  expect(facts.message).toMatch(/Cannot find module 'node-pty'/)
  expect(facts.message).toMatch(/npm install node-pty@\^1\.1/)
  expect(facts.message).toMatch(/python3, make and g\+\+/)
})
