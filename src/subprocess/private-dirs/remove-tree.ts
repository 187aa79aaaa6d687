/**
 * Removing a tree a confined command may be changing while it goes (its temp dir, a path it
 * planted in the workspace): a removal by path (Node's fs.rm) follows a link swapped in for a
 * directory mid-walk and deletes host files (test/escape/cleanup/session-dir-race.test.ts). Where the
 * addon is, the walk is native and by directory fd with O_NOFOLLOW; elsewhere (macOS, no addon)
 * fs.rm is what there is.
 */
import fs from 'node:fs'
import { loadNative, type NativeAddon } from '../native.js'

/** The addon when it is loaded and has the walk (a prebuild of another version may not). */
function addon(): NativeAddon | undefined {
  try {
    const native = loadNative()
    return typeof native.removeTreeSync === 'function' ? native : undefined
  } catch {
    return undefined
  }
}

/** Removes absolute `p` and everything beneath it, never following a link; never throws. */
export function removeTreeSync(p: string): void {
  const native = addon()
  if (native) native.removeTreeSync(p)
  else fs.rmSync(p, { recursive: true, force: true })
}

/** removeTreeSync off the event loop (the thread pool); resolves when done, never rejects. */
export function removeTree(p: string): Promise<void> {
  const native = addon()
  return new Promise<void>((done) => {
    if (native) native.removeTree(p, () => done())
    else fs.rm(p, { recursive: true, force: true }, () => done())
  })
}
