import os from 'node:os'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  ABORTED,
  AbortedError,
  CONFIG_INVALID,
  CONFIG_WIDENED,
  ConfigInvalidError,
  ConfigWidenedError,
  isConfigInvalidError,
  isConfigWidenedError,
  CONFINEMENT_STAGES,
  InvalidRequestError,
  isAbortedError,
  isRootChangedError,
  isStateInGrantError,
  ROOT_CHANGED,
  STATE_IN_GRANT,
  StateInGrantError,
  RootChangedError,
  SandboxUnavailableError,
  SpawnError,
  errnoName,
  formatZodIssues,
  isConfinementStage,
  isInvalidRequestError,
  isSandboxUnavailableError,
  isSpawnError,
} from '../../../src/policy/errors.js'
import { CommandAbortedError, isCommandAbortedError } from '../../../src/shell/command-aborted-error.js'
import { isNativeLoadError, NativeLoadError } from '../../../src/subprocess/native.js'

const REFERENCE_PREFIX =
  'sandbox mode "workspace-write" is requested but no sandbox backend is usable on this host; refusing to run the command unconfined.'

describe('SandboxUnavailableError', () => {
  it('carries { name, code } and the mode', () => {
    const error = new SandboxUnavailableError('workspace-write')
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('SandboxUnavailableError')
    expect(error.code).toBe('SANDBOX_UNAVAILABLE')
    expect(error.mode).toBe('workspace-write')
    expect(String(error)).toMatch(/^SandboxUnavailableError: sandbox mode/)
  })

  it('the message names the mode, why, and the remedy including danger-full-access', () => {
    const error = new SandboxUnavailableError('workspace-write')
    expect(error.message.startsWith(REFERENCE_PREFIX)).toBe(true)
    expect(error.message).toContain('bubblewrap')
    expect(error.message).toContain('Landlock')
    expect(error.message).toContain('danger-full-access')
    expect(error.reason).toBe('no sandbox backend is usable on this host')
    expect(error.message.endsWith(error.remedy)).toBe(true)
  })

  it('a runner detail appears as "Runner failure: …"', () => {
    const line = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"
    expect(new SandboxUnavailableError('read-only', line).message.endsWith(` Runner failure: ${line}`)).toBe(true)
    expect(new SandboxUnavailableError('read-only', { detail: line }).detail).toBe(line)
  })

  it('a structured detail is rendered as stage and errno name', () => {
    const error = new SandboxUnavailableError('read-only', {
      detail: { stage: 'landlock', errno: os.constants.errno.EPERM },
    })
    expect(error.message.endsWith(' Runner failure: landlock: EPERM')).toBe(true)
    expect(error.detail).toEqual({ stage: 'landlock', errno: os.constants.errno.EPERM })
  })

  it('takes a custom reason, remedy and cause', () => {
    const cause = new Error('probe failed')
    const error = new SandboxUnavailableError('read-only', {
      reason: 'the Landlock ABI is partial and full enforcement was required',
      remedy: 'Upgrade the kernel.',
      cause,
    })
    expect(error.message).toBe(
      'sandbox mode "read-only" is requested but the Landlock ABI is partial and full enforcement was required; refusing to run the command unconfined. Upgrade the kernel.',
    )
    expect(error.cause).toBe(cause)
  })

  it('the brand check works across realms, where instanceof does not', () => {
    const foreign = vm.runInNewContext(
      'Object.assign(new Error("x"), { name: "SandboxUnavailableError", code: "SANDBOX_UNAVAILABLE", mode: "read-only" })',
    )
    expect(foreign instanceof Error).toBe(false)
    expect(isSandboxUnavailableError(foreign)).toBe(true)
    expect(isSandboxUnavailableError(new SandboxUnavailableError('read-only'))).toBe(true)
    expect(isSandboxUnavailableError(Object.assign(new Error('x'), { code: 'SANDBOX_UNAVAILABLE' }))).toBe(false)
    expect(isSandboxUnavailableError(null)).toBe(false)
    expect(isSandboxUnavailableError('SANDBOX_UNAVAILABLE')).toBe(false)
  })
})

