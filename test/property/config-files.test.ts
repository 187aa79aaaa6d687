// The configuration files (src/policy/config/) under 10,000 odd texts each: parsed alone, and loaded
// from disk as a user config, a project .cordon.json and a --config FILE. A file with a bad field is
// a ConfigInvalidError (or ConfigWidenedError) naming the file and that field; a text that is no
// JSON names its line; reading a config never starts a process nor touches Object.prototype.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { isConfigInvalidError, isConfigWidenedError } from '../../src/policy/errors.js'
import { parseConfigText } from '../../src/policy/config/parse.js'
import { configPolicyInput } from '../../src/policy/config/policy-input.js'
import { CONFIG_FIELDS, MAX_CONFIG_BYTES } from '../../src/policy/config/schema.js'
import { resolvePolicy } from '../../src/policy/resolve.js'
import { loadConfig } from '../../src/sandbox/load-config.js'
import { scratchDir } from '../support/scratch.js'
import {
  oddValue,
  PROPERTY_RUNS,
  PROPERTY_TIMEOUT_MS,
  PROTOTYPE_KEYS,
  prototypeIsClean,
} from '../support/property/odd-values.js'
import { processStarts, spyOnProcessStarts, startsSince } from '../support/property/spawn-spy.js'

vi.mock(import('../../src/subprocess/native.js'), async (original) =>
  (await import('../support/property/spawn-spy.js')).spyingNative(await original()),
)

const dir = scratchDir('cordon-config-property')
const root = path.join(dir, 'project')
const home = path.join(dir, 'home')
const userFile = path.join(home, 'cordon', 'config.json')
const namedFile = path.join(dir, 'named.json')
const env = { XDG_CONFIG_HOME: home, CORDON_PRIVATE_DIR: path.join(dir, 'private'), HOME: dir, PATH: '/usr/bin:/bin' }

beforeAll(() => {
  spyOnProcessStarts()
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true })
  fs.mkdirSync(path.dirname(userFile), { recursive: true })
})
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Values each field takes. */
const VALID: Readonly<Record<string, readonly unknown[]>> = {
  $schema: ['node_modules/cordon/schema/config.schema.json'],
  mode: ['read-only', 'workspace-write', 'danger-full-access'],
  writableRoots: [[], ['sub'], [root]],
  hiddenPaths: [[], ['secret'], ['/etc/shadow']],
  protectedPaths: [['.git/hooks'], ['/w/x']],
  network: ['deny', 'inherit', { allow: ['example.com', '*.example.org:443'] }, { allow: [], deny: ['10.0.0.1'] }],
  limits: [{}, { processes: 10 }, { addressSpaceBytes: 2 ** 40, fileSizeBytes: 1 }],
}

/** Values no field may take: each breaks its field (and is named with it). */
const BROKEN: Readonly<Record<string, readonly unknown[]>> = {
  $schema: [1, null, []],
  mode: ['root', '', 'READ-ONLY', 1, null, ['read-only'], {}],
  writableRoots: ['sub', [1], ['../x'], ['/a/'], ['a//b'], [null], ['./a'], ['/a\0b'], [''], {}],
  hiddenPaths: [[2], ['x/../..'], 'x'],
  protectedPaths: [[{}], true],
  network: [
    'none',
    1,
    null,
    { allow: 'x' },
    { allow: [1] },
    { allow: ['http://x/'] },
    { deny: ['x'] },
    { allow: [], extra: 1 },
    [],
  ],
  limits: [
    'x',
    [],
    { processes: 0 },
    { processes: -1 },
    { processes: 1.5 },
    { processes: 'x' },
    { processes: 2 ** 60 },
    { bogus: 1 },
    { __proto__: null, constructor: 1 },
  ],
}

/** A config object with its broken fields (`bad`): each field valid, broken, odd or absent; unknown keys too. */
const configObject = fc
  .tuple(
    fc.record(
      Object.fromEntries(
        CONFIG_FIELDS.map((name) => [
          name,
          fc.oneof(
            { arbitrary: fc.constantFrom(...(VALID[name] as unknown[])).map((v) => ({ v, bad: false })), weight: 4 },
            { arbitrary: fc.constantFrom(...(BROKEN[name] as unknown[])).map((v) => ({ v, bad: true })), weight: 1 },
          ),
        ]),
      ),
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom(...PROTOTYPE_KEYS, 'Mode', 'limit')), oddValue, { maxKeys: 1 }),
  )
  .map(([fields, unknown]) => {
    const object: Record<string, unknown> = {}
    const bad: string[] = []
    for (const [key, value] of Object.entries(unknown)) {
      Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
      bad.push(key)
    }
    for (const [name, { v, bad: broken }] of Object.entries(fields as Record<string, { v: unknown; bad: boolean }>)) {
      object[name] = v
      if (broken) bad.push(name)
    }
    return { object, bad }
  })

