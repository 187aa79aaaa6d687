import fs from 'node:fs'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { awaitListener, PROXY_FD_PLACEHOLDER, proxySocket } from '../../../../src/subprocess/launcher/proxy-listener.js'
import { loadNative } from '../../../../src/subprocess/native.js'

const native = loadNative()
const servers: net.Server[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

/** A real listening socket on loopback and its descriptor (what a supervisor hands over). */
async function listening(): Promise<{ server: net.Server; fd: number; port: number }> {
  const server = net.createServer((s) => s.end('hi'))
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd
  return { server, fd, port: (server.address() as net.AddressInfo).port }
}

/** The inode `fd` names now (undefined: closed); a closed number may be reused, by another socket. */
const inodeOf = (fd: number) => {
  try {
    return fs.fstatSync(fd).ino
  } catch {
    return undefined
  }
}

describe('the proxy listener hand-over', () => {
  it('names the placeholder a terminal argv carries', () => {
    expect(PROXY_FD_PLACEHOLDER).toBe('@proxy')
  })

  it('hands over a listener sent later over the pair (polled), and closes the host end', async () => {
    const [hostEnd, childEnd] = proxySocket()
    const hostInode = inodeOf(hostEnd)
    const { fd, port } = await listening()
    const got = new Promise<number>((resolve) => awaitListener(hostEnd, resolve))
    // Sent after the poll began: the first poll finds nothing.
    await new Promise((r) => setTimeout(r, 10))
    expect(native.launcherSend(childEnd, Buffer.from('L'), [fd])).toBeGreaterThanOrEqual(0)
    const received = await got
    expect(received).not.toBe(fd)
    // The received descriptor is the same listening socket: a server on it answers a connect to the port.
    const server = net.createServer((s) => s.end('via the handed fd'))
    servers.push(server)
    servers[0]!.close() // the original stops accepting; only the handed copy may answer
    await new Promise<void>((r) => server.listen({ fd: received }, r))
    const text = await new Promise<string>((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1')
      let out = ''
      c.on('data', (d) => {
        out += d
      })
      c.on('end', () => resolve(out))
      c.on('error', reject)
    })
    expect(text).toBe('via the handed fd')
    expect(inodeOf(hostEnd)).not.toBe(hostInode)
    native.closeFd(childEnd)
  })

  it('gives nothing when the pair ends without a listener (the run ended first), and closes the host end', async () => {
    const [hostEnd, childEnd] = proxySocket()
    const hostInode = inodeOf(hostEnd)
    let taken = false
    awaitListener(hostEnd, () => {
      taken = true
    })
    native.closeFd(childEnd)
    for (let i = 0; i < 100 && inodeOf(hostEnd) === hostInode; i++) await new Promise((r) => setTimeout(r, 5))
    expect(inodeOf(hostEnd)).not.toBe(hostInode)
    expect(taken).toBe(false)
  })
})
