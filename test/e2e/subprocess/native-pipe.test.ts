// The native pipe reader (collect mode's host end) against real pipes and real writers: every
// byte in order, the end once, destroy() stops it and closes the fd, no callback after either.
import { spawn } from 'node:child_process'
import { closeSync, fstatSync, writeSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadNative } from '../../../src/subprocess/native.js'
import { NativePipe } from '../../../src/subprocess/output/native-pipe.js'

const native = loadNative()

/** A fresh pipe: [read end, write end], both close-on-exec. */
function pipe(): [number, number] {
  const fds = native.pipes(1)
  if (typeof fds === 'number') throw new Error(`pipes: errno ${-fds}`)
  return [fds[0] as number, fds[1] as number]
}

/** Whether fd `fd` still names the pipe of inode `ino` (its number may have been reused since). */
function stillOpen(fd: number, ino: number): boolean {
  try {
    return fstatSync(fd).ino === ino
  } catch {
    return false
  }
}
const closed = (p: NativePipe) => new Promise<void>((resolve) => p.once('close', () => resolve()))

describe('NativePipe over a real pipe', () => {
  it('hands over every byte in order, then end and close once; the fd is closed', async () => {
    const [r, w] = pipe()
    const ino = fstatSync(r).ino
    const chunks: Buffer[] = []
    const events: string[] = []
    const p = new NativePipe(r, Buffer.allocUnsafe(4096), (buf, n) => {
      chunks.push(Buffer.from(buf.subarray(0, n)))
    })
    p.on('end', () => events.push('end'))
    p.on('close', () => events.push('close'))
    const data = Buffer.alloc(1 << 20)
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff
    // A real writer process: the pipe fills and drains many times through a 4 KiB buffer.
    const writer = spawn(process.execPath, ['-e', 'process.stdin.pipe(process.stdout)'], {
      stdio: ['pipe', w, 'ignore'],
    })
    closeSync(w)
    writer.stdin?.end(data)
    await closed(p)
    expect(Buffer.concat(chunks).equals(data)).toBe(true)
    expect(events).toEqual(['end', 'close'])
    expect(p.closed).toBe(true)
    expect(stillOpen(r, ino)).toBe(false)
  })

  it('destroy() while a writer still holds the pipe: no more reads, close on the next tick, fd closed', async () => {
    const [r, w] = pipe()
    const ino = fstatSync(r).ino
    let reads = 0
    const p = new NativePipe(r, Buffer.allocUnsafe(64), () => {
      reads++
    })
    writeSync(w, 'first')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(reads).toBe(1)
    const gone = closed(p)
    p.destroy()
    expect(p.closed).toBe(true)
    await gone
    // The read end is gone: the writer now has no reader (the write end itself is still open).
    expect(stillOpen(r, ino)).toBe(false)
    expect(() => writeSync(w, 'after destroy')).toThrow(/EPIPE/)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(reads).toBe(1)
    p.destroy() // a second destroy (and stopPipe of a finished id) does nothing
    closeSync(w)
  })

  it('destroy() from inside the reader stops at once', async () => {
    const [r, w] = pipe()
    let reads = 0
    let ended = false
    const p: NativePipe = new NativePipe(r, Buffer.allocUnsafe(1), () => {
      reads++
      p.destroy()
    })
    p.on('end', () => {
      ended = true
    })
    writeSync(w, 'many bytes, read one at a time')
    await closed(p)
    expect(reads).toBe(1)
    expect(ended).toBe(false)
    closeSync(w)
  })

  it('finishReading() hands over what the pipe holds before it stops; destroy() drops it (the control)', () => {
    for (const [how, expected] of [
      ['finishReading', 'written before the stop'],
      ['destroy', ''],
    ] as const) {
      const [r, w] = pipe()
      let text = ''
      const p = new NativePipe(r, Buffer.allocUnsafe(4), (buf, n) => {
        text += buf.toString('utf8', 0, n)
      })
      // Synchronously, so the loop never polls the pipe before the stop: only the stop can read it.
      writeSync(w, 'written before the stop')
      p[how]()
      expect(text, how).toBe(expected)
      closeSync(w)
    }
  })

  it('a stopped id is ignored, and bad arguments are a typed error', () => {
    expect(() => native.stopPipe(987654, true)).not.toThrow()
    expect(() => native.readPipe(-1, Buffer.alloc(1), () => {})).toThrow(/readPipe/)
    expect(() => native.readPipe(0, Buffer.alloc(0), () => {})).toThrow(/readPipe/)
  })
})
