/**
 * The host side of a network allow-list: a confined command's only way out is a loopback
 * listener inside its namespace, handed to the host as a descriptor; this proxy accepts on it
 * and forwards what the list allows (SOCKS5 and HTTP on the one listener, told apart by the
 * first byte), recording each run's facts. One proxy per sandbox, one `attach` per run.
 */
import { createServer, type Server as NetServer, type Socket } from 'node:net'
import { compileAllowList } from '../../policy/network/allow-list.js'
import type { NetworkFacts } from '../../policy/network/facts.js'
import type { NetworkAllowList } from '../../policy/vocabulary.js'
import { type Connector, type Resolver, type RunScope, systemConnect, systemResolve } from './destination.js'
import { FactLedger } from './fact-ledger.js'
import { createHttpFront } from './http-forward.js'
import { serveSocks5 } from './socks5.js'

export type { NetworkFacts } from '../../policy/network/facts.js'

export interface NetworkProxyOptions {
  /** Tests only: resolves a name instead of the host's resolver (dns.lookup all:true). */
  resolve?: Resolver
  /** Tests only: opens the TCP connection to a checked address (a stand-in address mapped to a loopback server). */
  connect?: Connector
  /** Tests only: how long a client may stay silent before its request (default 30 s). */
  idleMs?: number
}

export interface ProxiedRun {
  /** The facts so far. */
  facts(): NetworkFacts
  /** Stops accepting, destroys this run's connections, closes the listener; the final facts. */
  finish(): NetworkFacts
}

const DEFAULT_IDLE_MS = 30_000
const SOCKS_VERSION = 0x05
/**
 * Client connections one run may hold open, and all runs of a proxy together: each costs the host
 * a descriptor (two with its upstream), and the host's descriptor limit is shared with every other
 * run and the harness itself. A connection past the cap is closed at once.
 */
export const MAX_CLIENTS_PER_RUN = 256
export const MAX_CLIENTS_PER_PROXY = 2048

/** One attached run: its listener, its sockets and its facts. */
class Run implements ProxiedRun {
  private readonly ledger = new FactLedger()
  private readonly sockets = new Set<Socket>()
  private clients = 0
  private done = false
  private final: NetworkFacts | undefined
  readonly closed: Promise<void>

  constructor(
    private readonly listener: NetServer,
    list: NetworkAllowList,
    options: NetworkProxyOptions,
    private readonly onFinish: (run: Run) => void,
    /** Takes one of the proxy's client places (false: none left); `release` gives it back. */
    private readonly places: { take(): boolean; release(): void },
  ) {
    const idleMs = options.idleMs ?? DEFAULT_IDLE_MS
    const scope: RunScope = {
      list: compileAllowList(list),
      ledger: this.ledger,
      resolve: options.resolve ?? systemResolve,
      connect: options.connect ?? systemConnect,
      track: (socket) => this.track(socket),
      finished: () => this.done,
    }
    const http = createHttpFront(scope, idleMs)
    this.closed = new Promise((resolve) => listener.once('close', () => resolve()))
    listener.on('error', () => {
      // A listener failure (say, an accept error) ends nothing else: the run's end closes it.
    })
    listener.on('connection', (client: Socket) => {
      if (this.done || this.clients >= MAX_CLIENTS_PER_RUN || !this.places.take()) return void client.destroy()
      this.clients++
      client.once('close', () => {
        this.clients--
        this.places.release()
      })
      this.track(client)
      // A client that ends its sending still gets its answer (a tunnel ends each way on its own).
      client.allowHalfOpen = true
      client.setTimeout(idleMs)
      // A client that ends before saying anything is owed nothing.
      const onSilentEnd = () => client.destroy()
      client.once('end', onSilentEnd)
      client.once('data', (first: Buffer) => {
        client.removeListener('end', onSilentEnd)
        if (first[0] === SOCKS_VERSION) return serveSocks5(scope, client, first, idleMs)
        // HTTP: hand the socket, first bytes put back, to the HTTP server.
        // The server's parser reads new bytes from the handle itself; resuming delivers the
        // put-back bytes through its 'data' listener first (it does not resume a paused socket).
        client.pause()
        client.unshift(first)
        http.emit('connection', client)
        client.resume()
      })
    })
  }

  /** Keeps `socket` until it closes, with the error handler every socket needs (a reset must never crash the host). */
  private track(socket: Socket): void {
    if (this.sockets.has(socket)) return
    this.sockets.add(socket)
    socket.on('error', () => socket.destroy())
    socket.once('timeout', () => socket.destroy())
    socket.once('close', () => this.sockets.delete(socket))
    if (this.done) socket.destroy()
  }

  facts(): NetworkFacts {
    return this.final ?? this.ledger.snapshot()
  }

  finish(): NetworkFacts {
    if (this.final) return this.final
    this.done = true
    this.listener.close()
    for (const socket of this.sockets) socket.destroy()
    // Counted after the sockets are destroyed, so the last bytes are in.
    this.final = this.ledger.snapshot()
    this.onFinish(this)
    return this.final
  }
}

/** The host's proxy for one sandbox's allow-list runs. */
export class NetworkProxy {
  private readonly runs = new Set<Run>()
  private clients = 0
  private readonly places = {
    take: () => this.clients < MAX_CLIENTS_PER_PROXY && ++this.clients > 0,
    release: () => {
      this.clients--
    },
  }

  constructor(private readonly options: NetworkProxyOptions = {}) {}

  /** Serves one run's listener under `list`: `listener` is a listening TCP socket's fd (the proxy owns and closes it) or a net.Server already listening (tests). */
  attach(listener: number | NetServer, list: NetworkAllowList): ProxiedRun {
    const server = typeof listener === 'number' ? listenOnDescriptor(listener) : listener
    const run = new Run(server, list, this.options, (r) => this.runs.delete(r), this.places)
    this.runs.add(run)
    return run
  }

  /** Ends every run's connections and listeners; resolves once the listeners are closed. */
  async close(): Promise<void> {
    const closing = [...this.runs].map((run) => {
      run.finish()
      return run.closed
    })
    await Promise.all(closing)
  }
}

/** A server accepting on the listening socket `fd` (half-open: a client that ends its sending still gets its answer). */
function listenOnDescriptor(fd: number): NetServer {
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: false })
  server.listen({ fd })
  return server
}
