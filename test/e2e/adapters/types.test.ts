// The adapters type-check in a harness's code with no cast: tsc compiles the fixtures in
// test/fixtures/adapters/ (a loop per package, written as its author would) once against openai 6
// and ai 6, once with `openai` and `ai` mapped to their major 7. The fixtures import `cordon` and
// `cordon/<adapter>` by the package's own name, so they get what a harness gets: the subpath
// exports and the built declarations in dist/. Each run is shown to hold the fixtures and only
// that major's files. The built adapters load and run with every peer package refused.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const fixtures = path.join(repo, 'test', 'fixtures', 'adapters')
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc')
const FIXTURES = ['ai-sdk.ts', 'anthropic.ts', 'openai-chat.ts', 'openai-responses.ts', 'schemas.ts']

/** Runs tsc over one fixture project: its exit code, its diagnostics, and the files it compiled. */
async function compile(project: string): Promise<{ code: number; diagnostics: string; files: string[] }> {
  const args = [tsc, '-p', path.join(fixtures, project), '--listFiles']
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: repo, maxBuffer: 64 * 1024 * 1024 })
    return { code: 0, diagnostics: '', files: stdout.split('\n').filter(Boolean) }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string }
    const lines = (failed.stdout ?? '').split('\n')
    return {
      code: failed.code ?? -1,
      diagnostics: lines.filter((l) => /error TS\d+/.test(l)).join('\n'),
      files: lines.filter((l) => l.startsWith('/')),
    }
  }
}

/** Every file below `dir`. */
const filesBelow = (dir: string): string[] =>
  fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))

/** The package directories of node_modules a program's files come from. */
const packagesOf = (files: readonly string[]) =>
  new Set(files.flatMap((f) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.slice(1) ?? []))

describe('the adapters in a harness, type-checked', () => {
  it('the fixtures are harness code: no cast, no suppressed error', () => {
    expect(
      fs
        .readdirSync(fixtures)
        .filter((f) => f.endsWith('.ts'))
        .sort(),
    ).toEqual(FIXTURES)
    const CAST = /\bas\s+(?!const\b)[\w{[(]|<[A-Z]\w*>\s*\w|@ts-(ignore|expect-error|nocheck)|\bany\b/
    for (const file of FIXTURES) {
      const lines = fs.readFileSync(path.join(fixtures, file), 'utf8').split('\n')
      // Comments may say "as" and imports rename with it; code may not cast.
      const code = lines.filter((l) => !/^\s*(\/\/|\*|\/\*\*|import\b)/.test(l))
      expect(
        code.filter((l) => CAST.test(l)),
        file,
      ).toEqual([])
    }
    // The check sees a cast, a suppression and an any.
    for (const bad of ['tools: x as Tool[]', '// @ts-expect-error', 'const y: any = 1', 'const t = <Tool>x'])
      expect(CAST.test(bad), bad).toBe(true)
  })

  it('compile against openai 6 and ai 6, and against openai 7 and ai 7', async (ctx) => {
    const built = ['index', 'adapters/openai', 'adapters/anthropic', 'adapters/ai-sdk'].map((f) =>
      path.join(repo, 'dist', `${f}.d.ts`),
    )
    if (!built.every((f) => fs.existsSync(f))) ctx.skip('dist/ is not built (npm run build:ts)')
    const newestSource = Math.max(...filesBelow(path.join(repo, 'src')).map((f) => fs.statSync(f).mtimeMs))
    const oldestBuilt = Math.min(...built.map((f) => fs.statSync(f).mtimeMs))
    expect(oldestBuilt, 'dist/ is older than src/: run npm run build:ts').toBeGreaterThanOrEqual(newestSource)
    const [v6, v7] = await Promise.all([compile('tsconfig.v6.json'), compile('tsconfig.v7.json')])
    expect(v6.diagnostics).toBe('')
    expect(v6.code).toBe(0)
    expect(v7.diagnostics).toBe('')
    expect(v7.code).toBe(0)
    for (const run of [v6, v7]) {
      const compiled = run.files.map((f) => path.relative(repo, f))
      for (const file of FIXTURES) expect(compiled).toContain(`test/fixtures/adapters/${file}`)
      for (const adapter of ['openai', 'anthropic', 'ai-sdk'])
        expect(compiled).toContain(`dist/adapters/${adapter}.d.ts`)
    }
    const six = packagesOf(v6.files)
    const seven = packagesOf(v7.files)
    expect([six.has('openai'), six.has('ai'), six.has('openai-v7'), six.has('ai-v7')]).toEqual([
      true,
      true,
      false,
      false,
    ])
    expect([seven.has('openai'), seven.has('ai'), seven.has('openai-v7'), seven.has('ai-v7')]).toEqual([
      false,
      false,
      true,
      true,
    ])
    for (const run of [six, seven])
      expect([run.has('@anthropic-ai/sdk'), run.has('@modelcontextprotocol/sdk')]).toEqual([true, true])
  }, 120_000)
})

describe('the subpath exports', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>
  }

  it('name each adapter, types and code, in dist/adapters/', () => {
    for (const adapter of ['openai', 'anthropic', 'ai-sdk'])
      expect(pkg.exports[`./${adapter}`]).toEqual({
        types: `./dist/adapters/${adapter}.d.ts`,
        default: `./dist/adapters/${adapter}.js`,
      })
  })

  it('the built adapters load and run with every peer package refused', async (ctx) => {
    if (!fs.existsSync(path.join(repo, 'dist', 'adapters'))) ctx.skip('dist/adapters/ is not built (npm run build:ts)')
    // A resolve hook refuses the peers; then each subpath is imported by the package's own name and used.
    const hook = `export async function resolve(s, c, next) {
      if (/^(openai|ai|@anthropic-ai\\/sdk)(\\/|$)/.test(s)) throw new Error('peer loaded: ' + s)
      return next(s, c)
    }`
    const script = `
      import { register } from 'node:module'
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}))
      const { createBashTools, LocalShellExecutor } = await import('cordon')
      const { tools } = createBashTools({ executor: new LocalShellExecutor({ cwd: '/' }) })
      const { toOpenAITools } = await import('cordon/openai')
      const { toAnthropicTools } = await import('cordon/anthropic')
      const { toAiSdkTools } = await import('cordon/ai-sdk')
      console.log(JSON.stringify([
        toOpenAITools(tools, { api: 'chat' }).tools.length,
        toAnthropicTools(tools).tools.length,
        Object.keys(toAiSdkTools(tools)),
      ]))
      await import('openai').catch((e) => console.log(e.message))
    `
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: repo })
    expect(stdout.trim().split('\n')).toEqual(['[3,3,["bash","job_output","job_kill"]]', 'peer loaded: openai'])
  })
})
