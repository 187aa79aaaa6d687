/**
 * The launcher's wire format, the TypeScript half (native/launch-spec.cc and native/zygote.cc
 * are the other). One request per run: a header `{u32 magic "CLN1", u32 body length}` that
 * carries the request's descriptors (SCM_RIGHTS: the `fd` stdio slots in order, then the Landlock
 * ruleset, then the run's cgroup.procs files), then a body of fields `{u16 tag, u16 0, u32 length, bytes}`, little-endian. The reply
 * is a fixed 32-byte record `{u32 magic "CLR1", i32 errno, char stage[16], i32 supervisor pid,
 * i32 command pid}` carrying the supervisor's pidfd (and a network allow-list's listener), the status pipe and the host ends of the
 * stdio pipes. Pure functions: nothing here touches a descriptor.
 */

/** How one stdio slot of the command is wired: /dev/null, or a descriptor the request carries. */
export type WireStdio = 'null' | 'fd'

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
  /** /proc/keys masked in a mount namespace of the run's own (its view's, or one made for it). */
  maskKeys?: boolean | undefined
  /** A network allow-list: the supervisor listens on 127.0.0.1:proxyPort of the run's namespace and hands the listener over with the reply. */
  proxyPort?: number | undefined
  /** A read-only view of the host: a mount namespace of the run's own, read-only but for these paths. */
  readOnlyView?: readonly string[] | undefined
  /** How many cgroup.procs fds ride after the ruleset (the command joins each before exec). */
  cgroupFds?: number | undefined
  /** The supervisor raises its oom_score_adj to this before it forks (the command inherits it). */
  oomScoreAdj?: number | undefined
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
  proxyPort: 13,
  readOnlyView: 14,
  cgroupFds: 15,
  oomScoreAdj: 16,
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
  statusFd: 1 << 9,
  maskKeys: 1 << 10,
} as const

const STDIO_CODE: Readonly<Record<WireStdio, number>> = { null: 0, fd: 2 }

/** The largest soft/hard limit the wire carries exactly (RLIM_INFINITY is sent as 2^64-1). */
export const RLIM_INFINITY = Number.MAX_SAFE_INTEGER

/** Writes fields into one buffer sized in advance (no per-field allocation: this runs per spawn). */
class FieldWriter {
  private readonly buf: Buffer
  private at = 8

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(8 + size)
  }

  private head(tag: number, length: number): void {
    this.buf.writeUInt16LE(tag, this.at)
    this.buf.writeUInt16LE(0, this.at + 2)
    this.buf.writeUInt32LE(length, this.at + 4)
    this.at += 8
  }

  bytes(tag: number, data: Buffer): void {
    this.head(tag, data.length)
    data.copy(this.buf, this.at)
    this.at += data.length
  }

  text(tag: number, text: string, length: number): void {
    this.head(tag, length)
    this.at += this.buf.write(text, this.at, 'utf8')
  }

  u32(tag: number, ...values: number[]): void {
    this.head(tag, 4 * values.length)
    for (const v of values) {
      this.buf.writeUInt32LE(v >>> 0, this.at)
      this.at += 4
    }
  }

  rlimit(tag: number, resource: number, soft: number, hard: number): void {
    this.head(tag, 20)
    this.buf.writeUInt32LE(resource >>> 0, this.at)
    this.buf.writeBigUInt64LE(limit(soft), this.at + 4)
    this.buf.writeBigUInt64LE(limit(hard), this.at + 12)
    this.at += 20
  }

  /** The request: header `{magic, body length}` and the body written so far. */
  finish(): Buffer {
    this.buf.writeUInt32LE(REQUEST_MAGIC, 0)
    this.buf.writeUInt32LE(this.at - 8, 4)
    return this.buf.subarray(0, this.at)
  }
}

function limit(n: number): bigint {
  return n >= RLIM_INFINITY ? 0xffffffffffffffffn : BigInt(Math.max(0, Math.floor(n)))
}