describe('SpawnError', () => {
  it('carries stage, errno and the errno name as code', () => {
    const error = new SpawnError({ stage: 'exec', errno: os.constants.errno.ENOENT, path: '/usr/bin/nope' })
    expect(error.name).toBe('SpawnError')
    expect(error.code).toBe('ENOENT')
    expect(error.stage).toBe('exec')
    expect(error.errno).toBe(os.constants.errno.ENOENT)
    expect(error.path).toBe('/usr/bin/nope')
    expect(error.message).toBe('spawn failed at exec: ENOENT (/usr/bin/nope)')
  })

  it('normalises libuv negative errnos', () => {
    const error = new SpawnError({ stage: 'chdir', errno: -os.constants.errno.EACCES })
    expect(error.errno).toBe(os.constants.errno.EACCES)
    expect(error.code).toBe('EACCES')
  })

  it('the brand check works across realms', () => {
    const foreign = vm.runInNewContext(
      'Object.assign(new Error("x"), { name: "SpawnError", code: "EACCES", stage: "exec", errno: 13 })',
    )
    expect(isSpawnError(foreign)).toBe(true)
    expect(isSpawnError(new SpawnError({ stage: 'dup2', errno: 9 }))).toBe(true)
    expect(isSpawnError(Object.assign(new Error('spawn bash ENOENT'), { code: 'ENOENT', errno: -2 }))).toBe(false)
    expect(isSpawnError(new SandboxUnavailableError('read-only'))).toBe(false)
  })

  it("confinement stages are the runner's, chdir and exec are the command's", () => {
    expect([...CONFINEMENT_STAGES]).toEqual([
      'launcher',
      'namespace',
      'cgroup',
      'rlimit',
      'caps',
      'credentials',
      'no_new_privs',
      'landlock',
      'seccomp',
    ])
    for (const s of CONFINEMENT_STAGES) expect(isConfinementStage(s)).toBe(true)
    for (const s of ['chdir', 'exec', 'dup2', 'clone', 'pipe']) expect(isConfinementStage(s)).toBe(false)
  })
})

describe('errnoName', () => {
  it('names errnos from os.constants.errno', () => {
    expect(errnoName(os.constants.errno.ENOENT)).toBe('ENOENT')
    expect(errnoName(os.constants.errno.EACCES)).toBe('EACCES')
    expect(errnoName(os.constants.errno.ENOEXEC)).toBe('ENOEXEC')
    expect(errnoName(-os.constants.errno.EPERM)).toBe('EPERM')
  })

  it('an unknown errno is EUNKNOWN', () => {
    expect(errnoName(0)).toBe('EUNKNOWN')
    expect(errnoName(99999)).toBe('EUNKNOWN')
  })

  it('every errno constant maps back to a name with the same value', () => {
    for (const value of Object.values(os.constants.errno)) {
      expect(os.constants.errno[errnoName(value) as keyof typeof os.constants.errno]).toBe(value)
    }
  })
})

describe('InvalidRequestError', () => {
  it('lists every zod issue with its field', () => {
    const schema = z.object({ a: z.string(), b: z.object({ c: z.number() }), d: z.array(z.boolean()) })
    const result = schema.safeParse({ a: 1, b: { c: 'x' }, d: [true, 'no'] })
    expect(result.success).toBe(false)
    const error = InvalidRequestError.fromZod(result.error!, 'bad input')
    expect(error.name).toBe('InvalidRequestError')
    expect(error.code).toBe('INVALID_REQUEST')
    expect(error.issues.map((i) => i.split(':')[0])).toEqual(['a', 'b.c', 'd[1]'])
    expect(error.message.startsWith('bad input: a: ')).toBe(true)
    expect(error.cause).toBe(result.error)
    expect(formatZodIssues(result.error!)).toEqual([...error.issues])
  })

  it('a root-level issue is labelled (root)', () => {
    const result = z.string().safeParse(3)
    expect(formatZodIssues(result.error!)[0]).toMatch(/^\(root\): /)
  })

  it('the brand check works across realms', () => {
    const foreign = vm.runInNewContext(
      'Object.assign(new Error("x"), { name: "InvalidRequestError", code: "INVALID_REQUEST", issues: [] })',
    )
    expect(isInvalidRequestError(foreign)).toBe(true)
    expect(isInvalidRequestError(new InvalidRequestError(['x: y']))).toBe(true)
    expect(isInvalidRequestError(new Error('x'))).toBe(false)
  })
})

