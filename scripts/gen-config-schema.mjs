// Writes schema/config.schema.json, the published JSON Schema of a cordon config file, from its zod
// schema (src/policy/config/schema.ts, as built in dist/). test/unit/policy/config/schema.test.ts
// fails when the file and the zod schema drift apart.
//   npm run build:ts && node scripts/gen-config-schema.mjs
import { writeFileSync } from 'node:fs'

const { configJsonSchema } = await import('../dist/policy/config/schema.js')
writeFileSync(
  new URL('../schema/config.schema.json', import.meta.url),
  `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
)
