/**
 * The link-swap racer both removal attacks use: in a tree it makes `a` (a dir of files named as
 * the victim's) and `b` (a link to the victim dir), says "go", then exchanges the two with
 * renameat2 RENAME_EXCHANGE for as long as it lives. A removal that walks by path follows `b`
 * into the victim when the names swap under it.
 */
import fs from 'node:fs'
import path from 'node:path'

/** Python source of the racer: argv[1] the tree, argv[2] the victim dir; `files` files in `a`. */
export function linkSwapRacer(files: number): string {
  return `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
tree, victim = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(tree, 'a'), exist_ok=True)
for i in range(${files}):
    open(os.path.join(tree, 'a', 'f%d' % i), 'w').close()
os.symlink(victim, os.path.join(tree, 'b'))
fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
print('go', flush=True)
while True:
    libc.renameat2(fd, b'a', fd, b'b', 2)
`
}

/** A fresh victim dir of `files` host files in `base`; `left()` counts what is still there. */
export function victimDir(base: string, files: number): { dir: string; left(): number } {
  const dir = path.join(base, 'victim')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir)
  for (let i = 0; i < files; i++) fs.writeFileSync(path.join(dir, `f${i}`), 'host file\n')
  return { dir, left: () => fs.readdirSync(dir).length }
}

/** Resolves once the racer said "go" (it made its tree and is swapping); rejects if it ended first. */
export function racing(child: { stdout?: NodeJS.ReadableStream | null | undefined }): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = ''
    child.stdout?.on('data', (d: Buffer) => {
      text += String(d)
      if (text.includes('go')) resolve()
    })
    child.stdout?.on('end', () => reject(new Error(`the racer ended before it raced: ${text}`)))
  })
}
