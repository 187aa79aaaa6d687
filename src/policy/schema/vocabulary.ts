/**
 * The zod schemas of the sandbox vocabulary (vocabulary.ts), built on first use: cordon's own
 * happy path checks by hand (fast-check.ts) and reaches for these only to name what is wrong.
 * The public constants (SandboxModeSchema…) are in exported.ts.
 */
import {
  CONFINED_SANDBOX_MODES,
  EFFECT_CLASSES,
  isNormalAbsolutePath,
  isNormalRelativePath,
  NETWORK_POLICIES,
  SANDBOX_ENFORCEMENTS,
  SANDBOX_MODES,
} from '../vocabulary.js'
import { parseHostPattern } from '../network/host-pattern.js'
import { onDemand, zod } from './zod-on-demand.js'

/** The schema of `limits`: each a positive safe integer. */
function resourceLimitsSchema() {
  const { z } = zod()
  const limit = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional()
  return z
    .object({
      processes: limit,
      addressSpaceBytes: limit,
      fileSizeBytes: limit,
      memoryBytes: limit,
      tempBytes: limit,
      cpuSeconds: limit,
    })
    .strict()
}

/** Every vocabulary schema, built on first use (zod loads then). */
export const vocabularySchemas = onDemand(() => {
  const { z } = zod()
  const absolutePath = z
    .string()
    .regex(/^\//, { error: 'must be an absolute path', abort: true })
    .refine(isNormalAbsolutePath, 'must be a normalized absolute path (no ".", "..", "//" or trailing "/")')
  const protectedPath = z
    .string()
    .refine(
      (p) => isNormalAbsolutePath(p) || isNormalRelativePath(p),
      'must be a normalized absolute path, or a relative one inside the workspace root (no "..")',
    )
  const SandboxModeSchema = z.enum(SANDBOX_MODES)
  const ConfinedSandboxModeSchema = z.enum(CONFINED_SANDBOX_MODES)
  const hostPattern = z.string().superRefine((text, ctx) => {
    const parsed = parseHostPattern(text)
    if ('error' in parsed) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)}: ${parsed.error}` })
  })
  const NetworkAllowListSchema = z
    .object({ allow: z.array(hostPattern).readonly(), deny: z.array(hostPattern).readonly().optional() })
    .strict()
  const NetworkPolicySchema = z.union([z.enum(NETWORK_POLICIES), NetworkAllowListSchema])
  const ResourceLimitsSchema = resourceLimitsSchema()
  const SandboxExecutionPolicySchema = z
    .object({
      mode: SandboxModeSchema,
      workspaceRoot: absolutePath,
      sessionId: z.string().min(1).optional(),
      writableRoots: z.array(absolutePath).readonly().optional(),
      network: NetworkPolicySchema.optional(),
      protectedPaths: z.array(protectedPath).readonly().optional(),
      protectedDefaults: z.boolean().optional(),
      unprotectedPaths: z.array(protectedPath).readonly().optional(),
      hiddenPaths: z.array(absolutePath).readonly().optional(),
      hiddenDefaults: z
        .union([
          z.boolean(),
          z
            .object({ except: z.array(z.string().min(1)).readonly() })
            .strict()
            .readonly(),
        ])
        .optional(),
      cacheRoots: z.enum(['confined', 'host']).optional(),
      sharedMemory: z.boolean().optional(),
      runAsOwner: z.boolean().optional(),
      allowUnixSockets: z.array(absolutePath).readonly().optional(),
      requireEnforcement: z.literal('full').optional(),
      limits: ResourceLimitsSchema.optional(),
    })
    .strict()
  return {
    SandboxModeSchema,
    ConfinedSandboxModeSchema,
    SandboxEnforcementSchema: z.enum(SANDBOX_ENFORCEMENTS),
    EffectClassSchema: z.enum(EFFECT_CLASSES),
    NetworkPolicySchema,
    ResourceLimitsSchema,
    SandboxExecutionPolicySchema,
    SandboxPolicySchema: SandboxExecutionPolicySchema.extend({ mode: ConfinedSandboxModeSchema }).strict(),
  }
})
