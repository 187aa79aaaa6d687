/**
 * One spawned process tree behind the seed's SubprocessHandle: its stdio, bounded collection,
 * the exit facts, tree-scoped termination and the wait for the whole tree.
 *
 * What differs between the launch kinds (launch-kind.ts) lives in one strategy per kind, chosen
 * once per run (direct.ts, launched.ts, wrapped.ts; the interface is launch-strategy.ts); this
 * handle holds what they share. Children start through a ChildSpawner (spawner.ts): the native
 * addon, or node:child_process on the portable path; everything here is the same for both.
 */
import { isSpawnError } from '../../policy/errors.js'
import type { NetworkFacts } from '../../policy/network/facts.js'
import { type BoundFacts, controllersOf, RunCgroup } from '../cgroup/leaf.js'
import { loadNative } from '../native.js'
import type { SubprocessCollectedOutputs, SubprocessHandle, SubprocessOutcome, SubprocessSpawnSpec } from '../types.js'
import type { Socket } from 'node:net'
import type { Child, OutputPipe } from './child.js'
import { directRun } from './direct.js'
import type { LaunchKind } from './launch-kind.js'
import type { LaunchStrategy, LaunchStrategyFactory, RunContext } from './launch-strategy.js'
import { launchedRun, residentRun } from './launched.js'
import { restoreLinks, takeAwayAppeared } from './must-not-appear.js'
import { type ChildSpawner, NATIVE_SPAWNER } from './spawner.js'
import { attachStdio, drainPipes, type OutputPlan, planOutput } from './stdio.js'
import { wrappedRun } from './wrapped.js'

/** Everything a ManagedProcess needs beyond the spec (the runtime prepares it). */
export interface ManagedProcessInit {
  spec: SubprocessSpawnSpec
  kind: LaunchKind
  /** The complete child environment, `K=V`. */
  env: string[]
  /** Lazily creates the private spill directory. */
  spillDir: () => string
  /** Called once the tree is known to be gone (the runtime drops the handle). */
  onTreeGone: (process: ManagedProcess) => void
  /** How children start (default: the native addon). */
  spawner?: ChildSpawner | undefined
}

