/**
 * zod, loaded when first asked for. A command's happy path (`cordon run`, a confined spawn)
 * validates its input by hand and never needs it: loading zod is a third of the CLI's start-up.
 * Every schema in cordon is built through `zod()`, so one instance serves them all (zod's own
 * ESM and CJS builds interoperate: a caller's `z.object({ p: SandboxExecutionPolicySchema })`
 * and `instanceof ZodError` work across them).
 */
import { createRequire } from 'node:module'

type Zod = typeof import('zod')

let loaded: Zod | undefined

/** The zod module (its CJS build, loaded synchronously on the first call). */
export function zod(): Zod {
  loaded ??= createRequire(import.meta.url)('zod') as Zod
  return loaded
}

/** A value built on its first use and kept: a schema that must not load zod before it is needed. */
export function onDemand<T>(build: () => T): () => T {
  let value: { v: T } | undefined
  return () => {
    value ??= { v: build() }
    return value.v
  }
}