describe('AbortedError', () => {
  it('is the one "aborted before spawn": code ABORTED, the reason kept as given and as cause', () => {
    const reason = new Error('user stop')
    const error = new AbortedError(reason)
    expect(error).toMatchObject({ name: 'AbortedError', code: 'ABORTED', message: 'aborted before spawn: user stop' })
    expect(error.reason).toBe(reason)
    expect(error.cause).toBe(reason)
    expect(new AbortedError(undefined).message).toBe('aborted before spawn: aborted')
    expect(new AbortedError('stop').message).toBe('aborted before spawn: stop')
  })

  it("the shell's CommandAbortedError is one, under its own name and brand", () => {
    const error = new CommandAbortedError('stop')
    expect(error).toBeInstanceOf(AbortedError)
    expect(error).toMatchObject({ name: 'CommandAbortedError', code: ABORTED, message: 'aborted before spawn: stop' })
    expect(isAbortedError(error)).toBe(true)
    expect(isCommandAbortedError(error)).toBe(true)
    expect(isCommandAbortedError(new AbortedError('stop'))).toBe(false)
  })

  it('the brand check works across realms', () => {
    const foreign = vm.runInNewContext('Object.assign(new Error("x"), { name: "AbortedError", code: "ABORTED" })')
    expect(isAbortedError(foreign)).toBe(true)
    expect(isAbortedError(Object.assign(new Error('x'), { name: 'AbortedError', code: 'OTHER' }))).toBe(false)
    expect(isAbortedError(new Error('aborted before spawn: x'))).toBe(false)
  })
})

describe('StateInGrantError', () => {
  it('names the root, what of cordon lies in it and why; a cross-realm brand', () => {
    const e = new StateInGrantError('/h/.cache', '/h/.cache/cordon', 'it is private')
    expect(e).toMatchObject({ name: 'StateInGrantError', code: STATE_IN_GRANT, root: '/h/.cache' })
    expect(e.message).toMatch(/\/h\/\.cache holds \/h\/\.cache\/cordon: it is private; nothing was run/)
    expect(isStateInGrantError(vm.runInNewContext('({ name: "StateInGrantError", code: "STATE_IN_GRANT" })'))).toBe(
      true,
    )
    expect(isStateInGrantError(new Error('x'))).toBe(false)
  })
})

describe('RootChangedError and NativeLoadError', () => {
  it('carry a code and a cross-realm brand', () => {
    const root = new RootChangedError('/work', 's1')
    expect(root).toMatchObject({ name: 'RootChangedError', code: ROOT_CHANGED, path: '/work', sessionId: 's1' })
    expect(isRootChangedError(root)).toBe(true)
    const load = new NativeLoadError(['/a/cordon.node'], new Error('ENOENT'))
    expect(load).toMatchObject({ name: 'NativeLoadError', code: 'CORDON_NATIVE_MISSING', tried: ['/a/cordon.node'] })
    expect(load.message).toContain('/a/cordon.node')
    expect(isNativeLoadError(load)).toBe(true)
    const foreign = vm.runInNewContext(
      'Object.assign(new Error("x"), { name: "NativeLoadError", code: "CORDON_NATIVE_MISSING", tried: [] })',
    )
    expect(isNativeLoadError(foreign)).toBe(true)
    expect(isNativeLoadError(new Error('x'))).toBe(false)
  })
})

describe('ConfigInvalidError and ConfigWidenedError', () => {
  it('name the file and each field, say nothing ran, and brand across realms', () => {
    const invalid = new ConfigInvalidError('/w/.cordon.json', ['mode: expected one of …, got "x"'])
    expect(invalid).toMatchObject({
      code: CONFIG_INVALID,
      file: '/w/.cordon.json',
      issues: ['mode: expected one of …, got "x"'],
    })
    expect(invalid.message).toBe('invalid config "/w/.cordon.json": mode: expected one of …, got "x"; nothing was run')
    expect(new ConfigInvalidError('/f', []).issues).toEqual(['(file): unreadable'])
    const widened = new ConfigWidenedError(
      '/w/.cordon.json',
      [{ field: 'network', was: '"deny"', is: '"inherit"' }],
      'record',
      'Do X.',
    )
    expect(widened).toMatchObject({ code: CONFIG_WIDENED, against: 'record', remedy: 'Do X.' })
    expect(widened.message).toContain('network: was "deny", is "inherit"; nothing was run. Do X.')
    const layers = new ConfigWidenedError(
      '/p',
      [{ field: 'mode', was: '"read-only"', is: '"workspace-write"' }],
      'layers',
      'Y.',
    )
    expect(layers.message).toContain('mode: at most "read-only", is "workspace-write"')
    expect(isConfigInvalidError(vm.runInNewContext('({ name: "ConfigInvalidError", code: "CONFIG_INVALID" })'))).toBe(
      true,
    )
    expect(isConfigWidenedError(vm.runInNewContext('({ name: "ConfigWidenedError", code: "CONFIG_WIDENED" })'))).toBe(
      true,
    )
    expect(isConfigWidenedError(invalid)).toBe(false)
  })
})
