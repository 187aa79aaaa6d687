// The rules three tool-calling surfaces put on a tool definition, written as checks: OpenAI
// function calling in strict mode, Anthropic tool use, and MCP tools. Each returns the
// violations it finds (empty: accepted), each naming the rule and the JSON path, so a failing
// test says what to fix. Conservative where the APIs differ in detail: a schema these accept
// is accepted by all three.

/** A tool as a harness registers it. */
export interface ToolDefinition {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

type Node = Record<string, unknown>

/** The keywords strict mode understands; anything else (minLength, pattern, format, minimum, default, $schema, oneOf…) is refused. */
const OPENAI_STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'const',
  'items',
  'anyOf',
])
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])
const MAX_OBJECT_DEPTH = 5
const MAX_PROPERTIES = 100

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function typesOf(node: Node): string[] {
  const type = node.type
  if (typeof type === 'string') return [type]
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string')
  return []
}

/** Whether `node` admits `null` (a nullable type, a null enum member, or a null anyOf branch). */
export function admitsNull(node: unknown): boolean {
  if (!isNode(node)) return false
  if (typesOf(node).includes('null')) return true
  if (Array.isArray(node.anyOf)) return node.anyOf.some(admitsNull)
  return false
}

/** OpenAI function calling with `strict: true`: the schema subset structured outputs accept. */
export function openAIStrictViolations(schema: Node): string[] {
  const problems: string[] = []
  if (schema.type !== 'object') problems.push('(root): must be an object schema (type "object")')
  if ('anyOf' in schema) problems.push('(root): must not be an anyOf')
  let properties = 0
  const walk = (node: unknown, path: string, depth: number): void => {
    if (!isNode(node)) {
      problems.push(`${path}: must be a schema object`)
      return
    }
    for (const key of Object.keys(node)) {
      if (!OPENAI_STRICT_KEYWORDS.has(key)) problems.push(`${path}: keyword "${key}" is not supported in strict mode`)
    }
    const types = typesOf(node)
    for (const t of types) if (!JSON_TYPES.has(t)) problems.push(`${path}: unknown type "${t}"`)
    if (types.length === 0 && !Array.isArray(node.anyOf) && !('enum' in node) && !('const' in node)) {
      problems.push(`${path}: needs a type`)
    }
    if (Array.isArray(node.anyOf)) {
      if (types.length > 0) problems.push(`${path}: anyOf beside a type`)
      node.anyOf.forEach((branch, i) => {
        walk(branch, `${path}.anyOf[${i}]`, depth)
      })
    }
    if ('enum' in node) {
      if (!Array.isArray(node.enum) || node.enum.length === 0) problems.push(`${path}: enum must be a non-empty array`)
      else if (types.includes('null') && !node.enum.includes(null))
        problems.push(`${path}: a nullable enum must list null`)
    }
    if (types.includes('array') && !isNode(node.items)) problems.push(`${path}: an array needs items`)
    if (isNode(node.items)) walk(node.items, `${path}.items`, depth)
    if (types.includes('object')) {
      if (depth > MAX_OBJECT_DEPTH) problems.push(`${path}: objects nest deeper than ${MAX_OBJECT_DEPTH}`)
      if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`)
      const props = isNode(node.properties) ? node.properties : undefined
      if (props === undefined) {
        problems.push(`${path}: an object needs properties`)
        return
      }
      const keys = Object.keys(props)
      properties += keys.length
      const required = Array.isArray(node.required) ? node.required : []
      for (const key of keys)
        if (!required.includes(key)) problems.push(`${path}: property "${key}" missing from required`)
      for (const key of required)
        if (!keys.includes(key as string)) problems.push(`${path}: required names unknown "${key}"`)
      for (const key of keys) walk(props[key], `${path}.properties.${key}`, depth + 1)
    }
  }
  walk(schema, '(root)', 1)
  if (properties > MAX_PROPERTIES) problems.push(`(root): more than ${MAX_PROPERTIES} properties in all`)
  return problems
}

const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** An OpenAI function: a valid name, and parameters valid in strict mode. */
export function openAIFunctionViolations(tool: ToolDefinition): string[] {
  const problems = OPENAI_NAME.test(tool.name) ? [] : [`name: "${tool.name}" must match ${OPENAI_NAME}`]
  return [...problems, ...openAIStrictViolations(tool.inputSchema).map((p) => `parameters ${p}`)]
}

const ANTHROPIC_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Anthropic tool use: a valid name, a description, an object input_schema with no top-level combinator. */
export function anthropicViolations(tool: ToolDefinition): string[] {
  const problems: string[] = []
  if (!ANTHROPIC_NAME.test(tool.name)) problems.push(`name: "${tool.name}" must match ${ANTHROPIC_NAME}`)
  if (typeof tool.description !== 'string' || tool.description.trim() === '') problems.push('description: required')
  const schema = tool.inputSchema
  if (schema.type !== 'object') problems.push('input_schema: type must be "object"')
  for (const combinator of ['anyOf', 'oneOf', 'allOf']) {
    if (combinator in schema) problems.push(`input_schema: no top-level ${combinator}`)
  }
  return problems
}

const MCP_NAME = /^[A-Za-z0-9_.-]{1,128}$/

/** An MCP tool: a valid name, an object inputSchema whose required names are properties, plain JSON. */
export function mcpViolations(tool: ToolDefinition): string[] {
  const problems: string[] = []
  if (!MCP_NAME.test(tool.name)) problems.push(`name: "${tool.name}" must match ${MCP_NAME}`)
  const schema = tool.inputSchema
  if (schema.type !== 'object') problems.push('inputSchema: type must be "object"')
  if ('properties' in schema && !isNode(schema.properties)) problems.push('inputSchema.properties: must be an object')
  const keys = isNode(schema.properties) ? Object.keys(schema.properties) : []
  if ('required' in schema) {
    if (!Array.isArray(schema.required)) problems.push('inputSchema.required: must be an array')
    else for (const r of schema.required) if (!keys.includes(r as string)) problems.push(`inputSchema.required: "${r}"`)
  }
  if (JSON.stringify(JSON.parse(JSON.stringify(schema))) !== JSON.stringify(schema)) {
    problems.push('inputSchema: must be plain JSON')
  }
  return problems
}

/** The properties of an object schema that do not admit null (the ones a strict caller must fill in). */
export function nonNullableProperties(schema: Node): string[] {
  const props = isNode(schema.properties) ? schema.properties : {}
  return Object.keys(props).filter((key) => !admitsNull(props[key]))
}

/** The properties of an object schema without a description (a model has to guess what they mean). */
export function undescribedProperties(schema: Node): string[] {
  const props = isNode(schema.properties) ? schema.properties : {}
  return Object.keys(props).filter((key) => {
    const p = props[key]
    return !isNode(p) || typeof p.description !== 'string' || p.description.trim() === ''
  })
}
