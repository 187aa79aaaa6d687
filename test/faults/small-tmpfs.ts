// A small tmpfs for the full-disk and read-only faults: mounted as root in a scratch dir and
// unmounted when the test file finishes. A host that cannot mount one (not root) skips the test
// with the reason.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll } from 'vitest'
import type { SkippableContext } from '../support/sandbox/backends.js'

const mounted: string[] = []
afterAll(() => {
  for (const dir of mounted.splice(0).reverse()) {
    spawnSync('umount', ['-l', dir])
    fs.rmdirSync(dir)
  }
})

/** How the tmpfs is made. */
export interface TmpfsOptions {
  /** Its size in bytes (default 64 KiB). */
  bytes?: number
  /** How many inodes it holds (default: the kernel's). */
  inodes?: number
  /** Remounted read-only once made. */
  readOnly?: boolean
}

/** Why no tmpfs can be mounted here, or undefined when one can. */
export function tmpfsRefusal(): string | undefined {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root'
  return undefined
}

/** A fresh tmpfs (mode 0700, ours) on a new dir of the host temp dir; skips the test when none can be mounted here. */
export function smallTmpfs(ctx: SkippableContext, prefix: string, options: TmpfsOptions = {}): string {
  const refusal = tmpfsRefusal()
  if (refusal !== undefined) ctx.skip(refusal)
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)))
  const opts = [
    `size=${options.bytes ?? 64 * 1024}`,
    'mode=0700',
    ...(options.inodes ? [`nr_inodes=${options.inodes}`] : []),
  ]
  const made = spawnSync('mount', ['-t', 'tmpfs', '-o', opts.join(','), 'tmpfs', dir], { encoding: 'utf8' })
  if (made.status !== 0) {
    fs.rmdirSync(dir)
    throw new Error(`mount tmpfs on ${dir}: ${made.stderr}`)
  }
  mounted.push(dir)
  if (options.readOnly) {
    const ro = spawnSync('mount', ['-o', 'remount,ro', dir], { encoding: 'utf8' })
    if (ro.status !== 0) throw new Error(`remount ${dir} read-only: ${ro.stderr}`)
  }
  return dir
}

/** Fills `dir` to the last block and the last inode; returns the errno that stopped each. */
export function fillUp(dir: string): { blocks: string; inodes: string } {
  const stop = (write: () => void): string => {
    try {
      write()
      return 'none'
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? String(error)
    }
  }
  const blocks = stop(() => fs.writeFileSync(`${dir}/.fill`, Buffer.alloc(64 * 1024 * 1024)))
  let n = 0
  const inodes = stop(() => {
    for (; n < 100_000; n++) fs.writeFileSync(`${dir}/.inode-${n}`, '')
  })
  return { blocks, inodes }
}

/** Whether a file of `bytes` fits in `dir` now (it is removed again). */
export function fits(dir: string, bytes: number): boolean {
  const probe = `${dir}/.fits-probe`
  try {
    fs.writeFileSync(probe, Buffer.alloc(bytes))
    return true
  } catch {
    return false
  } finally {
    fs.rmSync(probe, { force: true })
  }
}
