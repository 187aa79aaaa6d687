// The published JSON Schema (schema/config.schema.json) is what the zod schema makes, so it cannot
// drift; package.json ships it; a config's `$schema` may point at it; the schema's fields are the
// ones the docs name, every one optional.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  CONFIG_FIELDS,
  configFileSchema,
  configJsonSchema,
  isConfigPath,
} from '../../../../src/policy/config/schema.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..', '..')
const published = path.join(repo, 'schema', 'config.schema.json')

describe('the config schema', () => {
  it('is published as schema/config.schema.json, equal to what the zod schema makes', () => {
    const file = JSON.parse(fs.readFileSync(published, 'utf8')) as unknown
    // On a failure: npm run build:ts && node scripts/gen-config-schema.mjs
    expect(file).toEqual(configJsonSchema())
    expect(configJsonSchema()).toMatchObject({
      type: 'object',
      additionalProperties: false,
      title: 'cordon configuration',
    })
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as { files: string[] }
    expect(pkg.files).toContain('schema')
  })

  it('names exactly the documented fields, none required', () => {
    const schema = configJsonSchema() as { properties: Record<string, unknown>; required?: unknown }
    expect(Object.keys(schema.properties)).toEqual([...CONFIG_FIELDS])
    expect(schema.required).toBeUndefined()
  })

  it('accepts a full config with $schema pointing at the published file, and an empty one', () => {
    const full = {
      $schema: './node_modules/cordon/schema/config.schema.json',
      mode: 'workspace-write',
      writableRoots: ['/data', 'build'],
      hiddenPaths: ['.env', '/srv/secrets'],
      protectedPaths: ['ci/deploy.sh'],
      network: { allow: ['registry.npmjs.org', '*.pythonhosted.org:443'], deny: ['10.0.0.1'] },
      limits: { processes: 512, addressSpaceBytes: 8 * 2 ** 30, fileSizeBytes: 2 ** 30 },
    }
    expect(configFileSchema().safeParse(full).success).toBe(true)
    expect(configFileSchema().safeParse({}).success).toBe(true)
    expect(configFileSchema().safeParse({ network: 'deny' }).success).toBe(true)
  })

  it('takes a path absolute or relative to the root, lexically normal, never leaving the root', () => {
    for (const p of ['/a', '/a/b', 'a', 'a/b', '.env']) expect(isConfigPath(p), p).toBe(true)
    for (const p of ['', '.', '..', '../x', 'a/../b', '/a/', 'a//b', './a', 'a\0b'])
      expect(isConfigPath(p), p).toBe(false)
  })
})
