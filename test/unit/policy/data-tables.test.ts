// cordon's own data tables are read at every start without zod (start-up time): the checked-in
// files are held to their schemas here instead.
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GRANT_TABLE_URL, grantTableSchema } from '../../../src/policy/grants.js'
import { HIDDEN_TABLE_URL, hiddenTableSchema } from '../../../src/policy/profiles/hidden-defaults.js'
import { PROTECTED_TABLE_URL, protectedTableSchema } from '../../../src/policy/profiles/protected-defaults.js'
import { MACH_SERVICES_URL, machServicesTableSchema } from '../../../src/sandbox/seatbelt/mach-services.js'

const read = (url: URL) => JSON.parse(fs.readFileSync(url, 'utf8')) as unknown

describe('checked-in data tables', () => {
  for (const [name, url, schema] of [
    ['profiles/grants.json', GRANT_TABLE_URL, grantTableSchema],
    ['profiles/hidden.json', HIDDEN_TABLE_URL, hiddenTableSchema],
    ['profiles/protected.json', PROTECTED_TABLE_URL, protectedTableSchema],
    ['profiles/seatbelt/mach-services.json', MACH_SERVICES_URL, machServicesTableSchema],
  ] as const) {
    it(`${name} matches its schema`, () => {
      const parsed = schema().safeParse(read(url))
      expect(parsed.success ? [] : parsed.error.issues).toEqual([])
    })
    it(`the ${name} schema refuses a table with an unknown field (the test can fail)`, () => {
      expect(schema().safeParse({ ...(read(url) as object), surprise: 1 }).success).toBe(false)
    })
  }
})
