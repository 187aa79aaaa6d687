/**
 * The attacker's-pass controls for the host's after-run repairs in a workspace: the same repairs
 * done by path, as cordon did them before it acted inside each directory opened by descriptor
 * (src/subprocess/process/must-not-appear.ts). Run against a layout the same plant made unconfined, they
 * show that the layout leads the host, by path, to a host file.
 */
import fs from 'node:fs'

/** `restoreLinks` by path: read the link, move what is there aside, make the link again. */
export function restoreLinkByPath(link: string, target: string): void {
  let now: string | undefined
  try {
    now = fs.readlinkSync(link)
  } catch {
    now = undefined
  }
  if (now === target) return
  if (now !== undefined || fs.existsSync(link)) fs.renameSync(link, `${link}.cordon-refused-${Date.now()}`)
  fs.symlinkSync(target, link)
}

/** `takeAwayAppeared` by path: an existing path is moved aside. */
export function takeAwayByPath(p: string): boolean {
  try {
    fs.lstatSync(p)
  } catch {
    return false
  }
  fs.renameSync(p, `${p}.cordon-refused-${Date.now()}`)
  return true
}

/** The names in `dir` with whether each is a symlink (what the host may have put there). */
export function entries(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .sort()
    .map((n) => (fs.lstatSync(`${dir}/${n}`).isSymbolicLink() ? `${n}@` : n))
}
