// Controls: the same attack scripts, run UNCONFINED against the same kind of host listener, must
// succeed. Otherwise a contained-looking result would prove nothing (a test that cannot fail).
import { spawn, spawnSync } from 'node:child_process'
import { expect, it } from 'vitest'
import { ATTACKS } from './attacks.js'
import { ABSTRACT_LISTENER } from './harness.js'

it('control: the host abstract socket attack connects when run unconfined', async () => {
  const attack = ATTACKS.find((a) => a.name === 'a host abstract unix socket')!
  const name = `cordon-control-${process.pid}`
  const listener = spawn('python3', ['-u', '-c', ABSTRACT_LISTENER, name], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  await new Promise<void>((resolve) => {
    listener.stdout!.setEncoding('utf8').on('data', (t: string) => {
      out += t
      if (out.includes('ready')) resolve()
    })
  })
  const r = spawnSync('bash', ['-c', attack.script], {
    env: { ...process.env, ABSTRACT: name, PY: '/usr/bin/python3' },
    encoding: 'utf8',
    timeout: 20_000,
  })
  listener.stdin!.end()
  await new Promise((resolve) => listener.on('exit', resolve))
  expect(r.stdout).toContain('BREACH')
  expect(out).toContain('accepted')
})
