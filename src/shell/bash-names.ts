/**
 * Seed 004's names (dsh's `ctx.bash`, from before its rename to `ctx.shell`): the same class
 * and the same types as the Shell* ones, so code written to either seed page compiles.
 */
import type { ShellExecRequest, ShellExecSpec, ShellProcess, ShellRunResult } from './types.js'

export { ShellExecutor as BashExecutor } from './executor.js'

/** Seed 004's name for a ShellExecRequest. */
export type BashExecRequest = ShellExecRequest
/** Seed 004's name for a ShellExecSpec. */
export type BashExecSpec = ShellExecSpec
/** Seed 004's name for a ShellRunResult. */
export type BashRunResult = ShellRunResult
/** Seed 004's name for a ShellProcess. */
export type BashProcess = ShellProcess
