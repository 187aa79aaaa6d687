// cordon in worker threads: each thread's runtime reads its children's output natively on its own
// loop (the addon's readers are per thread), while the main thread does the same, and a worker
// that ends leaves the main thread's runs unharmed. Runs the built package (dist/), as a caller would.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'

const DIST = pathToFileURL(path.resolve('dist/index.js')).href
const RUNS = 40

// A worker: RUNS collected spawns of `printf` with its own tag, then the texts it got.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
import(workerData.dist).then(async ({ LocalSubprocessRuntime }) => {
  const rt = new LocalSubprocessRuntime()
  const texts = []
  for (let i = 0; i < workerData.runs; i++) {
    const h = rt.spawn({ argv: ['printf', '%s-%d', workerData.tag, String(i)], cwd: '/', stdio: { stdin: 'ignore', stdout: { maxBytes: 4096 }, stderr: { maxBytes: 4096 } }, graceMs: 2000 })
    await h.done
    texts.push(h.collected.stdout.readFrom(0).text)
  }
  await rt.dispose()
  parentPort.postMessage(texts)
})
`

function worker(tag: string): Promise<string[]> {
  const w = new Worker(WORKER, { eval: true, workerData: { dist: DIST, tag, runs: RUNS } })
  return new Promise((resolve, reject) => {
    w.once('message', resolve)
    w.once('error', reject)
    w.once('exit', (code) => reject(new Error(`worker ${tag} exited ${code} before answering`)))
  })
}

describe('worker threads', () => {
  it('two workers and the main thread collect their own output, concurrently', async () => {
    const rt = new LocalSubprocessRuntime()
    const main = (async () => {
      const texts: string[] = []
      for (let i = 0; i < RUNS; i++) {
        const h = rt.spawn({
          argv: ['printf', '%s-%d', 'main', String(i)],
          cwd: '/',
          stdio: { stdin: 'ignore', stdout: { maxBytes: 4096 }, stderr: { maxBytes: 4096 } },
          graceMs: 2000,
        })
        await h.done
        texts.push(h.collected.stdout?.readFrom(0).text ?? '')
      }
      return texts
    })()
    const [a, b, m] = await Promise.all([worker('a'), worker('b'), main])
    const expected = (tag: string) => Array.from({ length: RUNS }, (_, i) => `${tag}-${i}`)
    expect(a).toEqual(expected('a'))
    expect(b).toEqual(expected('b'))
    expect(m).toEqual(expected('main'))
    // The workers are gone; the main thread's runtime still reads.
    const h = rt.spawn({
      argv: ['printf', 'after'],
      cwd: '/',
      stdio: { stdin: 'ignore', stdout: { maxBytes: 64 }, stderr: { maxBytes: 64 } },
      graceMs: 2000,
    })
    await h.done
    expect(h.collected.stdout?.readFrom(0).text).toBe('after')
    await rt.dispose()
  }, 60_000)
})