/** A file's text: the object as JSON (its `bad` fields), or text that is no JSON object. */
const configText = fc.oneof(
  {
    arbitrary: configObject.map(({ object, bad }) => {
      const text = JSON.stringify(object, (_, v: unknown) => (typeof v === 'bigint' ? undefined : v), 1)
      // JSON drops a key whose value it cannot write (undefined, a function, a symbol; a bigint here).
      const written = JSON.parse(text) as Record<string, unknown>
      return { text, bad: bad.filter((key) => Object.hasOwn(written, key)) }
    }),
    weight: 8,
  },
  {
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          '',
          '{',
          '{"mode": "read-only",}',
          '// note\n{}',
          '{"a":1}{"b":2}',
          '\0',
          '{"mode": "read-only"\0}',
          'NaN',
          '[]',
          '"x"',
          'null',
          '1e999',
        ),
        fc.string(),
        fc.json(),
      )
      .map((text) => ({ text, bad: ['(any)'] })),
    weight: 2,
  },
)

/** Checks a refused file: a typed config error naming the file and every broken field (or the JSON's line). */
function expectNamed(error: unknown, file: string, bad: readonly string[]): void {
  expect(isConfigInvalidError(error) || isConfigWidenedError(error), String(error)).toBe(true)
  const message = (error as Error).message
  expect(message).toContain(JSON.stringify(file))
  if (!isConfigInvalidError(error)) return
  const issues = error.issues
  for (const line of issues) expect(line, issues.join('; ')).toMatch(/^\S.*?: /)
  // A file refused whole (too large, no JSON, not UTF-8) names no field.
  if (bad.includes('(any)') || issues.some((i) => /^\((file|json)\)/.test(i))) return
  for (const field of bad) {
    const named = JSON.stringify(field) // a field no identifier spells is quoted
    expect(
      issues.some((i) => i.startsWith(field) || i.startsWith(named)),
      `${field} in ${issues.join('; ')}`,
    ).toBe(true)
  }
}

describe('configuration files under odd texts', () => {
  it(
    'parsing: the content, or a ConfigInvalidError naming every broken field or the line',
    () => {
      fc.assert(
        fc.property(configText, ({ text, bad }) => {
          let error: unknown
          try {
            parseConfigText('/x/config.json', text)
          } catch (e) {
            error = e
          }
          expect(prototypeIsClean()).toBe(true)
          if (bad.length === 0) expect(error).toBeUndefined()
          else if (!bad.includes('(any)') || error !== undefined) expectNamed(error, '/x/config.json', bad)
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'loading from disk: a resolved config, or a typed error naming the file; nothing starts',
    () => {
      const layer = fc.constantFrom('user', 'project', 'named')
      const bytes = fc.oneof(
        { arbitrary: configText, weight: 9 },
        {
          arbitrary: fc.constantFrom(
            { text: Buffer.from([0xff, 0xfe, 0x00]), bad: ['(any)'] },
            { text: `{"$schema": "${'x'.repeat(MAX_CONFIG_BYTES)}"}`, bad: ['(any)'] },
            { text: '\ufeff{"mode": "read-only"}', bad: [] },
          ),
          weight: 1,
        },
      )
      fc.assert(
        fc.property(layer, bytes, (where, { text, bad }) => {
          const file = where === 'user' ? userFile : where === 'project' ? path.join(root, '.cordon.json') : namedFile
          for (const f of [userFile, path.join(root, '.cordon.json'), namedFile]) fs.rmSync(f, { force: true })
          fs.writeFileSync(file, text)
          const before = processStarts()
          let error: unknown
          try {
            const config = loadConfig({
              workspaceRoot: root,
              configFile: where === 'named' ? namedFile : undefined,
              env,
              acceptChanged: true,
            })
            resolvePolicy({ cwd: root, workspaceRoot: root, ...configPolicyInput(config) })
          } catch (e) {
            error = e
          }
          expect(startsSince(before)).toEqual([])
          expect(prototypeIsClean()).toBe(true)
          // A project config may be refused whole for widening the defaults: only a broken field must be named.
          if (bad.length === 0 && where !== 'project') expect(error).toBeUndefined()
          if (error !== undefined) expectNamed(error, file, bad)
          else
            expect(
              bad.filter((b) => b !== '(any)'),
              'a broken field was taken',
            ).toEqual([])
        }),
        { numRuns: PROPERTY_RUNS },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )
})
