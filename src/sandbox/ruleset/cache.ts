/**
 * Built Landlock rulesets, cached by what their rules name — the (device, inode) and rights of
 * every rule — so a recreated root is never served a stale ruleset. A confined spec holds the
 * handle object, not an fd number: an evicted handle stays open for as long as anything (a spec
 * not yet spawned) still holds it, and is closed once it is garbage (a FinalizationRegistry) or
 * when the sandbox is disposed. A closed handle reads `closed`, and a spawn of a spec holding it
 * fails closed: no fd number is ever reinterpreted after reuse.
 */
import { DEFAULT_RULESET_CACHE_SIZE } from '../../policy/defaults.js'
import type { RulesetReference } from '../../subprocess/types.js'
import { buildRuleset, type LandlockRulesetPlan, type LandlockSyscalls } from './landlock.js'

/** One built ruleset fd, owned by the cache that built it. */
export class RulesetHandle implements RulesetReference {
  #closed = false

  constructor(readonly fd: number) {}

  /** Whether the fd was closed (the spec holding this handle must not run). */
  get closed(): boolean {
    return this.#closed
  }

  /** Closes the fd once. */
  close(sys: Pick<LandlockSyscalls, 'closeFd'>): void {
    if (this.#closed) return
    this.#closed = true
    sys.closeFd(this.fd)
  }
}

/** An LRU of built rulesets keyed by the plan's key. */
export class RulesetCache {
  private readonly entries = new Map<string, RulesetHandle>()
  private readonly evicted = new Set<WeakRef<RulesetHandle>>()
  private readonly finalizer: FinalizationRegistry<{ fd: number; ref: WeakRef<RulesetHandle> }>
  private readonly capacity: number
  private disposed = false

  constructor(
    private readonly sys: LandlockSyscalls,
    options: { capacity?: number } = {},
  ) {
    this.capacity = Math.max(1, options.capacity ?? DEFAULT_RULESET_CACHE_SIZE)
    // A handle nobody holds any more: its fd can go (unless dispose already closed it).
    this.finalizer = new FinalizationRegistry(({ fd, ref }) => {
      if (this.evicted.delete(ref) && !this.disposed) this.sys.closeFd(fd)
    })
  }

  /** The number of ruleset fds held open (cached plus evicted-but-referenced). */
  get openFds(): number {
    let alive = 0
    for (const ref of this.evicted) if (ref.deref()?.closed === false) alive++
    return this.entries.size + alive
  }

  /** The handle for `plan`, built on a miss; the most recently used entry moves to the back. */
  get(plan: LandlockRulesetPlan): RulesetHandle {
    if (this.disposed) throw new Error('RulesetCache: get() after clear()')
    const hit = this.entries.get(plan.key)
    if (hit !== undefined) {
      this.entries.delete(plan.key)
      this.entries.set(plan.key, hit)
      return hit
    }
    const handle = new RulesetHandle(buildRuleset(plan, this.sys))
    this.entries.set(plan.key, handle)
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string
      const old = this.entries.get(oldest) as RulesetHandle
      this.entries.delete(oldest)
      const ref = new WeakRef(old)
      this.evicted.add(ref)
      this.finalizer.register(old, { fd: old.fd, ref })
    }
    return handle
  }

  /** Closes every fd, cached and evicted; handles read `closed` from now on. */
  clear(): void {
    this.disposed = true
    for (const handle of this.entries.values()) handle.close(this.sys)
    this.entries.clear()
    for (const ref of this.evicted) ref.deref()?.close(this.sys)
    this.evicted.clear()
  }
}
