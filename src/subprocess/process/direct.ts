/**
 * `direct` runs: the spawner's own child execs the program (an unconfined, unsupervised run, or
 * a Seatbelt wrapper): the tree is the child's process group, signalled as a group, and gone once
 * the leader has exited and /proc shows no member of the group left.
 */
import { isSpawnError, SpawnError } from '../../policy/errors.js'
import type { SlotValue } from '../native.js'
import type { SubprocessSpawnSpec } from '../types.js'
import type { Child } from './child.js'
import { groupAlive } from './group.js'
import { type LaunchKind, nativePlanOf } from './launch-kind.js'
import type { LaunchStrategyFactory, RunContext } from './launch-strategy.js'
import { stdioSlots } from './stdio.js'

/** Whether `spec`'s argv[0] is a sandbox's wrapper (bwrap, sandbox-exec) rather than the command. */
function confinedWrapper(spec: SubprocessSpawnSpec): boolean {
  const backend = spec.confinement?.backend
  return backend === 'bubblewrap' || backend === 'seatbelt'
}

/**
 * Starts `argv` as the spawner's own child, with `extra` fds from 3 on; throws SpawnError before
 * anything ran. A wrapper (bwrap, sandbox-exec) that cannot be exec'd is the sandbox's runner
 * missing, a failure at `launcher`.
 */
export function startOwnChild(run: RunContext, kind: LaunchKind, extra: SlotValue[]): Child {
  const { spec, output } = run
  try {
    return run.spawner.startChild(
      {
        argv: spec.argv,
        env: run.env,
        cwd: spec.cwd,
        stdio: stdioSlots(spec, output.wiring),
        extra,
        confinement: nativePlanOf(spec.confinement?.steps),
        onread: output.readers,
      },
      kind,
    )
  } catch (error) {
    if (confinedWrapper(spec) && isSpawnError(error) && error.stage === 'exec') {
      throw new SpawnError({
        stage: 'launcher',
        errno: error.errno,
        path: error.path,
        detail: `the sandbox wrapper ${error.path ?? spec.argv[0]} could not be started (${error.code})`,
        cause: error,
      })
    }
    throw error
  }
}

/** Signals the child's process group; the leader alone when the group is gone but the leader not yet reaped. */
function signalGroup(child: Child, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid, signal)
  } catch {
    child.kill(signal)
  }
}

/** The strategy of a `direct` run. */
export const directRun: LaunchStrategyFactory = (run) => ({
  start: () => startOwnChild(run, 'direct', []),
  commandExit: (child) => child.exit,
  // Leader gone; descendants of an unsupervised group are only visible in /proc (never kill(-pgid, 0)).
  treeGoneNow: (child) => !child.running && !groupAlive(child.pid),
  signalTree: signalGroup,
  killDelayMs: (graceMs) => graceMs,
  killAfterGrace: (child) => signalGroup(child, 'SIGKILL'),
  forceKill: (child) => signalGroup(child, 'SIGKILL'),
  release() {},
})
