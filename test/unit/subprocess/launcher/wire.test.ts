import { describe, expect, it } from 'vitest'
import {
  decodeLaunchReply,
  encodeLaunchRequest,
  type LaunchRequest,
  REPLY_BYTES,
  type WireConfinement,
} from '../../../../src/subprocess/launcher/wire.js'

/** The request's fields as `tag → bodies` (a tag may repeat), after checking the header. */
function fieldsOf(request: Buffer): Map<number, Buffer[]> {
  expect(request.readUInt32LE(0)).toBe(0x314e4c43)
  expect(request.readUInt32LE(4)).toBe(request.length - 8)
  const fields = new Map<number, Buffer[]>()
  let at = 8
  while (at < request.length) {
    const tag = request.readUInt16LE(at)
    expect(request.readUInt16LE(at + 2)).toBe(0)
    const length = request.readUInt32LE(at + 4)
    fields.set(tag, [...(fields.get(tag) ?? []), request.subarray(at + 8, at + 8 + length)])
    at += 8 + length
  }
  expect(at).toBe(request.length)
  return fields
}

const base: LaunchRequest = {
  path: '/bin/true',
  argv: ['true'],
  env: ['A=1'],
  cwd: '/w',
  stdio: ['null', 'fd', 'fd'],
  background: false,
  graceMs: 1000,
}
const confinement: WireConfinement = {
  dropCaps: true,
  dropBounding: true,
  capLast: 40,
  noNewPrivs: true,
  ruleset: true,
  landlockFlags: 0,
  rlimits: [],
  unshareIpc: true,
  unshareNet: false,
  unshareUser: false,
}

describe('encodeLaunchRequest', () => {
  it('writes every field once, sized exactly (the buffer is sized in advance)', () => {
    const fields = fieldsOf(encodeLaunchRequest(base))
    expect(fields.get(1)?.[0]?.toString()).toBe('/bin/true')
    expect(fields.get(2)?.[0]?.toString()).toBe('true\0')
    expect(fields.get(4)?.[0]?.toString()).toBe('/w')
    expect([...(fields.get(5)?.[0] ?? [])]).toEqual([0, 2, 2])
  })

  it("carries a read-only view's writable paths NUL-packed under tag 14, and nothing without one", () => {
    const withView = fieldsOf(
      encodeLaunchRequest({ ...base, confinement: { ...confinement, readOnlyView: ['/tmp/s', '/tmp/s/ü'] } }),
    )
    expect(withView.get(14)?.[0]?.toString('utf8')).toBe('/tmp/s\0/tmp/s/ü\0')
    const empty = fieldsOf(encodeLaunchRequest({ ...base, confinement: { ...confinement, readOnlyView: [] } }))
    expect(empty.get(14)?.[0]?.length).toBe(0)
    expect(fieldsOf(encodeLaunchRequest({ ...base, confinement })).has(14)).toBe(false)
  })

  it('carries the proxy port and rlimits at their sizes', () => {
    const fields = fieldsOf(
      encodeLaunchRequest({
        ...base,
        confinement: { ...confinement, proxyPort: 3128, rlimits: [{ resource: 4, soft: 0, hard: 0 }] },
      }),
    )
    expect(fields.get(13)?.[0]?.readUInt32LE(0)).toBe(3128)
    expect(fields.get(12)?.[0]?.length).toBe(20)
  })
})

describe('decodeLaunchReply', () => {
  it('reads a failure and a malformed record as failures', () => {
    const reply = Buffer.alloc(REPLY_BYTES)
    reply.writeUInt32LE(0x31524c43, 0)
    reply.writeInt32LE(13, 4)
    reply.write('landlock', 8, 'latin1')
    reply.writeInt32LE(42, 24)
    expect(decodeLaunchReply(reply)).toEqual({ ok: false, errno: 13, stage: 'landlock', supervisorPid: 42 })
    expect(decodeLaunchReply(Buffer.alloc(4))).toMatchObject({ ok: false, stage: 'launcher' })
  })
})
