/**
 * `wrapped` runs (bubblewrap): the program is a wrapper that runs `cordon-exec init` as the
 * command's supervisor inside. The wrapper gets the supervisor's status pipe on fd 3, its own
 * JSON status on fd 4, the ruleset (when the sandbox built one) on fd 5, then, under a network
 * allow-list, the socket its supervisor hands the proxy listener over, then the run's cgroup.procs
 * files. Its exit means the
 * sandbox, and the tree, are gone. bwrap does not forward signals: they go to the supervisor
 * inside, pinned once the JSON status names its pid, and wait for that until then.
 */
import { awaitListener, proxySocket } from '../launcher/proxy-listener.js'
import { loadNative, Slot, type SlotValue } from '../native.js'
import { readLines } from '../launcher/status-line.js'
import type { Socket } from 'node:net'
import { type Child, signalNumber } from './child.js'
import { startOwnChild } from './direct.js'
import { openRuleset } from './launch-kind.js'
import type { LaunchStrategyFactory, RunContext } from './launch-strategy.js'
import { supervisedCommandExit, supervisedKillDelayMs } from './launched.js'
import type { PinnedProcess } from './spawner.js'

/** The supervisor inside the wrapper, once the wrapper names it; signals wait for it until then. */
class InnerSupervisor {
  private inner: PinnedProcess | undefined
  private readonly pending: number[] = []

  constructor(private readonly run: RunContext) {}

  /** Learns the supervisor's pid from bwrap's JSON status and pins it with a pidfd. */
  watch(json: Socket | undefined): void {
    readLines(
      json,
      (line) => {
        const match = /"child-pid"\s*:\s*(\d+)/.exec(line)
        if (!match || this.inner !== undefined || this.run.isTreeGone()) return
        const inner = this.run.spawner.pin(Number(match[1]))
        if (inner === undefined) return
        this.inner = inner
        for (const sig of this.pending.splice(0)) inner.signal(sig)
      },
      () => {},
    )
  }

  /** Sends `signal` to the supervisor, or holds it until the supervisor is known. */
  signal(signal: NodeJS.Signals): void {
    if (this.inner !== undefined) this.inner.signal(signalNumber(signal))
    else this.pending.push(signalNumber(signal))
  }

  release(): void {
    this.inner?.release()
    this.inner = undefined
  }
}

/** The strategy of a `wrapped` run. */
export const wrappedRun: LaunchStrategyFactory = (run) => {
  const inner = new InnerSupervisor(run)
  const signalTree = (_child: Child, signal: NodeJS.Signals) => inner.signal(signal)
  return {
    start() {
      const rulesetFd = openRuleset(run.spec.confinement?.wrapper?.ruleset)
      const extra: SlotValue[] = [Slot.Pipe, Slot.Pipe]
      if (rulesetFd !== undefined) extra.push(rulesetFd)
      // The plan's init argv names the cgroup fds right after these (src/sandbox/bubblewrap/argv.ts:wrappedCgroupFds).
      if (run.spec.confinement?.network === undefined)
        return startOwnChild(run, 'wrapped', [...extra, ...run.cgroupFds])
      const [hostEnd, childEnd] = proxySocket()
      try {
        const child = startOwnChild(run, 'wrapped', [...extra, childEnd, ...run.cgroupFds])
        // Assigned, not spread: the child's `running` is a getter.
        return Object.assign(child, { proxyListener: (take: (fd: number) => void) => awaitListener(hostEnd, take) })
      } catch (error) {
        loadNative().closeFd(hostEnd)
        throw error
      } finally {
        loadNative().closeFd(childEnd)
      }
    },
    commandExit(child) {
      const exit = supervisedCommandExit(run, child, false)
      inner.watch(child.extras[1])
      return exit
    },
    treeGoneNow: () => false,
    signalTree,
    killDelayMs: supervisedKillDelayMs,
    killAfterGrace(child) {
      // The supervisor kills at its own grace; reaching here means it is stuck: last resort.
      signalTree(child, 'SIGKILL')
      child.kill('SIGKILL')
    },
    forceKill(child) {
      signalTree(child, 'SIGKILL')
      child.kill('SIGKILL') // bwrap's death takes the sandbox with it (--die-with-parent)
    },
    release: () => inner.release(),
  }
}
