/**
 * A configuration file's text to its content: JSON (every syntax problem by line and column), then
 * the schema, every problem as one `field: expected …, got …` line naming the field by its path
 * (`network.allow[1]`, `limits.processes`). Throws ConfigInvalidError naming the file.
 */
import type { z as Z } from 'zod'
import { displayLine } from '../display-text.js'
import { ConfigInvalidError } from '../errors.js'
import { jsonSyntaxProblem } from './json-syntax.js'
import { ALLOW_LIST_FIELDS, CONFIG_FIELDS, type ConfigFileContent, configFileSchema, LIMIT_FIELDS } from './schema.js'

type Issue = Z.core.$ZodIssue
type Segment = PropertyKey

/** The fields an object at `path` may have (its last named segment says which object it is). */
function knownFields(path: readonly Segment[]): readonly string[] {
  if (path.length === 0) return CONFIG_FIELDS
  if (path[path.length - 1] === 'limits') return LIMIT_FIELDS
  return ALLOW_LIST_FIELDS
}

/** `path` as a person reads it: `writableRoots[0]`, `network.allow[2]`, `limits."odd name"`. */
export function fieldPath(path: readonly Segment[]): string {
  if (path.length === 0) return '(root)'
  let out = ''
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`
    else {
      const name = String(segment)
      const word = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name)
      out += out === '' ? word : `.${word}`
    }
  }
  return displayLine(out, 120)
}

/** A value as the end of `…, got X`: its JSON, short and escaped; `nothing` when absent. */
export function shownValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return displayLine(text, 60)
}

function valueAt(input: unknown, path: readonly Segment[]): unknown {
  let v = input
  for (const segment of path) {
    if (typeof v !== 'object' || v === null) return undefined
    v = (v as Record<PropertyKey, unknown>)[segment]
  }
  return v
}

const TYPE_WORDS: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
}

/** The one-branch issues of a union whose type the input matched, or undefined when it matched none. */
function matchedBranch(issue: Extract<Issue, { code: 'invalid_union' }>): Issue[] | undefined {
  const atRoot = (b: Issue) => b.path.length === 0 && (b.code === 'invalid_type' || b.code === 'invalid_value')
  return issue.errors.find((branch) => !branch.some(atRoot))
}

/** What the issue says was expected (without the field and the value). */
function expectedText(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${TYPE_WORDS[issue.expected] ?? issue.expected}`
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
    case 'too_small':
    case 'too_big':
      return `expected a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`
    case 'invalid_union':
      return 'expected "inherit", "deny" or an allow-list object { "allow": [...], "deny": [...] }'
    default:
      return issue.message.startsWith('expected') ? issue.message : `expected ${issue.message}`
  }
}

/** Every issue as `field: expected …, got …` lines; a union's matched branch speaks for it. */
export function configIssueLines(issues: readonly Issue[], input: unknown, prefix: readonly Segment[] = []): string[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path]
    if (issue.code === 'unrecognized_keys') {
      const known = knownFields(path).join(', ')
      return issue.keys.map((key) => `${fieldPath([...path, key])}: unknown field (expected one of ${known})`)
    }
    if (issue.code === 'invalid_union') {
      const branch = matchedBranch(issue)
      if (branch !== undefined) return configIssueLines(branch, input, path)
    }
    return [`${fieldPath(path)}: ${expectedText(issue)}, got ${shownValue(valueAt(input, path))}`]
  })
}

/** Parses `text` (the file `file`) as a configuration; throws ConfigInvalidError naming the file and each field. */
export function parseConfigText(file: string, text: string): ConfigFileContent {
  const syntax = jsonSyntaxProblem(text)
  if (syntax !== undefined)
    throw new ConfigInvalidError(file, [
      `(json): line ${syntax.line}, column ${syntax.column}: ${displayLine(syntax.message, 200)}`,
    ])
  const value: unknown = JSON.parse(text)
  const parsed = configFileSchema().safeParse(value)
  if (parsed.success) return parsed.data as ConfigFileContent
  const lines = configIssueLines(parsed.error.issues, value)
  throw new ConfigInvalidError(file, lines.length > 0 ? lines : ['(root): does not match the schema'], {
    cause: parsed.error,
  })
}
