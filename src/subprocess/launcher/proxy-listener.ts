/**
 * How a network allow-list's listener reaches the host when no launcher reply can carry it (a
 * bwrap per run, a terminal under node-pty): the run's supervisor sends it over a socket pair
 * whose child end it inherited (`--proxy-listener PORT:FD`), before its command starts; the host
 * polls its end until the listener or the end of the pair comes.
 */
import { SpawnError } from '../../policy/errors.js'
import { loadNative } from '../native.js'

/** The argv word a terminal's `--proxy-listener PORT:` carries until the spawn names the fd. */
export const PROXY_FD_PLACEHOLDER = '@proxy'

const ETIMEDOUT = 110
const LISTENER_POLL_MS = 2

/** A socket pair for one run's listener: [host end, child end], both close-on-exec. */
export function proxySocket(): [number, number] {
  const pair = loadNative().socketPair()
  if (typeof pair === 'number') throw new SpawnError({ stage: 'pipe', errno: -pair })
  return pair
}

/** Hands `take` the listener once it arrives on `hostEnd`, polled (it comes as the run starts); closes `hostEnd` either way. */
export function awaitListener(hostEnd: number, take: (fd: number) => void): void {
  const native = loadNative()
  const answer = native.launcherReceive(hostEnd, 1, 0)
  if (answer === -ETIMEDOUT) {
    setTimeout(() => awaitListener(hostEnd, take), LISTENER_POLL_MS).unref()
    return
  }
  native.closeFd(hostEnd)
  if (typeof answer === 'number') return // the run ended before its supervisor made one
  const [listener, ...rest] = answer.fds
  for (const fd of rest) native.closeFd(fd)
  if (listener !== undefined) take(listener)
}
