// A malformed config is a clear error naming the file, the field and what was expected, and
// nothing else: property tests feed random JSON values and near-valid configs (one field mutated,
// or one unknown field) through the loader; it never crashes, and every error is a typed
// CONFIG_INVALID whose every issue starts with a field path.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadConfigWith } from '../../../../src/policy/config/load.js'
import { configIssueLines, fieldPath, parseConfigText, shownValue } from '../../../../src/policy/config/parse.js'
import { CONFIG_FIELDS } from '../../../../src/policy/config/schema.js'
import { isConfigInvalidError } from '../../../../src/policy/errors.js'
import { anyValueOf } from '../../../support/arbitraries.js'
import { scratchDir } from '../../../support/scratch.js'

const FILE = '/w/.cordon.json'
/** A field path at the start of an issue: `(root)`, `(json)`, or names, quoted names and indexes. */
const NAME = String.raw`(?:[A-Za-z_$][\w$]*|"(?:[^"\\]|\\.)*")`
const ISSUE = new RegExp(String.raw`^(\(root\)|\(json\)|${NAME}(?:\.${NAME}|\[\d+\])*): `)

/** The issues of parsing `text`, which must fail with a ConfigInvalidError naming FILE. */
function issuesOf(text: string): readonly string[] {
  try {
    parseConfigText(FILE, text)
  } catch (error) {
    expect(isConfigInvalidError(error), String(error)).toBe(true)
    expect((error as { file: string }).file).toBe(FILE)
    expect((error as Error).message).toContain(FILE)
    return (error as { issues: readonly string[] }).issues
  }
  throw new Error(`parsed: ${text}`)
}

describe('parseConfigText: malformed configs', () => {
  it('a JSON syntax error names the line and column', () => {
    expect(issuesOf('{\n  "mode": "read-only",\n}')).toEqual([
      '(json): line 3, column 1: expected a field name in double quotes, found "}"',
    ])
    expect(issuesOf('{"mode": "read-only", "mode": "danger-full-access"}')[0]).toMatch(/given twice/)
  })

  it('each bad field: its path, what was expected, and what it got', () => {
    expect(issuesOf('{"mode": "yolo"}')).toEqual([
      'mode: expected one of "read-only", "workspace-write", "danger-full-access", got "yolo"',
    ])
    expect(issuesOf('{"writableRoots": ["/ok", "../out", 3]}')).toEqual([
      'writableRoots[1]: expected a normal path: absolute, or relative to the workspace root (no ".", ".." or "//", no trailing "/"), got "../out"',
      'writableRoots[2]: expected a string, got 3',
    ])
    expect(issuesOf('{"limits": {"processes": 0, "fileSizeBytes": 1.5, "cpu": 1}}')).toEqual([
      'limits.processes: expected a whole number from 1 to 9007199254740991, got 0',
      'limits.fileSizeBytes: expected a whole number, got 1.5',
      'limits.cpu: unknown field (expected one of processes, addressSpaceBytes, fileSizeBytes)',
    ])
    expect(issuesOf('{"hiddenPaths": "/etc"}')).toEqual(['hiddenPaths: expected an array, got "/etc"'])
    expect(issuesOf('[]')).toEqual(['(root): expected an object, got []'])
  })

  it('network: the words, or an allow-list whose bad parts are named inside it', () => {
    expect(issuesOf('{"network": "none"}')).toEqual([
      'network: expected "inherit", "deny" or an allow-list object { "allow": [...], "deny": [...] }, got "none"',
    ])
    expect(issuesOf('{"network": {"allow": ["ok.example", "*"], "block": []}}')).toEqual([
      'network.allow[1]: expected a host pattern (a pattern names a host; to keep every host, use network "inherit"), got "*"',
      'network.block: unknown field (expected one of allow, deny)',
    ])
    expect(issuesOf('{"network": {"deny": ["x.example"]}}')).toEqual(['network.allow: expected an array, got nothing'])
  })

  it('an unknown field is named with the fields there are; odd names are quoted and escaped', () => {
    expect(issuesOf('{"modes": "read-only"}')).toEqual([
      `modes: unknown field (expected one of ${CONFIG_FIELDS.join(', ')})`,
    ])
    const odd = issuesOf('{"a b\\u001b[31m": 1}')[0]
    expect(odd).toMatch(/^"a b/)
    expect(odd).not.toContain('\u001b')
  })

  it('fieldPath and shownValue: short, escaped, never raw', () => {
    expect(fieldPath([])).toBe('(root)')
    expect(fieldPath(['network', 'allow', 2])).toBe('network.allow[2]')
    expect(shownValue(undefined)).toBe('nothing')
    expect(shownValue('x'.repeat(500)).length).toBeLessThan(120)
    expect(shownValue(10n)).toBe('10')
    expect(configIssueLines([], {})).toEqual([])
  })
})

describe('the loader on random input (fast-check)', () => {
  const dir = scratchDir('cordon-config-prop')
  let n = 0
  /** Loads `value` as `--config FILE`: undefined when accepted, else the issues (the error typed and naming the file). */
  function load(value: unknown): readonly string[] | undefined {
    const file = path.join(dir, `c${n++}.json`)
    fs.writeFileSync(file, JSON.stringify(value) ?? 'null')
    try {
      loadConfigWith({ configFile: file, env: { HOME: dir } }, undefined)
      return undefined
    } catch (error) {
      expect(isConfigInvalidError(error), String(error)).toBe(true)
      expect((error as { file: string }).file).toBe(file)
      const issues = (error as { issues: readonly string[] }).issues
      expect(issues.length).toBeGreaterThan(0)
      for (const issue of issues) expect(issue, issue).toMatch(ISSUE)
      return issues
    } finally {
      fs.rmSync(file)
    }
  }

  it('random JSON values: accepted, or a CONFIG_INVALID whose every issue names a field', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        load(value)
      }),
      { numRuns: 400 },
    )
  })

  const valid = fc.record(
    {
      mode: fc.constantFrom('read-only', 'workspace-write', 'danger-full-access'),
      writableRoots: fc.array(fc.constantFrom('/tmp', 'build'), { maxLength: 2 }),
      hiddenPaths: fc.array(fc.constantFrom('.env', '/srv/secret'), { maxLength: 2 }),
      protectedPaths: fc.array(fc.constantFrom('ci', '/w/x'), { maxLength: 2 }),
      network: fc.oneof(
        fc.constantFrom('inherit', 'deny'),
        fc.record({ allow: fc.array(fc.constantFrom('a.example', '*.b.example:443')) }),
      ),
      limits: fc.record({ processes: fc.integer({ min: 1, max: 99 }) }, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  )
  const strange = fc.oneof(
    anyValueOf('../x', '/a/', '', '*', 'none', -1, 0.5, ['../x'], { allow: 1 }, { allow: ['*'] }, { other: 1 }),
    fc.jsonValue({ maxDepth: 2 }),
  )
  const field = fc.constantFrom(...CONFIG_FIELDS.filter((f) => f !== '$schema'), 'unknownField', 'Mode')

  it('near-valid configs (one field set to something strange): accepted, or an error that names that field', () => {
    fc.assert(
      fc.property(valid, field, strange, (config, name, value) => {
        const issues = load({ ...config, [name]: value })
        if (issues === undefined) return
        expect(
          issues.some((i) => i.startsWith(name)),
          issues.join('\n'),
        ).toBe(true)
      }),
      { numRuns: 400 },
    )
  })
})
