import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalPath, resolvePolicy } from '../../../src/policy/resolve.js'
import { invalid } from '../../support/invalid.js'

let base: string // canonical temp dir holding the fixtures
beforeAll(() => {
  base = fs.realpathSync.native(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-resolve-')))
  fs.mkdirSync(path.join(base, 'a/b/c'), { recursive: true })
  fs.mkdirSync(path.join(base, 'x/y'), { recursive: true })
  fs.writeFileSync(path.join(base, 'file'), '')
  fs.symlinkSync(path.join(base, 'a/b/c'), path.join(base, 'link-c')) // absolute link, two levels deep
  fs.symlinkSync('x/y', path.join(base, 'link-y')) // relative link
  fs.symlinkSync('link-c', path.join(base, 'link-link')) // link to a link
  fs.symlinkSync('nowhere', path.join(base, 'dangling'))
})
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

describe('resolvePolicy: mode precedence', () => {
  it('defaults to read-only with the cwd as root', () => {
    expect(resolvePolicy({ cwd: base })).toEqual({ mode: 'read-only', workspaceRoot: base })
  })

  it('a configured default mode applies', () => {
    expect(resolvePolicy({ cwd: base, defaultMode: 'workspace-write' }).mode).toBe('workspace-write')
  })

  it('the session mode wins over the default', () => {
    expect(resolvePolicy({ cwd: base, defaultMode: 'workspace-write', sessionMode: 'read-only' }).mode).toBe(
      'read-only',
    )
  })

  it('an approved mode outranks the session mode but keeps the root and session id', () => {
    const baseline = resolvePolicy({ cwd: base, sessionMode: 'read-only', sessionId: 's1' })
    const approved = resolvePolicy({
      cwd: base,
      sessionMode: 'read-only',
      sessionId: 's1',
      approvedMode: 'danger-full-access',
    })
    expect(approved).toEqual({ ...baseline, mode: 'danger-full-access' })
  })

  it('an agentless call carries no session id', () => {
    expect(resolvePolicy({ cwd: base })).not.toHaveProperty('sessionId')
    expect(resolvePolicy({ cwd: base, sessionId: 'abc' }).sessionId).toBe('abc')
  })

  it('an unknown mode is an error naming the field', () => {
    const error = invalid(() => resolvePolicy({ cwd: base, sessionMode: 'full-access' as never }))
    expect(error.code).toBe('INVALID_REQUEST')
    expect(error.issues).toHaveLength(1)
    expect(error.issues[0]).toMatch(/^sessionMode: unknown sandbox mode "full-access"/)
    expect(error.message).toContain('read-only, workspace-write, danger-full-access')
  })

  it('lists every problem at once', () => {
    const error = invalid(() =>
      resolvePolicy({ cwd: 'rel', defaultMode: 'x' as never, approvedMode: 'y' as never, network: 'maybe' as never }),
    )
    expect(error.issues.map((i) => i.split(':')[0])).toEqual(['cwd', 'defaultMode', 'approvedMode', 'network'])
  })

  it('returns a frozen policy', () => {
    const policy = resolvePolicy({ cwd: base, writableRoots: [path.join(base, 'x')] })
    expect(Object.isFrozen(policy)).toBe(true)
    expect(Object.isFrozen(policy.writableRoots)).toBe(true)
  })
})

describe('resolvePolicy: roots', () => {
  it('an explicit root wins over the cwd', () => {
    expect(resolvePolicy({ cwd: base, workspaceRoot: path.join(base, 'x') }).workspaceRoot).toBe(path.join(base, 'x'))
  })

  it('resolves symlinks in the root', () => {
    expect(resolvePolicy({ cwd: path.join(base, 'link-c') }).workspaceRoot).toBe(path.join(base, 'a/b/c'))
    expect(resolvePolicy({ cwd: path.join(base, 'link-link') }).workspaceRoot).toBe(path.join(base, 'a/b/c'))
    expect(resolvePolicy({ cwd: path.join(base, 'link-y') }).workspaceRoot).toBe(path.join(base, 'x/y'))
  })

  it('resolves symlink/.. the way the kernel does, not lexically', () => {
    const spelled = `${base}/link-c/..`
    expect(path.resolve(spelled)).toBe(base) // the lexical answer…
    expect(resolvePolicy({ cwd: spelled }).workspaceRoot).toBe(path.join(base, 'a/b')) // …is not the kernel's
    expect(resolvePolicy({ cwd: `${base}/link-y/../..` }).workspaceRoot).toBe(base)
  })

  it('strips trailing slashes, dots and doubled separators', () => {
    expect(resolvePolicy({ cwd: `${base}//a/./b/` }).workspaceRoot).toBe(path.join(base, 'a/b'))
  })

  it('a relative root is an error naming the field', () => {
    expect(invalid(() => resolvePolicy({ cwd: base, workspaceRoot: 'repo' })).issues).toEqual([
      'workspaceRoot: must be an absolute path, got "repo"',
    ])
    expect(invalid(() => resolvePolicy({ cwd: './here' })).issues[0]).toMatch(/^cwd: must be an absolute path/)
    expect(invalid(() => resolvePolicy({ cwd: '' })).issues[0]).toMatch(/^cwd: must not be empty/)
  })

  it('a missing root is an error naming the field', () => {
    const missing = path.join(base, 'missing')
    expect(invalid(() => resolvePolicy({ cwd: base, workspaceRoot: missing })).issues).toEqual([
      `workspaceRoot: directory does not exist: ${JSON.stringify(missing)}`,
    ])
    expect(invalid(() => resolvePolicy({ cwd: missing })).issues[0]).toMatch(/^cwd: directory does not exist/)
    expect(invalid(() => resolvePolicy({ cwd: path.join(base, 'dangling') })).issues[0]).toMatch(
      /^cwd: directory does not exist/,
    )
  })

  it('a file is not a root', () => {
    expect(invalid(() => resolvePolicy({ cwd: path.join(base, 'file') })).issues[0]).toMatch(/^cwd: not a directory/)
  })

  it('the cwd is not checked for existence when an explicit root is given', () => {
    expect(resolvePolicy({ cwd: path.join(base, 'missing'), workspaceRoot: base }).workspaceRoot).toBe(base)
  })

  it('extra writable roots are canonical, deduplicated, and exclude the root itself', () => {
    const policy = resolvePolicy({
      cwd: base,
      writableRoots: [path.join(base, 'link-c'), path.join(base, 'a/b/c/'), base, path.join(base, 'x')],
    })
    expect(policy.writableRoots).toEqual([path.join(base, 'a/b/c'), path.join(base, 'x')])
  })

  it('a missing extra writable root is an error naming its index', () => {
    expect(invalid(() => resolvePolicy({ cwd: base, writableRoots: [base, path.join(base, 'nope')] })).issues).toEqual([
      `writableRoots[1]: directory does not exist: ${JSON.stringify(path.join(base, 'nope'))}`,
    ])
  })

  it('unprotected paths: absolute ones canonical, relative ones kept; ".." is a typed error naming the field', () => {
    const policy = resolvePolicy({ cwd: base, unprotectedPaths: [path.join(base, 'link-c/.envrc'), '.vscode'] })
    expect(policy.unprotectedPaths).toEqual([path.join(base, 'a/b/c/.envrc'), '.vscode'])
    expect(() => resolvePolicy({ cwd: base, unprotectedPaths: ['../x'] })).toThrow(
      expect.objectContaining({ name: 'InvalidRequestError', message: expect.stringMatching(/unprotectedPaths\[0\]/) }),
    )
  })

  it('protected and hidden paths are canonical but need not exist', () => {
    const policy = resolvePolicy({
      cwd: base,
      protectedPaths: [path.join(base, 'link-c/.git'), path.join(base, 'a/b/c/.git')],
      hiddenPaths: [path.join(base, 'link-y/secret')],
      network: 'deny',
      requireEnforcement: 'full',
    })
    expect(policy.protectedPaths).toEqual([path.join(base, 'a/b/c/.git')])
    expect(policy.hiddenPaths).toEqual([path.join(base, 'x/y/secret')])
    expect(policy.network).toBe('deny')
    expect(policy.requireEnforcement).toBe('full')
  })
})

describe('canonicalPath', () => {
  it('resolves an existing path fully and a missing tail lexically', () => {
    expect(canonicalPath(path.join(base, 'link-c'))).toBe(path.join(base, 'a/b/c'))
    expect(canonicalPath(`${base}/link-c/../new/./file`)).toBe(path.join(base, 'a/b/new/file'))
    expect(canonicalPath('/')).toBe('/')
  })
})

describe('resolvePolicy: properties', () => {
  const component = fc.constantFrom(
    'a',
    'b',
    'c',
    'x',
    'y',
    'link-c',
    'link-y',
    'link-link',
    'dangling',
    'file',
    '..',
    '.',
    '',
    'missing',
  )

  it('never returns a relative or non-canonical root; agrees with the kernel', () => {
    fc.assert(
      fc.property(fc.array(component, { maxLength: 7 }), fc.boolean(), (parts, explicit) => {
        const spelled = `${base}/${parts.join('/')}`
        let kernel: string | undefined
        try {
          kernel = fs.realpathSync.native(spelled)
          if (!fs.statSync(kernel).isDirectory()) kernel = undefined
        } catch {
          kernel = undefined
        }
        const input = explicit ? { cwd: '/', workspaceRoot: spelled } : { cwd: spelled }
        if (kernel === undefined) {
          const error = invalid(() => resolvePolicy(input))
          expect(error.issues[0]!.startsWith(explicit ? 'workspaceRoot:' : 'cwd:')).toBe(true)
          return
        }
        const root = resolvePolicy(input).workspaceRoot
        expect(path.isAbsolute(root)).toBe(true)
        expect(path.resolve(root)).toBe(root)
        expect(fs.realpathSync.native(root)).toBe(root)
        expect(root).toBe(kernel)
      }),
      { numRuns: 300 },
    )
  })

  it('rejects every relative root', () => {
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 4 }), (parts) => {
        const spelled = parts.join('/')
        fc.pre(!spelled.startsWith('/'))
        expect(invalid(() => resolvePolicy({ cwd: base, workspaceRoot: spelled })).issues[0]).toMatch(
          /^workspaceRoot: /,
        )
      }),
    )
  })
})
