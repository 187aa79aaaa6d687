/**
 * The portable spawn path as ManagedProcess drives it: how each kind of run starts without the
 * addon, over node:child_process (child.ts).
 *
 * - `direct`: the program itself, leading its own session; the tree is its process group.
 * - `launched`: a supervised run starts `cordon-exec init` (the helper is a static executable of
 *   its own, so it runs where the addon does not load): the same supervisor the native launcher
 *   forks (a subreaper with a parent-death signal that forwards TERM, escalates to KILL after the
 *   grace and reports the command's exit on fd 3). Without the helper (macOS, nothing built) a
 *   supervised run degrades to `direct`: descendants that leave the group are not reached (on
 *   macOS a Seatbelt-confined one stays under its profile; lifetime is ungoverned there anyway).
 *   A Landlock plan is refused at `launcher`: it needs the native child, never runs unconfined.
 * - `wrapped` (bubblewrap): bwrap on fds 0–2, the supervisor's status pipe on 3, bwrap's JSON
 *   status on 4, the ruleset (when the sandbox built one) on 5. bwrap itself runs without the
 *   wrapper steps (see startChild below). Signals go to the supervisor bwrap
 *   names by pid: bwrap is its parent and exits once it is reaped, and the handle stops
 *   signalling when bwrap has exited, so only that short window could meet a reused pid.
 */
import { SpawnError } from '../../policy/errors.js'
import { programOf } from '../process/child.js'
import { type LaunchKind, launchKindOf } from '../process/launch-kind.js'
import type { ChildSpawner, PinnedProcess, SupervisedLaunch } from '../process/spawner.js'
import { helperMissingReason, Slot } from '../native.js'
import { startPortableChild } from './child.js'
import type { SubprocessSpawnSpec } from '../types.js'

const ENOSYS = 38

/** The kind of run `spec` gets on the portable path (see the module comment). */
export function portableKindOf(spec: SubprocessSpawnSpec, helper: string | undefined): LaunchKind {
  const kind = launchKindOf(spec)
  // An instance needs the native launcher: here the spec's own bwrap runs it.
  if (kind === 'resident') return 'wrapped'
  // A Landlock plan stays `launched` so that it is refused, never run as a plain child.
  if (kind === 'launched' && spec.confinement?.backend !== 'landlock' && helper === undefined) return 'direct'
  return kind
}

/** A process named by pid: signalled while it lives (see the module comment for the window). */
function pinByPid(pid: number): PinnedProcess {
  let released = false
  return {
    signal(signal) {
      if (released) return
      try {
        process.kill(pid, signal)
      } catch {
        // gone already
      }
    },
    release() {
      released = true
    },
  }
}

/** The `cordon-exec init` argv that supervises `launch` (status on fd 3). */
export function initArgv(helper: string, launch: SupervisedLaunch): string[] {
  return [
    helper,
    'init',
    '--status-fd',
    '3',
    '--grace-ms',
    String(Math.ceil(launch.graceMs)),
    '--host-pid',
    String(process.pid),
    ...(launch.background ? ['--background'] : []),
    '--',
    programOf(launch.argv, launch.env),
    ...launch.argv.slice(1),
  ]
}

/** The portable spawner; `helper` is the `cordon-exec` path (undefined: none exists). */
export function portableSpawner(helper: string | undefined): ChildSpawner {
  return {
    path: 'portable',
    helper,
    kindOf: (spec) => portableKindOf(spec, helper),
    startChild(options, kind) {
      // A wrapper's own steps (no_new_privs and the launcher program on bwrap itself) are defence
      // for the wrapper: the command's confinement is cordon-exec's inside (its own no_new_privs,
      // Landlock domain and seccomp program, which refuses io_uring and foreign architectures as
      // the launcher program does), so the wrapper runs without them here. Any other kind with a
      // plan is refused by startPortableChild.
      return startPortableChild(kind === 'wrapped' ? { ...options, confinement: undefined } : options)
    },
    launch(launch) {
      if (launch.landlock) {
        throw new SpawnError({
          stage: 'launcher',
          errno: ENOSYS,
          detail:
            'a Landlock plan needs the native spawn path (the addon is not in use here): nothing was run; re-plan with LocalSandbox on this host, which picks another backend or fails closed',
        })
      }
      if (helper === undefined) {
        throw new SpawnError({
          stage: 'launcher',
          errno: 2,
          path: 'cordon-exec',
          detail: helperMissingReason(),
        })
      }
      const child = startPortableChild({
        argv: initArgv(helper, launch),
        env: launch.env,
        cwd: launch.cwd,
        stdio: launch.stdio,
        extra: [Slot.Pipe],
        onread: launch.onread,
      })
      return child
    },
    pin: pinByPid,
  }
}
