// The host scripts' side of test/escape/host/run-as.ts: a script run as root or as nobody writes
// what it found, or the stack of what failed, as JSON to the file its parent reads back.
import fs from 'node:fs'

/** Writes `{ uid, result }` of `run`, or `{ uid, error }` when it throws, to `resultFile`; then exits 0. */
export async function writeResultFile(resultFile: string, run: () => Promise<unknown>): Promise<never> {
  const uid = process.getuid?.()
  try {
    fs.writeFileSync(resultFile, JSON.stringify({ uid, result: await run() }))
  } catch (e) {
    fs.writeFileSync(resultFile, JSON.stringify({ uid, error: e instanceof Error ? e.stack : String(e) }))
  }
  process.exit(0)
}
