/**
 * Counts every process start of this test process at the places one can begin: the native addon's
 * `spawn` (every clone child, the launcher and bwrap included) and `launcherSend` (a request the
 * resident launcher forks for), node:child_process (the portable path, version probes, stty), and
 * node-pty's `spawn` (terminals). Each counted call goes on to the real function: nothing is faked.
 *
 * The addon's functions are read-only properties (napi_default), so the addon cannot be spied on
 * in place; a test file routes src/subprocess/native.ts through `spyingNative` instead:
 *
 *   vi.mock(import('../../src/subprocess/native.js'), async (original) =>
 *     (await import('../support/property/spawn-spy.js')).spyingNative(await original()))
 */
import { createRequire } from 'node:module'
import { vi } from 'vitest'
import { childProcess } from '../../../src/subprocess/lazy-builtins.js'
import type * as NativeModule from '../../../src/subprocess/native.js'

/** What started, in order: `native.spawn /usr/bin/bwrap`, `child_process.execFileSync …`, `node-pty.spawn bash`. */
const starts: string[] = []

/** The addon functions that start a process. */
const NATIVE_STARTS = ['spawn', 'launcherSend'] as const

/** The node:child_process functions that start a process. */
const CHILD_PROCESS_STARTS = ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork'] as const

const wrapped = new WeakMap<object, object>()

/** A copy of the addon whose process-starting functions record each call, then call the real one. */
function countingAddon<A extends object>(addon: A): A {
  const known = wrapped.get(addon)
  if (known !== undefined) return known as A
  const copy: Record<string, unknown> = {}
  for (const name of Object.getOwnPropertyNames(addon)) {
    const real = (addon as Record<string, unknown>)[name]
    copy[name] =
      typeof real === 'function' && (NATIVE_STARTS as readonly string[]).includes(name)
        ? (...args: unknown[]) => {
            starts.push(`native.${name} ${String(args[0])}`)
            return (real as (...a: unknown[]) => unknown).apply(addon, args)
          }
        : real
  }
  wrapped.set(addon, copy)
  return copy as A
}

/** src/subprocess/native.ts with its loaders handing out the counting addon (for vi.mock). */
export function spyingNative(real: typeof NativeModule): typeof NativeModule {
  return {
    ...real,
    loadNative: (root?: string) => countingAddon(real.loadNative(root)),
    loadNativeWithPath: (root?: string) => {
      const loaded = real.loadNativeWithPath(root)
      return { ...loaded, addon: countingAddon(loaded.addon) }
    },
  }
}

/** Spies on node:child_process and node-pty (when installed); call once per test file. */
export function spyOnProcessStarts(): void {
  const cp = childProcess() as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const name of CHILD_PROCESS_STARTS) {
    const real = cp[name] as (...args: unknown[]) => unknown
    vi.spyOn(cp, name).mockImplementation((...args: unknown[]) => {
      starts.push(`child_process.${name} ${String(args[0])}`)
      return real.apply(cp, args)
    })
  }
  let pty: Record<string, (...args: unknown[]) => unknown> | undefined
  try {
    pty = createRequire(import.meta.url)('node-pty') as Record<string, (...args: unknown[]) => unknown>
  } catch {
    return // not installed: no terminal can start either
  }
  const spawn = pty.spawn as (...args: unknown[]) => unknown
  vi.spyOn(pty, 'spawn').mockImplementation((...args: unknown[]) => {
    starts.push(`node-pty.spawn ${String(args[0])}`)
    return spawn.apply(pty, args)
  })
}

/** How many processes started so far (a test compares two readings). */
export function processStarts(): number {
  return starts.length
}

/** What started since reading `from` (for a failure's message). */
export function startsSince(from: number): string[] {
  return starts.slice(from)
}
