// A call's progress: the output tail is bounded (the oldest characters go, never half a surrogate
// pair), yields are coalesced (many chunks within an interval make one yield), nothing is yielded
// without new output, and the call's result or error comes last. The "call" here is a timer that
// emits chunks: the adapter's own streaming is tested with real commands in test/e2e/adapters/.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { OutputTail, type OutputSoFar, progressOf } from '../../../src/adapters/progress.js'

/** Drains `steps`: what was yielded, and what it returned. */
async function drain<R>(steps: AsyncGenerator<OutputSoFar, R>): Promise<{ yielded: OutputSoFar[]; result: R }> {
  const yielded: OutputSoFar[] = []
  for (;;) {
    const step = await steps.next()
    if (step.done) return { yielded, result: step.value }
    yielded.push(step.value)
  }
}

describe('OutputTail', () => {
  it('keeps the last maxChars characters and counts the ones it dropped', () => {
    const tail = new OutputTail(5)
    tail.push('abc')
    expect(tail.snapshot()).toEqual({ output: 'abc', omittedChars: 0 })
    tail.push('defg')
    expect(tail.snapshot()).toEqual({ output: 'cdefg', omittedChars: 2 })
    tail.push('0123456789')
    expect(tail.snapshot()).toEqual({ output: '56789', omittedChars: 12 })
    expect(tail.total).toBe(17)
  })

  it('never keeps half of a surrogate pair', () => {
    const tail = new OutputTail(3)
    tail.push('a😀bc')
    // 'a', two code units of the emoji, 'b', 'c': the cut would fall inside the pair.
    expect(tail.snapshot()).toEqual({ output: 'bc', omittedChars: 3 })
  })
})

describe('progressOf', () => {
  it('coalesces chunks that arrive within an interval into one yield, and returns the result', async () => {
    const steps = progressOf(
      async (onOutput) => {
        for (let i = 1; i <= 20; i++) {
          onOutput(`${i}\n`, 'stdout')
          await sleep(10)
        }
        return 'result'
      },
      { intervalMs: 100, maxChars: 1000 },
    )
    const started = Date.now()
    const { yielded, result } = await drain(steps)
    const elapsed = Date.now() - started
    expect(result).toBe('result')
    // 20 chunks over 200ms or more, at most one yield per 100ms: a few yields, never one per chunk.
    expect(yielded.length).toBeGreaterThanOrEqual(1)
    expect(yielded.length).toBeLessThanOrEqual(Math.min(10, Math.ceil(elapsed / 100) + 1))
    expect(yielded[0]?.output).toMatch(/^1\n/)
    for (const [i, step] of yielded.entries())
      if (i > 0) expect(step.output.length).toBeGreaterThan(yielded[i - 1]!.output.length)
  })

  it('yields nothing when the call prints nothing, and bounds what it yields', async () => {
    expect(await drain(progressOf(async () => 7, { intervalMs: 0, maxChars: 10 }))).toEqual({ yielded: [], result: 7 })
    const bounded = await drain(
      progressOf(
        async (onOutput) => {
          onOutput('x'.repeat(25), 'stderr')
          await sleep(50)
          return 'done'
        },
        { intervalMs: 0, maxChars: 10 },
      ),
    )
    expect(bounded.yielded).toEqual([{ output: 'x'.repeat(10), omittedChars: 15 }])
  })

  it('throws what the call threw, after the output that came before', async () => {
    const steps = progressOf(
      async (onOutput) => {
        onOutput('partial', 'stdout')
        await sleep(20)
        throw new Error('harness bug')
      },
      { intervalMs: 0, maxChars: 100 },
    )
    expect(await steps.next()).toEqual({ done: false, value: { output: 'partial', omittedChars: 0 } })
    await expect(steps.next()).rejects.toThrow('harness bug')
  })
})
