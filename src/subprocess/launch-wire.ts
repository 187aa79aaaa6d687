/**
 * The launcher's wire format, the TypeScript half (native/launch-spec.cc and native/zygote.cc
 * are the other). One request per run: a header `{u32 magic "CLN1", u32 body length}` that
 * carries the request's descriptors (SCM_RIGHTS: the `fd` stdio slots in order, then the Landlock
 * ruleset), then a body of fields `{u16 tag, u16 0, u32 length, bytes}`, little-endian. The reply
 * is a fixed 32-byte record `{u32 magic "CLR1", i32 errno, char stage[16], i32 supervisor pid,
 * i32 command pid}` carrying the supervisor's pidfd, the status pipe and the host ends of the
 * stdio pipes. Pure functions: nothing here touches a descriptor.
 */

/** How one stdio slot of the command is wired by the launcher. */
export type WireStdio = 'null' | 'pipe' | 'fd'

/** A run as the launcher needs it. */
export interface LaunchRequest {
  /** Absolute program path (PATH was searched already). */
  path: string
  argv: readonly string[]
  env: readonly string[]
  cwd?: string | undefined
  stdio: readonly [WireStdio, WireStdio, WireStdio]
  /** Stay until the tree is empty (background) instead of ending it when the command exits. */
  background: boolean
  graceMs: number
  /** The command's own confinement (absent: an unconfined, supervised run). */
  confinement?: WireConfinement | undefined
}

/** The steps the command applies to itself before exec. */
export interface WireConfinement {
  dropCaps: boolean
  dropBounding: boolean
  capLast: number
  noNewPrivs: boolean
  /** A ruleset fd rides along (the caller passes it after the stdio fds). */
  ruleset: boolean
  landlockFlags: number
  filter?: Buffer | undefined
  credentials?: { uid: number; gid: number } | undefined
  rlimits: ReadonlyArray<{ resource: number; soft: number; hard: number }>
  unshareIpc: boolean
  unshareNet: boolean
  unshareUser: boolean
}

/** The decoded reply. */
export type LaunchReply =
  | { ok: true; supervisorPid: number; commandPid: number }
  | { ok: false; errno: number; stage: string; supervisorPid: number }

/** Size of a reply record. */
export const REPLY_BYTES = 32

const REQUEST_MAGIC = 0x314e4c43
const REPLY_MAGIC = 0x31524c43

const TAG = {
  path: 1,
  argv: 2,
  env: 3,
  cwd: 4,
  stdio: 5,
  flags: 6,
  graceMs: 7,
  capLast: 8,
  landlockFlags: 9,
  filter: 10,
  credentials: 11,
  rlimit: 12,
} as const

const FLAG = {
  background: 1 << 0,
  dropCaps: 1 << 1,
  dropBounding: 1 << 2,
  noNewPrivs: 1 << 3,
  unshareIpc: 1 << 4,
  unshareNet: 1 << 5,
  unshareUser: 1 << 6,
  rulesetFd: 1 << 7,
  confined: 1 << 8,
} as const

const STDIO_CODE: Readonly<Record<WireStdio, number>> = { null: 0, pipe: 1, fd: 2 }

/** The largest soft/hard limit the wire carries exactly (RLIM_INFINITY is sent as 2^64-1). */
export const RLIM_INFINITY = Number.MAX_SAFE_INTEGER

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4)
  b.writeUInt32LE(n >>> 0, 0)
  return b
}

function u64(n: number): Buffer {
  const b = Buffer.allocUnsafe(8)
  b.writeBigUInt64LE(n >= RLIM_INFINITY ? 0xffffffffffffffffn : BigInt(Math.max(0, Math.floor(n))), 0)
  return b
}

function strings(list: readonly string[]): Buffer {
  return Buffer.from(list.map((s) => `${s}\0`).join(''), 'utf8')
}

/** Encodes one request: header and body, ready for `launcherCall`. */
export function encodeLaunchRequest(request: LaunchRequest): Buffer {
  const fields: Buffer[] = []
  const field = (tag: number, data: Buffer) => {
    const head = Buffer.alloc(8)
    head.writeUInt16LE(tag, 0)
    head.writeUInt32LE(data.length, 4)
    fields.push(head, data)
  }
  const c = request.confinement
  let flags = request.background ? FLAG.background : 0
  if (c) {
    flags |= FLAG.confined
    if (c.dropCaps) flags |= FLAG.dropCaps
    if (c.dropBounding) flags |= FLAG.dropBounding
    if (c.noNewPrivs) flags |= FLAG.noNewPrivs
    if (c.unshareIpc) flags |= FLAG.unshareIpc
    if (c.unshareNet) flags |= FLAG.unshareNet
    if (c.unshareUser) flags |= FLAG.unshareUser
    if (c.ruleset) flags |= FLAG.rulesetFd
  }
  field(TAG.path, Buffer.from(request.path, 'utf8'))
  field(TAG.argv, strings(request.argv))
  field(TAG.env, strings(request.env))
  if (request.cwd !== undefined) field(TAG.cwd, Buffer.from(request.cwd, 'utf8'))
  field(TAG.stdio, Buffer.from(request.stdio.map((s) => STDIO_CODE[s])))
  field(TAG.flags, u32(flags))
  field(TAG.graceMs, u32(Math.min(Math.ceil(request.graceMs), 0xffffffff)))
  if (c) {
    field(TAG.capLast, u32(c.capLast))
    field(TAG.landlockFlags, u32(c.landlockFlags))
    if (c.filter) field(TAG.filter, c.filter)
    if (c.credentials) field(TAG.credentials, Buffer.concat([u32(c.credentials.uid), u32(c.credentials.gid)]))
    for (const l of c.rlimits) field(TAG.rlimit, Buffer.concat([u32(l.resource), u64(l.soft), u64(l.hard)]))
  }
  const body = Buffer.concat(fields)
  return Buffer.concat([u32(REQUEST_MAGIC), u32(body.length), body])
}

/** Decodes a reply record (a malformed one reads as a launcher failure). */
export function decodeLaunchReply(reply: Buffer): LaunchReply {
  if (reply.length < REPLY_BYTES || reply.readUInt32LE(0) !== REPLY_MAGIC) {
    return { ok: false, errno: 71 /* EPROTO */, stage: 'launcher', supervisorPid: -1 }
  }
  const errno = reply.readInt32LE(4)
  const stage = reply.subarray(8, 24).toString('latin1').replace(/\0.*$/s, '')
  const supervisorPid = reply.readInt32LE(24)
  const commandPid = reply.readInt32LE(28)
  if (errno !== 0) return { ok: false, errno, stage: stage || 'launcher', supervisorPid }
  return { ok: true, supervisorPid, commandPid }
}
