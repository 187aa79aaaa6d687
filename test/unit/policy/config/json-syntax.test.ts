// Where a config's JSON goes wrong: the line and column of the first problem, what was expected
// there, a field named twice refused; well-formed JSON (every kind of value) passes as JSON.parse does.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonSyntaxProblem } from '../../../../src/policy/config/json-syntax.js'

describe('jsonSyntaxProblem', () => {
  it('passes well-formed JSON of every kind', () => {
    for (const text of ['{}', '[]', ' {"a": [1, -2.5e3, "x\\n\\u00e9", true, false, null, {}]} ', '"s"', '0'])
      expect(jsonSyntaxProblem(text), text).toBeUndefined()
  })

  it('names the line and column of a missing value, a trailing comma, a bare word', () => {
    expect(jsonSyntaxProblem('{\n  "mode": \n}')).toEqual({
      line: 3,
      column: 1,
      message: 'expected a value (an object, array, string, number, true, false or null), found "}"',
    })
    expect(jsonSyntaxProblem('{"a": 1,}')).toMatchObject({ line: 1, column: 9, message: /field name in double quotes/ })
    expect(jsonSyntaxProblem('{\n "a": tru\n}')).toMatchObject({ line: 2, column: 7 })
    expect(jsonSyntaxProblem('{"a": 1} x')).toMatchObject({ line: 1, column: 10, message: /end of the file/ })
    expect(jsonSyntaxProblem('')).toMatchObject({ line: 1, column: 1, message: /the end of the file/ })
    expect(jsonSyntaxProblem('[1 2]')).toMatchObject({ line: 1, column: 4, message: /"," or "]"/ })
    expect(jsonSyntaxProblem('{"a" 1}')).toMatchObject({ message: /":"/ })
  })

  it('refuses raw control characters, bad escapes and unterminated strings', () => {
    expect(jsonSyntaxProblem('"a\u0001"')).toMatchObject({ message: /control character/ })
    expect(jsonSyntaxProblem('"\\x"')).toMatchObject({ message: /valid escape/ })
    expect(jsonSyntaxProblem('"\\u12"')).toMatchObject({ message: /four hex digits/ })
    expect(jsonSyntaxProblem('{"a": "open')).toMatchObject({ line: 1, column: 7, message: /end with "/ })
    expect(jsonSyntaxProblem('01')).toBeDefined()
  })

  it('refuses a field given twice in one object (JSON.parse would keep the last silently)', () => {
    expect(jsonSyntaxProblem('{"mode": "read-only",\n "mode": "danger-full-access"}')).toEqual({
      line: 2,
      column: 2,
      message: 'the field "mode" is given twice in one object',
    })
    expect(jsonSyntaxProblem('{"a": {"b": 1}, "c": {"b": 2}}')).toBeUndefined()
    expect(jsonSyntaxProblem('{"\\u006dode": 1, "mode": 2}')).toMatchObject({ message: /"mode" is given twice/ })
  })

  it('refuses nesting deeper than 64 levels instead of exhausting the stack', () => {
    expect(jsonSyntaxProblem(`${'['.repeat(65)}${']'.repeat(65)}`)).toMatchObject({ message: /64 levels/ })
    expect(jsonSyntaxProblem(`${'['.repeat(64)}${']'.repeat(64)}`)).toBeUndefined()
  })

  it('agrees with JSON.parse on random JSON and on random text', () => {
    fc.assert(
      // fc.json is JSON.stringify of a value: never a name twice in one object.
      fc.property(fc.json({ depthSize: 'small' }), (text) => {
        expect(jsonSyntaxProblem(text)).toBeUndefined()
      }),
      { numRuns: 300 },
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        let parses = true
        try {
          JSON.parse(text)
        } catch {
          parses = false
        }
        if (!parses) expect(jsonSyntaxProblem(text)).toBeDefined()
      }),
      { numRuns: 500 },
    )
  })
})
