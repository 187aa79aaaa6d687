// `cordon/mcp` as a consumer imports it: the package's own subpath export (types and code in
// dist/mcp/), resolved by name in a fresh node. The main entry neither exports the server nor
// loads the SDK, so a harness that never serves MCP never needs the optional package.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '..', '..', '..')

/** Runs an ES module `script` in a fresh node inside the package (self-reference by name works there). */
function inPackage(script: string): unknown {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repo, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`node exited ${r.status}: ${r.stderr}`)
  return JSON.parse(r.stdout.trim())
}

describe('the cordon/mcp subpath', () => {
  it('points at the built module and its declarations', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
    expect(pkg.exports['./mcp']).toEqual({ types: './dist/mcp/index.d.ts', default: './dist/mcp/index.js' })
    expect(existsSync(join(repo, 'dist/mcp/index.js'))).toBe(true)
    expect(existsSync(join(repo, 'dist/mcp/index.d.ts'))).toBe(true)
  })

  it('import("cordon/mcp") gives createMcpServer; import("cordon") neither has it nor loads the SDK', () => {
    expect(
      inPackage(`import { createRequire } from 'node:module'
        const m = await import('cordon/mcp')
        const cache = Object.keys(createRequire(import.meta.url).cache)
        const ajv = cache.some((k) => k.includes('/node_modules/ajv/'))
        console.log(JSON.stringify({ create: typeof m.createMcpServer, schema: m.outputSchemaOf('bash').type, ajv }))`),
    ).toEqual({ create: 'function', schema: 'object', ajv: true })
    expect(
      inPackage(`import { createRequire } from 'node:module'
        const m = await import('cordon')
        const cache = Object.keys(createRequire(import.meta.url).cache)
        console.log(JSON.stringify({ create: 'createMcpServer' in m, ajv: cache.some((k) => k.includes('/node_modules/ajv/')) }))`),
    ).toEqual({ create: false, ajv: false })
  })
})
