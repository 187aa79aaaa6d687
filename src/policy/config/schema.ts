/**
 * The schema of a cordon configuration file (the user's, a project's `.cordon.json`, or one named
 * by `--config FILE`): one strict object whose every field is optional. Built with zod on first use
 * (a run with no config file never loads zod); its JSON Schema is published as
 * schema/config.schema.json, which test/unit/policy/config/schema.test.ts holds equal to it.
 */
import { parseHostPattern } from '../network/host-pattern.js'
import { onDemand, zod } from '../schema/zod-on-demand.js'
import {
  isNormalAbsolutePath,
  isNormalRelativePath,
  NETWORK_POLICIES,
  type NetworkPolicy,
  type ResourceLimits,
  SANDBOX_MODES,
  type SandboxMode,
} from '../vocabulary.js'

/** What a configuration file holds once it passed the schema (paths as written). */
export interface ConfigFileContent {
  $schema?: string | undefined
  mode?: SandboxMode | undefined
  writableRoots?: readonly string[] | undefined
  hiddenPaths?: readonly string[] | undefined
  protectedPaths?: readonly string[] | undefined
  network?: NetworkPolicy | undefined
  limits?: ResourceLimits | undefined
}

/** The top-level fields a configuration file may have. */
export const CONFIG_FIELDS = [
  '$schema',
  'mode',
  'writableRoots',
  'hiddenPaths',
  'protectedPaths',
  'network',
  'limits',
] as const

/** The fields of `limits`. */
export const LIMIT_FIELDS = ['processes', 'addressSpaceBytes', 'fileSizeBytes'] as const

/** The fields of an allow-list `network`. */
export const ALLOW_LIST_FIELDS = ['allow', 'deny'] as const

/** The largest file cordon reads as a configuration (bytes). */
export const MAX_CONFIG_BYTES = 64 * 1024

/** A path field's entry: absolute, or relative to the workspace root; lexically normal either way. */
export function isConfigPath(p: string): boolean {
  return isNormalAbsolutePath(p) || isNormalRelativePath(p)
}

const PATH_EXPECTED =
  'expected a normal path: absolute, or relative to the workspace root (no ".", ".." or "//", no trailing "/")'

/** The zod schema of a configuration file, built on first use. */
export const configFileSchema = onDemand(() => {
  const { z } = zod()
  const pathList = (what: string) => z.array(z.string().refine(isConfigPath, PATH_EXPECTED)).describe(what)
  const hostPattern = z.string().superRefine((text, ctx) => {
    const parsed = parseHostPattern(text)
    if ('error' in parsed) ctx.addIssue({ code: 'custom', message: `expected a host pattern (${parsed.error})` })
  })
  const limit = (what: string) =>
    z.number().int().positive().max(Number.MAX_SAFE_INTEGER).describe(`${what}; a project config may only lower it`)
  return z
    .object({
      $schema: z.string().describe('Where this schema is (e.g. node_modules/cordon/schema/config.schema.json)'),
      mode: z
        .enum(SANDBOX_MODES)
        .describe(
          'The sandbox mode (read-only < workspace-write < danger-full-access); a project config may only lower it',
        ),
      writableRoots: pathList(
        'Extra writable roots under workspace-write (existing directories); a project config may only name roots already writable',
      ),
      hiddenPaths: pathList(
        'Paths a confined command may not read, added to the default hidden set and every other layer',
      ),
      protectedPaths: pathList(
        'Paths that stay read-only inside writable roots, added to the defaults and every other layer',
      ),
      network: z
        .union([
          z.enum(NETWORK_POLICIES),
          z
            .object({
              allow: z.array(hostPattern).describe("Hosts reached through cordon's proxy"),
              deny: z.array(hostPattern).describe('Hosts never reached, even when allowed').optional(),
            })
            .strict(),
        ])
        .describe("inherit (the host's network), deny, or an allow-list; deny < allow-list < inherit"),
      limits: z
        .object({
          processes: limit("Most processes of the run's uid (RLIMIT_NPROC)").optional(),
          addressSpaceBytes: limit('Most bytes of address space per process (RLIMIT_AS)').optional(),
          fileSizeBytes: limit('Largest file a process may write (RLIMIT_FSIZE)').optional(),
        })
        .strict()
        .describe('Resource limits of each run'),
    })
    .partial()
    .strict()
    .describe('A cordon configuration: user (~/.config/cordon/config.json), project (.cordon.json) or --config FILE')
})

/** The JSON Schema (draft 2020-12) of a configuration file, generated from its zod schema. */
export function configJsonSchema(): Record<string, unknown> {
  const generated = zod().z.toJSONSchema(configFileSchema()) as Record<string, unknown>
  return { ...generated, title: 'cordon configuration' }
}
