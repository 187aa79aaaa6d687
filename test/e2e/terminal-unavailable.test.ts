// Without node-pty, spawnTerminal fails with a typed error that says how to get it, and nothing
// else breaks. A real Node host (over dist/) runs with a module hook that makes `node-pty`
// unresolvable, exactly as when the optional dependency was not installed.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { scratchDir } from '../support/scratch.js'

const dist = join(import.meta.dirname, '..', '..', 'dist', 'index.js')

it('spawnTerminal throws TERMINAL_UNAVAILABLE naming the remedy; spawn and the package root still work', () => {
  const dir = scratchDir('cordon-term-missing')
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "export async function resolve(specifier, context, next) {\n  if (specifier === 'node-pty' || specifier.startsWith('node-pty/')) {\n    throw Object.assign(new Error(\"Cannot find package 'node-pty'\"), { code: 'ERR_MODULE_NOT_FOUND' })\n  }\n  return next(specifier, context)\n}\n",
  )
  writeFileSync(
    join(dir, 'register.mjs'),
    "import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n",
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
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), join(dir, 'host.mjs')], {
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
  expect(facts.message).toMatch(/Cannot find package 'node-pty'/)
  expect(facts.message).toMatch(/npm install node-pty@\^1\.1/)
  expect(facts.message).toMatch(/python3, make and g\+\+/)
})
