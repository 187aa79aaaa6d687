// Without @modelcontextprotocol/sdk (an optional peer dependency), for real: a copy of the built
// package whose node_modules holds everything but that package. `cordon mcp` then says, in one
// line, what to install and exits 125; its --help and every other verb still work, for none of
// them loads the SDK (nor does the CLI bundle hold it): `cordon run` loads no module of it.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { MCP_HELP, MCP_SDK_MISSING, MCP_SDK_PACKAGE } from '../../../src/cli/mcp.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const repo = join(import.meta.dirname, '..', '..', '..')
const copy = scratchDir('cordon-no-sdk')
const cwd = scratchDir('cordon-no-sdk-cwd')

function cordon(args: string[]) {
  const r = spawnSync(process.execPath, [join(copy, 'bin', 'cordon.js'), ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    input: '',
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe(`cordon without ${MCP_SDK_PACKAGE}`, () => {
  beforeAll(() => {
    for (const part of ['bin', 'dist', 'profiles', 'package.json'])
      cpSync(join(repo, part), join(copy, part), { recursive: true, preserveTimestamps: true })
    mkdirSync(join(copy, 'node_modules'))
    for (const name of readdirSync(join(repo, 'node_modules')))
      if (name !== '@modelcontextprotocol')
        symlinkSync(join(repo, 'node_modules', name), join(copy, 'node_modules', name))
  })

  it('the copy really lacks it, and its CLI bundle never held it', () => {
    const resolve = spawnSync(
      process.execPath,
      ['-e', `require.resolve(${JSON.stringify(`${MCP_SDK_PACKAGE}/server/index.js`)})`],
      { cwd: join(copy, 'dist', 'mcp'), encoding: 'utf8' },
    )
    expect(resolve.status).not.toBe(0)
    expect(resolve.stderr).toContain('Cannot find module')
    const bundle = join(copy, 'dist', 'cli', 'cordon.bundle.cjs')
    expect(existsSync(bundle)).toBe(true)
    expect(readFileSync(bundle, 'latin1')).not.toMatch(/require\("@modelcontextprotocol/)
  })

  it('cordon mcp: one line naming the package and how to install it, exit 125, nothing on stdout', () => {
    const r = cordon(['mcp'])
    expect(r.status).toBe(125)
    expect(r.stderr).toBe(`cordon: ${MCP_SDK_MISSING}\n`)
    expect(r.stderr).toContain(`npm install ${MCP_SDK_PACKAGE}`)
    expect(r.stdout).toBe('')
  })

  it('cordon mcp --help, cordon --version and an unconfined cordon run still work', () => {
    expect(cordon(['mcp', '--help'])).toMatchObject({ status: 0, stdout: MCP_HELP })
    expect(cordon(['--version']).status).toBe(0)
    expect(cordon(['run', '--mode', 'danger-full-access', '--', 'echo', 'hi'])).toMatchObject({
      status: 0,
      stdout: 'hi\n',
    })
  })

  it('cordon run loads neither dist/mcp nor the SDK (control: cordon mcp loads both)', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const loaded = (argv: string[]) => {
      const script = `const loader = require(${JSON.stringify(join(repo, 'bin', 'cli-loader.js'))})
        const { Writable } = require('node:stream')
        const sink = new Writable({ write: (_c, _e, done) => done() })
        loader.run(${JSON.stringify(argv)}, { stdout: sink, stderr: sink }).then((status) => {
          const keys = Object.keys(require.cache)
          const mcp = keys.some((k) => k.includes('/dist/mcp/'))
          const sdk = keys.some((k) => k.includes('/node_modules/ajv/'))
          console.log(JSON.stringify({ status, mcp, sdk }))
        })`
      const r = spawnSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8', input: '' })
      return JSON.parse(r.stdout.trim()) as unknown
    }
    expect(loaded(['run', '--', 'true'])).toEqual({ status: 0, mcp: false, sdk: false })
    expect(loaded(['mcp'])).toEqual({ status: 0, mcp: true, sdk: true })
  })

  it('with the SDK (the real package), the same CLI serves instead', () => {
    const r = spawnSync(process.execPath, [join(repo, 'bin', 'cordon.js'), 'mcp'], { cwd, encoding: 'utf8', input: '' })
    expect(r).toMatchObject({ status: 0, stdout: '', stderr: '' })
  })
})
