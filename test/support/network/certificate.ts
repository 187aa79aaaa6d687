/** A self-signed TLS certificate for test servers, made with the real openssl. */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** A self-signed certificate (and its key) for `names`, the first one its common name. */
export async function selfSignedCert(names: readonly string[]): Promise<{ key: Buffer; cert: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), 'cordon-test-cert-'))
  try {
    const san = names.map((n) => `DNS:${n}`).join(',')
    const key = join(dir, 'key.pem')
    const cert = join(dir, 'cert.pem')
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${names[0]}`,
      '-addext',
      `subjectAltName=${san}`,
      '-keyout',
      key,
      '-out',
      cert,
    ])
    return { key: readFileSync(key), cert: readFileSync(cert) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
