/**
 * The JSON Schema a model is offered for a tool's arguments, from the zod object that validates
 * them. One schema must be accepted by OpenAI function calling in strict mode, Anthropic tool
 * use and MCP alike, so it keeps to their common subset: an object at the root, every property
 * listed in `required` with optional ones nullable, `additionalProperties: false` on every
 * object, and only the keywords strict mode understands. Constraints outside that subset
 * (minLength, exclusiveMinimum…) are dropped here: zod still enforces them when the call
 * arrives, and the descriptions say them in words.
 */
import type { z as Z } from 'zod'
import { zod } from '../policy/schema/zod-on-demand.js'

const { z } = zod()

type Json = Record<string, unknown>

/** One JSON Schema node of a tool's arguments, in the subset every surface accepts (see the file comment). */
export type ToolSchemaNode = {
  description?: string
  type?: string | string[]
  enum?: unknown[]
  items?: ToolSchemaNode
  anyOf?: ToolSchemaNode[]
  properties?: { [name: string]: ToolSchemaNode }
  required?: string[]
  additionalProperties?: false
}

/**
 * The JSON Schema of a tool's arguments: an object whose properties are all listed in `required`,
 * closed. Assignable as it is to OpenAI's `FunctionParameters`, Anthropic's `Tool.InputSchema`
 * and MCP's `Tool.inputSchema`.
 */
export type ToolInputSchema = {
  type: 'object'
  description?: string
  properties: { [name: string]: ToolSchemaNode }
  required: string[]
  additionalProperties: false
}

/** The keywords kept, in the order they are written; the rest is outside the subset all three surfaces accept. */
const KEPT_KEYWORDS = [
  'description',
  'type',
  'enum',
  'items',
  'anyOf',
  'properties',
  'required',
  'additionalProperties',
]

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The model-facing JSON Schema of `schema`'s input (see the file comment for the rules it keeps). */
export function modelInputSchema(schema: Z.ZodObject): ToolInputSchema {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' })
  const node = strictNode(json as Json, false)
  if (node.type !== 'object' || !isJson(node.properties)) throw new TypeError("a tool's arguments must be an object")
  return node as ToolInputSchema
}

/** Whether a schema node admits null already. */
function admitsNull(node: Json): boolean {
  const type = node.type
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  return Array.isArray(node.anyOf) && node.anyOf.some((branch) => isJson(branch) && admitsNull(branch))
}

/** `{ anyOf: [X, { type: 'null' }] }` as X with a nullable type (and `null` in its enum). */
function collapseNullableAnyOf(node: Json): Json {
  if (!Array.isArray(node.anyOf) || node.anyOf.length !== 2) return node
  const [first, second] = node.anyOf as unknown[]
  const isNull = (b: unknown) => isJson(b) && b.type === 'null' && Object.keys(b).length === 1
  const other = isNull(second) ? first : isNull(first) ? second : undefined
  if (!isJson(other) || typeof other.type !== 'string') return node
  const { anyOf: _, ...rest } = node
  return nullable({ ...other, ...rest })
}

/** `node` made to admit null: `null` added to its type and, when it has one, to its enum. */
function nullable(node: Json): Json {
  if (admitsNull(node)) {
    if (Array.isArray(node.enum) && !node.enum.includes(null)) return { ...node, enum: [...node.enum, null] }
    return node
  }
  if (typeof node.type === 'string' || Array.isArray(node.type)) {
    const types = typeof node.type === 'string' ? [node.type] : (node.type as unknown[])
    const out: Json = { ...node, type: [...types, 'null'] }
    if (Array.isArray(node.enum)) out.enum = [...node.enum, null]
    return out
  }
  return { anyOf: [node, { type: 'null' }] }
}

/** One node made strict: unknown keywords dropped, objects closed and fully required, optional properties nullable. */
function strictNode(input: Json, optional: boolean): Json {
  const collapsed = collapseNullableAnyOf(input)
  const node: Json = {}
  for (const key of KEPT_KEYWORDS) if (key in collapsed) node[key] = collapsed[key]
  if (Array.isArray(node.anyOf))
    node.anyOf = node.anyOf.map((branch) => (isJson(branch) ? strictNode(branch, false) : branch))
  if (isJson(node.items)) node.items = strictNode(node.items, false)
  if (isJson(node.properties)) {
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : [])
    const properties: Json = {}
    for (const [key, value] of Object.entries(node.properties)) {
      if (!isJson(value)) continue
      const optional = !required.has(key)
      // A strict caller sends null for an argument it omits: zod must accept that null.
      if (optional && !admitsNull(value))
        throw new TypeError(`tool argument "${key}" is optional: declare it .nullish()`)
      properties[key] = strictNode(value, optional)
    }
    node.properties = properties
    node.required = Object.keys(properties)
    node.additionalProperties = false
  }
  return optional ? nullable(node) : node
}
