// The commands of test/escape/network/allow-list/second-pass.test.ts: each attack and its control,
// as the confined command runs them (bash, printf, python3: nothing needs the internet).
import { EXTRA } from './stand-ins.js'

/** A SOCKS5 greeting and CONNECT for domain `name` (bytes as printf escapes) at port 80, then whatever comes back. */
function socksDomain(name: string, length: number): string {
  const len = `\\x${length.toString(16).padStart(2, '0')}`
  return `exec 3<>/dev/tcp/127.0.0.1/3128 && printf '\\x05\\x01\\x00\\x05\\x01\\x00\\x03${len}${name}\\x00\\x50' >&3 && timeout 5 cat <&3 | tr -dc 'a-z\\n'`
}

// The TLS client: CONNECT to tls.test, then a ClientHello naming other.test, whole (argv "whole")
// or split over two TLS records, the first ending before the extensions (argv "split").
const SNI_PY = String.raw`
import socket, ssl, sys
split = sys.argv[1] == 'split'
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT tls.test:443 HTTP/1.1\r\nHost: tls.test:443\r\n\r\n')
buf = b''
while b'\r\n\r\n' not in buf:
    d = s.recv(4096)
    if not d:
        print('closed before the answer'); sys.exit(3)
    buf += d
status = buf.split(b'\r\n')[0].decode()
print(status)
if ' 200 ' not in status:
    sys.exit(4)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
t = ctx.wrap_bio(inc, out, server_hostname='other.test')
try:
    t.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = out.read()
if split:
    ver, body = hello[1:3], hello[5:]
    a, b = body[:40], body[40:]
    hello = b'\x16' + ver + len(a).to_bytes(2, 'big') + a + b'\x16' + ver + len(b).to_bytes(2, 'big') + b
s.sendall(hello)
s.settimeout(5)
def pump():
    o = out.read()
    if o:
        s.sendall(o)
    d = s.recv(65536)
    if not d:
        print('closed'); sys.exit(5)
    inc.write(d)
while True:
    try:
        t.do_handshake(); break
    except ssl.SSLWantReadError:
        pump()
o = out.read()
if o:
    s.sendall(o)
while True:
    try:
        print(t.read(100).decode().strip()); break
    except ssl.SSLWantReadError:
        pump()
`

function sni(how: 'whole' | 'split'): string {
  return `python3 -c "$(cat <<'PY'\n${SNI_PY}\nPY\n)" ${how}`
}

const anywhere = EXTRA.anywhere.address

export const COMMANDS = {
  /** SOCKS5 domain "198.51.100.77\0.allowed.test": the list reads the whole name, the resolver (getaddrinfo) stops at the NUL. */
  nulName: socksDomain(`${anywhere}\\x00.allowed.test`, anywhere.length + 1 + '.allowed.test'.length),
  /** Control: the address the NUL name leads to, asked for as it is. */
  nulControl: socksDomain(anywhere, anywhere.length),
  /** Control: a name under the wildcard, without the trick, is allowed (the stand-in resolver knows it). */
  wildAllowed: socksDomain('pkg.wild.test', 'pkg.wild.test'.length),
  /** CONNECT to tls.test, a ClientHello for other.test in two records. */
  sniSplit: sni('split'),
  /** Control: the same hello in one record is refused. */
  sniWhole: sni('whole'),
  /** CONNECT to a server that speaks first; the client never sends a byte. */
  silentDownload: `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT ${EXTRA.stream.name}:9000 HTTP/1.1\\r\\n\\r\\n' >&3 && timeout 10 cat <&3 | wc -c`,
  /** Control: the same, with one byte sent first. */
  saidDownload: `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT ${EXTRA.stream.name}:9000 HTTP/1.1\\r\\n\\r\\nx' >&3 && timeout 10 cat <&3 | wc -c`,
  /** 1500 connections to the proxy, held for 3 s. */
  flood:
    'n=0; for i in $(seq 1500); do exec {fd}<>/dev/tcp/127.0.0.1/3128 || break; n=$((n+1)); done; echo "$n"; sleep 3',
  /** Control: 10 connections held for 3 s. */
  fewConnections:
    'n=0; for i in $(seq 10); do exec {fd}<>/dev/tcp/127.0.0.1/3128 || break; n=$((n+1)); done; echo "$n"; sleep 3',
  /** Plain HTTP through the proxy to an allowed upstream that answers well. */
  weirdOk: `curl -sS -m 10 http://${EXTRA.weird.name}/ok`,
  /** The same upstream answering "HTTP/1.1 099 Weird". */
  weird099: `curl -sS -m 10 http://${EXTRA.weird.name}/status-099`,
  /** The same upstream answering a reason phrase with a control character. */
  weirdReason: `curl -sS -m 10 http://${EXTRA.weird.name}/reason-ctl`,
  /** After either: the allowed stand-in still answers (the host is alive). */
  afterwards: 'curl -sS -f -m 10 http://allowed.test/hello',
} as const
