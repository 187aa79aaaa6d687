// A resident instance's argv and request, pinned: what the instance's init keeps, what each run's
// supervisor applies to itself, what a request still carries, and one instance per plan.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { landlockHost } from '../../../../src/sandbox/confinement/host.js'
import { bubblewrapPlan } from '../../../../src/sandbox/bubblewrap/plan.js'
import { wrapperAsOwner } from '../../../../src/sandbox/confinement/run-as.js'
import { residentEligible, residentInstance } from '../../../../src/sandbox/bubblewrap/resident.js'
import { loadNative } from '../../../../src/subprocess/native.js'
import { scratchDir } from '../../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-resident'))
const root = path.join(base, 'root')
const temp = path.join(base, 'tmp')
for (const d of [root, temp]) fs.mkdirSync(d)
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const tools = { bwrap: '/usr/bin/bwrap', helper: '/opt/cordon-exec' }
const command = { path: '/usr/bin/bash', argv: ['bash', '-c', 'true'] }
const host = landlockHost(loadNative(), { abi: 7, seccomp: true, supervisor: true, namespaces: true })

function planFor(network: 'deny' | 'inherit', setuid = false) {
  const policy = { mode: 'workspace-write' as const, workspaceRoot: root, network }
  return bubblewrapPlan(policy, grantsFor(policy, { tempDir: temp }), host, { setuid, hostDevpts: 1234 })
}

/** The args after `flag`'s first occurrence, up to the next `--flag`. */
const valueAfter = (argv: readonly string[], flag: string) => argv[argv.indexOf(flag) + 1]

describe('residentInstance', () => {
  const plan = planFor('deny')
  const instance = residentInstance(plan, tools, command)
  const argv = instance.argv
  const inner = argv.slice(argv.indexOf('--') + 1)

  it('keeps the capabilities the init needs and nothing bwrap would nest a user namespace for', () => {
    expect(argv.slice(argv.indexOf('--cap-drop'), argv.indexOf('--ro-bind'))).toEqual([
      '--cap-drop',
      'ALL',
      ...['CAP_SYS_ADMIN', 'CAP_NET_ADMIN', 'CAP_SETPCAP', 'CAP_SYS_RESOURCE'].flatMap((c) => ['--cap-add', c]),
    ])
    expect(argv).toContain('--unshare-user')
    expect(argv).not.toContain('--disable-userns') // the init locks user namespaces itself
    expect(argv).not.toContain('--dev') // its devpts would need a nested user namespace
    expect(valueAfter(argv, '--tmpfs')).toBe('/dev')
    expect(argv.join(' ')).toContain('--dev-bind /dev/null /dev/null')
    expect(argv.join(' ')).toContain('--symlink pts/ptmx /dev/ptmx')
  })

  it('has no cwd, temp dir or status of its own: each request brings them', () => {
    for (const flag of ['--chdir', '--setenv', '--json-status-fd'])
      expect(argv.slice(0, argv.indexOf('--'))).not.toContain(flag)
  })

  it('runs cordon-exec instance with the template every run applies', () => {
    expect(inner.slice(0, 4)).toEqual([tools.helper, 'instance', '--control-fd', '3'])
    expect(inner).toContain('--no-new-privs')
    expect(inner).toContain('--unshare-net')
    expect(valueAfter(inner, '--landlock')).toMatch(/^[0-9a-f]+:0:[0-9a-f]+:\d+$/)
    expect(inner.filter((a) => a === '--rule').length).toBeGreaterThan(0)
    expect(valueAfter(inner, '--rule-devpts')).toMatch(/:1234$/)
    expect(valueAfter(inner, '--seccomp-hex')).toBe(plan.steps.filter?.toString('hex'))
  })

  it('lets a request carry only what the supervisor did not apply to itself', () => {
    expect(instance.steps).toMatchObject({ dropCaps: true, dropBounding: false, noNewPrivs: false })
    expect(instance.steps.filter).toBeUndefined()
    expect(instance.command).toEqual(command)
    expect(instance.wrapperSteps).toBe(plan.wrapperSteps)
  })

  it('names one instance per plan, the same for every run of it', () => {
    expect(residentInstance(plan, tools, command).key).toBe(instance.key)
    expect(residentInstance(planFor('deny'), tools, command).key).not.toBe(instance.key)
  })

  it('leaves the network namespace alone when the network is not denied', () => {
    const open = residentInstance(planFor('inherit'), tools, command).argv
    expect(open).not.toContain('--unshare-net')
  })

  it('is not offered with a setuid bwrap (it keeps no capability for an init)', () => {
    expect(residentEligible(plan)).toBe(true)
    expect(residentEligible(planFor('deny', true))).toBe(false)
    // Run as the workspace's owner, a setuid bwrap gets credentials but still no no_new_privs.
    const owner = { uid: 1000, gid: 1000, name: 'owner', home: '/home/owner' }
    expect(residentEligible(wrapperAsOwner(planFor('deny', true), owner))).toBe(false)
    expect(residentEligible(wrapperAsOwner(plan, owner))).toBe(true)
  })
})
