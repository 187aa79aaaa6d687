// No path can break out of its SBPL string: property tests over strings full of the characters
// that could (quotes, backslashes, parentheses, `;`, `#`, newlines, any Unicode), checked with
// an independent strict reader. A path that escaped would change the profile's tree or fail to
// parse; NUL and lone surrogates are refused at the boundary.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { renderSeatbeltProfile } from '../../../../src/sandbox/seatbelt/profile.js'
import { darwinCanonicalPath, sbplString, sbplStringProblem } from '../../../../src/sandbox/seatbelt/literal.js'
import { invalid } from '../../../support/invalid.js'
import { profileProblems, readSbpl, skeleton, stringsOf } from '../../../support/sandbox/sbpl-reader.js'

const HAZARDS = ['"', '\\', '(', ')', ';', '#', '|', '\n', '\r', '\t', ' ', '\u2028', 'é', 'e\u0301', '🙂', '\u0085']

/** Strings made mostly of hazards, plus arbitrary Unicode. */
const hazardous = fc.oneof(
  fc
    .array(fc.oneof(fc.constantFrom(...HAZARDS), fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 24 })
    .map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }),
)

const wellFormed = hazardous.filter((s) => sbplStringProblem(s) === undefined)

/** A path segment a policy accepts: no `/`, not `.` or `..`, not empty. */
const segment = wellFormed.map((s) => s.replaceAll('/', '')).filter((s) => s !== '' && s !== '.' && s !== '..')

const ROOT = '/Users/dev/project'

function profileWith(hidden: string, protectedPath: string, tempDir = '/tmp/cordon-s') {
  const grants = grantsFor(
    { mode: 'workspace-write', workspaceRoot: ROOT, protectedPaths: [protectedPath], hiddenPaths: [hidden] },
    { tempDir },
  )
  return renderSeatbeltProfile(grants, { tempDir }).profile
}

describe('sbplString', () => {
  it('reads back as exactly one string equal to its input', () => {
    fc.assert(
      fc.property(wellFormed, (s) => {
        const forms = readSbpl(sbplString(s))
        expect(forms).toEqual([{ kind: 'string', value: s }])
      }),
      { numRuns: 2000 },
    )
  })

  it('stays one datum inside a form, whatever follows it', () => {
    fc.assert(
      fc.property(wellFormed, wellFormed, (a, b) => {
        const forms = readSbpl(`(allow file-read* (literal ${sbplString(a)}) (literal ${sbplString(b)}))`)
        expect(skeleton(forms)).toEqual([['allow', 'file-read*', ['literal', '<string>'], ['literal', '<string>']]])
        expect(stringsOf(forms)).toEqual([a, b])
      }),
      { numRuns: 1000 },
    )
  })

  it('escapes exactly backslash and double quote and leaves every other character as it is', () => {
    expect(sbplString('a"b\\c')).toBe('"a\\"b\\\\c"')
    expect(sbplString('line\nnext ;(x) 🙂')).toBe('"line\nnext ;(x) 🙂"')
  })

  it('refuses NUL and lone surrogates', () => {
    expect(() => sbplString('/a\0b')).toThrow(/NUL/)
    expect(() => sbplString('/a\uD800b')).toThrow(/surrogate/)
    expect(() => sbplString('/a\uDC00')).toThrow(/surrogate/)
    expect(sbplStringProblem('/a\uD83D\uDE42')).toBeUndefined()
  })
})

describe('paths in a rendered profile', () => {
  const reference = skeleton(readSbpl(profileWith(`${ROOT}/x`, `${ROOT}/y`)))

  it('never change the profile’s tree: every path is one string datum, spelled as macOS resolves it', () => {
    fc.assert(
      fc.property(segment, segment, (h, p) => {
        const hidden = `${ROOT}/${h}`
        const protectedPath = `${ROOT}/p-${p}`
        const forms = readSbpl(profileWith(hidden, protectedPath))
        expect(profileProblems(forms)).toEqual([])
        expect(skeleton(forms)).toEqual(reference)
        expect(stringsOf(forms)).toEqual(expect.arrayContaining([hidden, protectedPath]))
      }),
      { numRuns: 300 },
    )
  })

  it('handle hazards in every position a path can take (root, extra root, temp dir, protected, hidden)', () => {
    fc.assert(
      fc.property(segment, (s) => {
        const root = `/Users/${s}`
        const grants = grantsFor(
          {
            mode: 'workspace-write',
            workspaceRoot: root,
            writableRoots: [`/Volumes/${s}`],
            protectedPaths: [`${root}/.git/${s}`],
            hiddenPaths: [`${root}/${s}.env`],
          },
          { tempDir: `/tmp/${s}` },
        )
        const forms = readSbpl(renderSeatbeltProfile(grants, { tempDir: `/tmp/${s}` }).profile)
        expect(profileProblems(forms)).toEqual([])
        const strings = stringsOf(forms)
        for (const p of [root, `/Volumes/${s}`, `/private/tmp/${s}`, `${root}/.git/${s}`, `${root}/${s}.env`]) {
          expect(strings).toContain(p)
        }
      }),
      { numRuns: 200 },
    )
  })

  it('refuse a lone surrogate from the grants or the options with an InvalidRequestError', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: ROOT, hiddenPaths: [`${ROOT}/\uD800`] })
    const error = invalid(() => renderSeatbeltProfile(grants, { protectedPaths: ['/a\uDC00'], tempDir: '/tmp/\0' }))
    expect(error.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^hiddenPaths\[0\]: .*surrogate/),
        expect.stringMatching(/^protectedPaths\[0\]: .*surrogate/),
        expect.stringMatching(/^tempDir: /),
      ]),
    )
  })
})

describe('darwinCanonicalPath', () => {
  it('moves /tmp, /var and /etc under /private, and nothing else', () => {
    expect(darwinCanonicalPath('/tmp')).toBe('/private/tmp')
    expect(darwinCanonicalPath('/tmp/a')).toBe('/private/tmp/a')
    expect(darwinCanonicalPath('/var/folders/x')).toBe('/private/var/folders/x')
    expect(darwinCanonicalPath('/etc/hosts')).toBe('/private/etc/hosts')
    expect(darwinCanonicalPath('/private/tmp/a')).toBe('/private/tmp/a')
    expect(darwinCanonicalPath('/tmpfoo')).toBe('/tmpfoo')
    expect(darwinCanonicalPath('/Users/x/tmp')).toBe('/Users/x/tmp')
    expect(darwinCanonicalPath('/')).toBe('/')
  })

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const p = `/${s}`
        expect(darwinCanonicalPath(darwinCanonicalPath(p))).toBe(darwinCanonicalPath(p))
      }),
    )
  })
})
