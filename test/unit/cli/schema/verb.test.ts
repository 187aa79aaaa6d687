// `cordon schema`: prints the published JSON Schema of a named output, its help, or a usage error.
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runOutputJsonSchema } from '../../../../src/cli/schema/run-output.js'
import { SCHEMA_HELP, schemaVerb } from '../../../../src/cli/schema/verb.js'

/** Runs the verb with `args`; returns its status and what it printed. */
async function schema(...args: string[]): Promise<{ status: number; stdout: string }> {
  let stdout = ''
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stdout += chunk.toString()
      done()
    },
  })
  const status = await schemaVerb(args, { stdout: sink })
  return { status, stdout }
}

describe('cordon schema', () => {
  it('run: the JSON Schema of run --json, indented, one trailing newline', async () => {
    const r = await schema('run')
    expect(r.status).toBe(0)
    expect(r.stdout).toBe(`${JSON.stringify(runOutputJsonSchema(), null, 2)}\n`)
    expect(JSON.parse(r.stdout)).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema' })
  })

  it('--help prints the help', async () => {
    expect(await schema('--help')).toEqual({ status: 0, stdout: SCHEMA_HELP })
  })

  it('no name, an unknown one, a second one: usage errors naming what there is', async () => {
    await expect(schema()).rejects.toThrow('name the output to describe (run), e.g. cordon schema run')
    await expect(schema('probe')).rejects.toThrow('no schema for "probe" (run)')
    await expect(schema('run', 'shell')).rejects.toThrow('takes one name, got also "shell"')
    await expect(schema('run', '--json')).rejects.toMatchObject({
      code: 'CORDON_USAGE',
      message: 'unknown option --json',
    })
  })
})
