/**
 * fast-check arbitraries of the odd inputs a boundary meets: strings with NUL bytes, controls,
 * bidi overrides, lone surrogates, prototype keys and megabyte lengths; numbers that are NaN,
 * infinite, negative, fractional or past every limit; and values of every other type.
 */
import fc from 'fast-check'

/** Inputs per property: 10,000 (CORDON_PROPERTY_RUNS sets another count, for a quick look while editing). */
export const PROPERTY_RUNS = Number(process.env.CORDON_PROPERTY_RUNS ?? 10_000)

/**
 * A property's time limit: 10,000 inputs on a busy 2-core machine, beside the other files, may take
 * longer than one ordinary test's minute (the whole suite's budget is three).
 */
export const PROPERTY_TIMEOUT_MS = 170_000

/** A string long enough to find a quadratic step or an unbounded echo (64 KiB). */
export const LONG_STRING = 'x'.repeat(64 * 1024)

/** Keys an object merge could mistake for its prototype's. */
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf']

/** Strings chosen to break a parser or a terminal. */
const ODD_STRINGS = [
  '',
  ' ',
  '\0',
  'a\0b',
  '/tmp/a\0b',
  '\n',
  '\r\n',
  '\t',
  '\x1b[31mred\x1b[0m',
  '\x1b]0;title\x07',
  '\u202eevil',
  '\u200b',
  '\ud800',
  '\udfff',
  '😀',
  'e\u0301\u0301\u0301',
  '-',
  '--',
  '---',
  '-1',
  'NaN',
  'Infinity',
  '1e309',
  '9'.repeat(400),
  '0x10',
  '/',
  '//',
  '.',
  '..',
  '../..',
  '/..',
  '~',
  '$HOME',
  '"',
  "'",
  '\\',
  '%s%n',
  '{}',
  '[]',
  'null',
  'undefined',
  ...PROTOTYPE_KEYS,
  LONG_STRING,
]

/** Any string, leaning on the odd ones (full Unicode, lone surrogates included). */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 3 },
  { arbitrary: fc.string(), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary' }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }), weight: 1 },
)

/** Numbers no field should take as they are. */
export const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0,
    -1,
    0.5,
    1e-300,
    Number.MIN_VALUE,
    2 ** 31,
    2 ** 32,
    2 ** 53,
    Number.MAX_SAFE_INTEGER + 2,
    Number.MAX_VALUE,
  ),
  fc.double(),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
)

/** An object JSON.parse made with an own `__proto__` key (a literal would set the prototype instead). */
export function ownProtoKey(value: unknown): Record<string, unknown> {
  return JSON.parse(`{"__proto__": ${JSON.stringify(value) ?? 'null'}}`) as Record<string, unknown>
}

/** A value of any type: what a JavaScript caller or a model's JSON could put where a field is expected. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    true,
    false,
    {},
    [],
    [[]],
    Object.create(null),
    ownProtoKey({ polluted: true }),
    { constructor: { prototype: { polluted: true } } },
    Symbol('odd'),
    10n,
    () => 'function',
    new Date(0),
    /regex/,
    new Map(),
    new Uint8Array(2),
    new AbortController().signal,
  ),
  oddString,
  oddNumber,
  fc.array(oddString, { maxLength: 3 }),
  fc.dictionary(fc.oneof(oddString, fc.constantFrom(...PROTOTYPE_KEYS)), oddString, { maxKeys: 3 }),
)

/** Whether a property run left Object.prototype as it found it (nothing was merged into it). */
export function prototypeIsClean(): boolean {
  const probe: Record<string, unknown> = {}
  return probe.polluted === undefined && Object.keys(Object.prototype).length === 0
}
