/**
 * The sandbox vocabulary's zod schemas as constants, and the policy's JSON Schema, for callers
 * that validate untrusted input (importing this module loads zod; cordon's own modules use
 * vocabulary.ts, which builds them only when needed).
 */
import type { z as Z } from 'zod'
import type { SandboxExecutionPolicy } from '../vocabulary.js'
import { vocabularySchemas } from './vocabulary.js'
import { zod } from './zod-on-demand.js'

const schemas = vocabularySchemas()

/** Validates a SandboxMode. */
export const SandboxModeSchema = schemas.SandboxModeSchema
/** Validates a ConfinedSandboxMode. */
export const ConfinedSandboxModeSchema = schemas.ConfinedSandboxModeSchema
/** Validates a SandboxEnforcement. */
export const SandboxEnforcementSchema = schemas.SandboxEnforcementSchema
/** Validates an EffectClass. */
export const EffectClassSchema = schemas.EffectClassSchema
/** Validates a NetworkPolicy. */
export const NetworkPolicySchema = schemas.NetworkPolicySchema
/** Validates ResourceLimits. */
export const ResourceLimitsSchema = schemas.ResourceLimitsSchema
/** Validates a SandboxExecutionPolicy's shape (canonical paths need the file system: see resolvePolicy). */
export const SandboxExecutionPolicySchema = schemas.SandboxExecutionPolicySchema
/** Validates a SandboxPolicy (a SandboxExecutionPolicy with a confined mode). */
export const SandboxPolicySchema = schemas.SandboxPolicySchema

// Compile-time guard: the schema and the documented interface describe the same shape.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const schemaMatchesInterface: Same<Z.infer<typeof SandboxExecutionPolicySchema>, SandboxExecutionPolicy> extends true
  ? true
  : never = true
void schemaMatchesInterface

/** JSON Schema (draft 2020-12) of SandboxExecutionPolicy, generated from its zod schema. */
export const SANDBOX_EXECUTION_POLICY_JSON_SCHEMA: Readonly<Record<string, unknown>> = Object.freeze(
  zod().z.toJSONSchema(SandboxExecutionPolicySchema) as Record<string, unknown>,
)
