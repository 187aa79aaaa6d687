/** `cordon schema`: the JSON Schema of a verb's machine-readable output (today: `run --json`). */
import { displayLine } from '../../policy/display-text.js'
import { parseWords } from '../invocation/parse.js'
import { UsageError } from '../usage-error.js'
import { runOutputJsonSchema } from './run-output.js'

/** The outputs `cordon schema` describes, each with its JSON Schema. */
const SCHEMAS: Readonly<Record<string, () => Record<string, unknown>>> = { run: runOutputJsonSchema }

/** `cordon schema --help`. */
export const SCHEMA_HELP = `Usage: cordon schema run

Prints the JSON Schema (draft 2020-12) of \`cordon run --json\`'s output: one line on stdout,
either the run's result (exit code, signal, timeout, output tails and spill files, sandbox facts)
or {"error": {name, code, message}} when cordon could not run the command (exit 125).

Options:
  -h, --help             this help
`

/** Runs the `schema` verb; returns the exit status. */
export async function schemaVerb(args: string[], io: { stdout: NodeJS.WritableStream }): Promise<number> {
  const { values, positionals } = parseWords(args, { help: { type: 'boolean', short: 'h' } })
  if (values.help) {
    io.stdout.write(SCHEMA_HELP)
    return 0
  }
  const known = Object.keys(SCHEMAS).join(', ')
  const [which, ...more] = positionals
  if (which === undefined) throw new UsageError(`name the output to describe (${known}), e.g. cordon schema run`)
  const schema = Object.hasOwn(SCHEMAS, which) ? SCHEMAS[which] : undefined
  if (schema === undefined) throw new UsageError(`no schema for "${displayLine(which)}" (${known})`)
  if (more.length > 0) throw new UsageError(`takes one name, got also "${displayLine(more[0] as string)}"`)
  io.stdout.write(`${JSON.stringify(schema(), null, 2)}\n`)
  return 0
}
