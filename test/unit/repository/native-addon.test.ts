// The TypeScript view of the addon (`NativeAddon` in src/subprocess/native.ts) is kept by hand; this
// holds it to the addon itself: the same names as native/addon.cc's property table, each taking the
// arguments its C++ function reads (its `argc`), and the loaded binary exporting exactly those.
// The checker is shown to catch a missing, an extra and a mis-counted member.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadNative } from '../../../src/subprocess/native.js'
import { stripComments } from '../../support/repository/import-graph.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const nativeDir = path.join(repo, 'native')
const nativeSources = fs
  .readdirSync(nativeDir)
  .filter((f) => f.endsWith('.cc'))
  .map((f) => fs.readFileSync(path.join(nativeDir, f), 'utf8'))
  .join('\n')

/** The addon's exports as its `napi_property_descriptor props[]` table lists them: JS name → C++ function. */
function exportTable(addonSource: string): Map<string, string> {
  const table = /napi_property_descriptor props\[\] = \{([\s\S]*?)\n\s*\};/.exec(addonSource)?.[1] ?? ''
  return new Map([...table.matchAll(/\{"(\w+)", nullptr, (\w+),/g)].map((m) => [m[1]!, m[2]!]))
}

/** How many arguments the N-API function `name` reads (`size_t argc = N`; none when it ignores `info`). */
function nativeArity(sources: string, name: string): number | undefined {
  const body = new RegExp(
    `napi_value ${name}\\(napi_env \\w*,\\s*napi_callback_info[^)]*\\)\\s*\\{([\\s\\S]*?)\\n\\}`,
  ).exec(sources)?.[1]
  if (body === undefined) return undefined
  const argc = /size_t argc = (\d+);/.exec(body)
  return argc ? Number(argc[1]) : 0
}

/** The members of `interface NativeAddon` in TypeScript `source`: name → its parameter count. */
function interfaceMembers(source: string): Map<string, number> {
  const code = stripComments(source)
  const start = code.indexOf('export interface NativeAddon {')
  const members = new Map<string, number>()
  if (start < 0) return members
  let depth = 0
  let i = code.indexOf('{', start)
  const end = (() => {
    for (let j = i; j < code.length; j++) {
      if (code[j] === '{') depth++
      else if (code[j] === '}' && --depth === 0) return j
    }
    return code.length
  })()
  const body = code.slice(i + 1, end)
  for (const m of body.matchAll(/^ {2}(\w+)\(/gm)) {
    i = m.index + m[0].length
    let parens = 1
    let params = ''
    for (; parens > 0 && i < body.length; i++) {
      const c = body[i]!
      if ('([{<'.includes(c)) parens++
      else if (')]}>'.includes(c) && !(c === '>' && body[i - 1] === '=')) parens--
      if (parens > 0) params += parens === 1 && c === ',' ? '\u0000' : c
    }
    members.set(m[1]!, params.split('\u0000').filter((p) => p.trim() !== '').length)
  }
  return members
}

/** What differs between the export table, the C++ arities and the interface. */
function drift(exports: Map<string, string>, sources: string, members: Map<string, number>): string[] {
  const problems: string[] = []
  for (const [name, fn] of exports) {
    const arity = nativeArity(sources, fn)
    if (!members.has(name)) problems.push(`${name}: exported by the addon, missing from NativeAddon`)
    else if (arity === undefined) problems.push(`${name}: its C++ function ${fn} was not found`)
    else if (arity !== members.get(name))
      problems.push(`${name}: NativeAddon takes ${members.get(name)} arguments, ${fn} reads ${arity}`)
  }
  for (const name of members.keys())
    if (!exports.has(name)) problems.push(`${name}: in NativeAddon, not exported by the addon`)
  return problems
}

const tsSource = fs.readFileSync(path.join(repo, 'src/subprocess/native.ts'), 'utf8')
const addonSource = fs.readFileSync(path.join(nativeDir, 'addon.cc'), 'utf8')

describe('NativeAddon against the addon', () => {
  it('names every export of native/addon.cc, each with the arguments its C++ function reads', () => {
    const exports = exportTable(addonSource)
    expect(exports.size).toBeGreaterThan(15)
    expect(drift(exports, nativeSources, interfaceMembers(tsSource))).toEqual([])
  })

  it('the loaded addon exports exactly those names', () => {
    expect(Object.getOwnPropertyNames(loadNative()).sort()).toEqual([...exportTable(addonSource).keys()].sort())
  })

  it('the checker catches a missing, an extra and a mis-counted member', () => {
    const exports = new Map([
      ['a', 'A'],
      ['b', 'B'],
    ])
    const sources = [
      'napi_value A(napi_env env, napi_callback_info info) {\n  size_t argc = 2;\n}',
      'napi_value B(napi_env env, napi_callback_info /*info*/) {\n  return nullptr;\n}',
    ].join('\n')
    const ts = [
      'export interface NativeAddon {',
      '  a(x: number, cb: (n: number, m: Map<string, number>) => void, extra: string): number',
      '  c(): void',
      '}',
    ].join('\n')
    expect(interfaceMembers(ts)).toEqual(
      new Map([
        ['a', 3],
        ['c', 0],
      ]),
    )
    expect(drift(exports, sources, interfaceMembers(ts))).toEqual([
      'a: NativeAddon takes 3 arguments, A reads 2',
      'b: exported by the addon, missing from NativeAddon',
      'c: in NativeAddon, not exported by the addon',
    ])
  })
})
