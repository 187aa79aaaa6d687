// The upstreams of test/escape/network/allow-list/proxy-host.ts, by name, and the
// (documentation) address each stands at: shared by the host and its test.

export const EXTRA = {
  /** An address the list never names: reaching it is an escape from the list. */
  anywhere: { address: '198.51.100.77' },
  /** An HTTP server answering /status-099 and /reason-ctl with status lines node's client parses but its server refuses to write. */
  weird: { name: 'weird.test', address: '198.51.100.20' },
  /** Speaks first: STREAM_BYTES unasked, then ends. */
  stream: { name: 'stream.test', address: '198.51.100.21' },
  /** A TLS server that records the server name each handshake asked for. */
  tls: { name: 'tls.test', address: '198.51.100.22' },
} as const

/** How many bytes stream.test sends, unasked, on each connection. */
export const STREAM_BYTES = 4 * 1024 * 1024