/** The strategy of each launch kind. */
const STRATEGIES: Readonly<Record<LaunchKind, LaunchStrategyFactory>> = {
  direct: directRun,
  launched: launchedRun,
  wrapped: wrappedRun,
  resident: residentRun,
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** A live process tree; see SubprocessHandle for the contract of each member. */
export class ManagedProcess implements SubprocessHandle {
  readonly pid: number
  readonly stdin: Socket | undefined
  readonly stdout: Socket | undefined
  readonly stderr: Socket | undefined
  readonly collected: SubprocessCollectedOutputs
  readonly done: Promise<SubprocessOutcome>
  readonly kind: LaunchKind

  private readonly child: Child | undefined
  private strategy!: LaunchStrategy
  private readonly graceMs: number
  private readonly onTreeGone: (process: ManagedProcess) => void
  private readonly aftermath: Pick<NonNullable<SubprocessSpawnSpec['confinement']>, 'mustNotAppear' | 'mustStay'>
  private treeGone = false
  private escalating = false
  private killTimer: NodeJS.Timeout | undefined
  private readonly abortListener: (() => void) | undefined
  private refused: string[] | undefined
  private proxied: { finish(): NetworkFacts } | undefined
  private networkFacts: NetworkFacts | undefined
  private cgroup: RunCgroup | undefined
  private boundFacts: BoundFacts | undefined

  constructor(init: ManagedProcessInit) {
    const { spec } = init
    this.kind = init.kind
    this.graceMs = spec.graceMs
    this.onTreeGone = init.onTreeGone
    this.aftermath = { mustNotAppear: spec.confinement?.mustNotAppear, mustStay: spec.confinement?.mustStay }
    const output = planOutput(spec, init.spillDir)
    this.collected = output.collectors
    let child: Child | undefined
    try {
      const bounds = spec.confinement?.bounds
      // Before the strategy: its run's request names the fds.
      if (controllersOf(bounds).length > 0) this.cgroup = RunCgroup.create(bounds ?? {})
      this.strategy = STRATEGIES[init.kind](this.runContext(init, output))
      try {
        child = this.strategy.start()
      } finally {
        this.cgroup?.closeFds()
      }
    } catch (error) {
      this.strategy ??= STRATEGIES.direct(this.runContext(init, output))
      this.cgroup?.remove()
      this.cgroup = undefined
      this.child = undefined
      this.pid = -1
      this.stdin = this.stdout = this.stderr = undefined
      this.done = this.failedSpawn(error, output)
      return
    }
    this.child = child
    this.pid = child.pid
    this.serveNetwork(child, spec)
    const stdio = attachStdio(child, spec, output.wiring)
    this.stdin = stdio.stdin
    this.stdout = stdio.stdout
    this.stderr = stdio.stderr
    this.done = this.outcome(child, output, stdio.drained)
    if (spec.signal) {
      const listener = () => this.terminate()
      this.abortListener = listener
      spec.signal.addEventListener('abort', listener, { once: true })
    }
  }

  /** What the run's strategy sees of it. */
  private runContext(init: ManagedProcessInit, output: OutputPlan): RunContext {
    return {
      spec: init.spec,
      env: init.env,
      spawner: init.spawner ?? NATIVE_SPAWNER,
      output,
      cgroupFds: this.cgroup?.fds ?? [],
      markTreeGone: () => this.markTreeGone(),
      isTreeGone: () => this.treeGone,
    }
  }

  /** Nothing ran: the tree is gone at once and `done` rejects with why. */
  private failedSpawn(failure: unknown, output: OutputPlan): Promise<SubprocessOutcome> {
    this.treeGone = true
    for (const c of Object.values(output.collectors)) c.finish()
    const done = Promise.reject(isSpawnError(failure) ? failure : new Error(String(failure), { cause: failure }))
    done.catch(() => {}) // the caller may never look; a failed spawn is not a crash
    queueMicrotask(() => this.onTreeGone(this))
    return done
  }

  /** The command's exit facts once its output is complete (the pipes drained, the collectors finished). */
  private outcome(child: Child, output: OutputPlan, drained: OutputPipe[]): Promise<SubprocessOutcome> {
    const done = this.strategy.commandExit(child).then(async (exit) => {
      // Descendants may still hold the pipes: wait at most graceMs for them, then stop reading.
      await drainPipes(drained, this.graceMs)
      for (const c of Object.values(output.collectors)) c.finish()
      this.checkTreeGone()
      return exit
    })
    done.catch(() => {})
    return done
  }

  /** Gives the run's proxy listener, once its supervisor made it, to the sandbox's proxy. */
  private serveNetwork(child: Child, spec: SubprocessSpawnSpec): void {
    const network = spec.confinement?.network
    child.proxyListener?.((fd) => {
      if (this.treeGone || network === undefined) loadNative().closeFd(fd)
      else this.proxied = network.serve(fd)
    })
  }

  private markTreeGone(): void {
    if (this.treeGone) return
    this.treeGone = true
    // Nothing of the run can connect any more: its facts are final.
    this.networkFacts = this.proxied?.finish()
    this.proxied = undefined
    // Only now, with nothing of the run left to recreate them.
    const { mustNotAppear = [], mustStay = [] } = this.aftermath
    if (mustNotAppear.length > 0 || mustStay.length > 0)
      this.refused = [...takeAwayAppeared(mustNotAppear), ...restoreLinks(mustStay)]
    if (this.killTimer) clearTimeout(this.killTimer)
    this.killTimer = undefined
    if (this.cgroup !== undefined) {
      this.boundFacts = this.cgroup.facts()
      this.cgroup.remove()
      this.cgroup = undefined
    }
    this.strategy.release()
    this.onTreeGone(this)
  }

  /** Whether the tree is gone, asking the strategy when nothing has said so yet. */
  private checkTreeGone(): boolean {
    if (!this.treeGone && this.child !== undefined && this.strategy.treeGoneNow(this.child)) this.markTreeGone()
    return this.treeGone
  }

  /** SIGTERM → graceMs → SIGKILL over the tree; idempotent; a no-op once the tree is gone. */
  terminate(): void {
    const child = this.child
    if (this.escalating || this.checkTreeGone() || child === undefined) return
    this.escalating = true
    this.strategy.signalTree(child, 'SIGTERM')
    this.killTimer = setTimeout(() => {
      this.killTimer = undefined
      if (!this.checkTreeGone()) this.strategy.killAfterGrace(child)
    }, this.strategy.killDelayMs(this.graceMs))
  }

  /** SIGKILL to the whole tree at once (host exit, disposal after failure). */
  forceKill(): void {
    if (this.treeGone || !this.child) return
    this.strategy.forceKill(this.child)
  }

  /** What the network allow-list's proxy saw of the run, once its tree is gone. */
  get network(): NetworkFacts | undefined {
    return this.networkFacts
  }

  /** Whether the run's tree met its process or memory bound (once it is gone; undefined: no cgroup bound it). */
  get bounds(): BoundFacts | undefined {
    return this.boundFacts
  }

  /** The `mustNotAppear` paths the run had created, moved aside once its tree was gone. */
  get refusedPaths(): readonly string[] | undefined {
    return this.refused
  }

  /** Resolves true once the whole tree has exited; false when `signal` aborts first. */
  async waitForExit(signal?: AbortSignal): Promise<boolean> {
    if (this.treeGone) return true
    if (signal?.aborted) return false
    let aborted = false
    const onAbort = new Promise<void>((resolve) => {
      if (!signal) return
      signal.addEventListener(
        'abort',
        () => {
          aborted = true
          resolve()
        },
        { once: true },
      )
    })
    await Promise.race([this.child?.exit, onAbort])
    // The root gone; the rest of the tree may need looking for (an unsupervised group in /proc).
    let delay = 2
    while (!aborted && !this.checkTreeGone()) {
      await Promise.race([sleep(delay), onAbort])
      delay = Math.min(delay * 2, 50)
    }
    return this.treeGone
  }

  /** Stops listening to the spec's abort signal (the tree no longer needs it). */
  detach(signal: AbortSignal | undefined): void {
    if (signal && this.abortListener) signal.removeEventListener('abort', this.abortListener)
  }

  /** Whether the tree is known to be gone. */
  get gone(): boolean {
    return this.treeGone
  }
}