/** NUL-terminated strings, joined. */
function packed(list: readonly string[]): string {
  let out = ''
  for (const s of list) out += `${s}\0`
  return out
}

/** The flags word of `request`. */
function flagsOf(request: LaunchRequest): number {
  const c = request.confinement
  let flags = FLAG.statusFd | (request.background ? FLAG.background : 0)
  if (!c) return flags
  flags |= FLAG.confined
  if (c.dropCaps) flags |= FLAG.dropCaps
  if (c.dropBounding) flags |= FLAG.dropBounding
  if (c.noNewPrivs) flags |= FLAG.noNewPrivs
  if (c.unshareIpc) flags |= FLAG.unshareIpc
  if (c.unshareNet) flags |= FLAG.unshareNet
  if (c.unshareUser) flags |= FLAG.unshareUser
  if (c.ruleset) flags |= FLAG.rulesetFd
  if (c.maskKeys) flags |= FLAG.maskKeys
  return flags
}

/** The bytes the confinement's fields take (capLast, landlockFlags, filter, credentials, rlimits). */
function confinementSize(c: WireConfinement): number {
  const proxy = c.proxyPort !== undefined ? 12 : 0
  const view = c.readOnlyView !== undefined ? 8 + Buffer.byteLength(packed(c.readOnlyView)) : 0
  const bounds = (c.cgroupFds ? 12 : 0) + (c.oomScoreAdj ? 12 : 0)
  return (
    16 +
    8 +
    (c.filter ? 8 + c.filter.length : 0) +
    (c.credentials ? 16 : 0) +
    c.rlimits.length * 28 +
    proxy +
    view +
    bounds
  )
}

function writeConfinement(w: FieldWriter, c: WireConfinement): void {
  w.u32(TAG.capLast, c.capLast)
  w.u32(TAG.landlockFlags, c.landlockFlags)
  if (c.filter) w.bytes(TAG.filter, c.filter)
  if (c.credentials) w.u32(TAG.credentials, c.credentials.uid, c.credentials.gid)
  for (const l of c.rlimits) w.rlimit(TAG.rlimit, l.resource, l.soft, l.hard)
  if (c.proxyPort !== undefined) w.u32(TAG.proxyPort, c.proxyPort)
  if (c.readOnlyView !== undefined) {
    const view = packed(c.readOnlyView)
    w.text(TAG.readOnlyView, view, Buffer.byteLength(view))
  }
  if (c.cgroupFds) w.u32(TAG.cgroupFds, c.cgroupFds)
  if (c.oomScoreAdj) w.u32(TAG.oomScoreAdj, c.oomScoreAdj)
}

/** Encodes one request: header and body, ready for `launcherSend`. */
export function encodeLaunchRequest(request: LaunchRequest): Buffer {
  const c = request.confinement
  const argv = packed(request.argv)
  const env = packed(request.env)
  const lengths = {
    path: Buffer.byteLength(request.path),
    argv: Buffer.byteLength(argv),
    env: Buffer.byteLength(env),
    cwd: request.cwd === undefined ? 0 : Buffer.byteLength(request.cwd),
  }
  let size = 8 * 6 + lengths.path + lengths.argv + lengths.env + 3 + 4 + 4
  if (request.cwd !== undefined) size += 8 + lengths.cwd
  if (c) size += confinementSize(c)
  const w = new FieldWriter(size)
  w.text(TAG.path, request.path, lengths.path)
  w.text(TAG.argv, argv, lengths.argv)
  w.text(TAG.env, env, lengths.env)
  if (request.cwd !== undefined) w.text(TAG.cwd, request.cwd, lengths.cwd)
  w.bytes(TAG.stdio, Buffer.from(request.stdio.map((s) => STDIO_CODE[s])))
  w.u32(TAG.flags, flagsOf(request))
  w.u32(TAG.graceMs, Math.min(Math.ceil(request.graceMs), 0xffffffff))
  if (c) writeConfinement(w, c)
  return w.finish()
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
