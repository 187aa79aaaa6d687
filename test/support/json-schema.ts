// A JSON Schema (draft 2020-12) validator for tests: ajv (here through @modelcontextprotocol/sdk),
// strict, so a schema with a keyword ajv does not know fails to compile rather than passing all.
import { Ajv2020 } from 'ajv/dist/2020.js'

/** A validator of `schema`: the errors of a value as `path: message` lines, none when it is valid. */
export function validatorOf(schema: Record<string, unknown>): (value: unknown) => string[] {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  const validate = ajv.compile(schema)
  return (value) =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`)
}
