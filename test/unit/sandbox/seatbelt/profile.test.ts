// What the Seatbelt renderer decides, rule by rule, and what it refuses at its boundary (every
// issue listed). The exact text of every combination is pinned by golden.test.ts.
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import type { SandboxExecutionPolicy } from '../../../../src/policy/vocabulary.js'
import { renderSeatbeltProfile, SEATBELT_TEMPLATES } from '../../../../src/sandbox/seatbelt/profile.js'
import { DEFAULT_MACH_SERVICES, NETWORK_MACH_SERVICES } from '../../../../src/sandbox/seatbelt/mach-services.js'
import { invalid } from '../../../support/invalid.js'
import { profileProblems, readSbpl, type Sexp } from '../../../support/sandbox/sbpl-reader.js'

const ROOT = '/Users/dev/project'
const TEMP = '/tmp/cordon-s1'

/** The top-level rules whose head is `verb` and that name `op`. */
function rules(profile: string, verb: 'allow' | 'deny', op: string): Sexp[] {
  return readSbpl(profile).filter(
    (f) =>
      f.kind === 'list' &&
      f.items[0]?.kind === 'atom' &&
      f.items[0].value === verb &&
      f.items.some((x) => x.kind === 'atom' && x.value === op),
  )
}

function ww(extra: Partial<SandboxExecutionPolicy> = {}) {
  return grantsFor({ mode: 'workspace-write', workspaceRoot: ROOT, ...extra }, { tempDir: TEMP })
}

describe('renderSeatbeltProfile', () => {
  it('loads both templates with their version line first and (deny default) before any rule', () => {
    for (const lines of Object.values(SEATBELT_TEMPLATES)) {
      expect(lines[0]).toBe('(version 1)')
      expect(lines.find((l) => l.startsWith('('))).toBe('(version 1)')
      expect(lines.filter((l) => l.startsWith('(')).at(1)).toBe('(deny default)')
      expect(lines.some((l) => l.trimStart().startsWith(';;'))).toBe(false)
    }
  })

  it('each template, unrendered (placeholders are comments), is itself valid SBPL that allows no write', () => {
    for (const lines of Object.values(SEATBELT_TEMPLATES)) {
      const forms = readSbpl(lines.join('\n'))
      expect(profileProblems(forms)).toEqual([])
      expect(rules(lines.join('\n'), 'allow', 'file-write*')).toEqual([])
      expect(rules(lines.join('\n'), 'allow', 'network*')).toEqual([])
    }
  })

  it('workspace-write: writes under the roots and the temp dir, spelled /private/tmp, excluding protected and hidden paths', () => {
    const r = renderSeatbeltProfile(
      ww({
        writableRoots: ['/Users/dev/cache'],
        protectedPaths: [`${ROOT}/.git/hooks`],
        hiddenPaths: [`${ROOT}/.env`],
      }),
    )
    expect(r.writable).toEqual([ROOT, '/Users/dev/cache', '/private/tmp/cordon-s1'])
    expect(r.tempDir).toBe('/private/tmp/cordon-s1')
    const writes = rules(r.profile, 'allow', 'file-write*')
    expect(writes).toHaveLength(2)
    const text = r.profile
    expect(text).toContain(`(require-not (subpath "${ROOT}/.git/hooks"))`)
    expect(text).toContain(`(require-not (subpath "${ROOT}/.env"))`)
    expect(profileProblems(readSbpl(text))).toEqual([])
  })

  it('read-only: no write rule without a temp dir; the temp dir given as an option is the only writable dir', () => {
    const grants = grantsFor({ mode: 'read-only', workspaceRoot: ROOT })
    const bare = renderSeatbeltProfile(grants)
    expect(rules(bare.profile, 'allow', 'file-write*')).toEqual([])
    expect(bare.writable).toEqual([])
    expect(bare.guarded).toEqual([])
    const scratch = renderSeatbeltProfile(grants, { tempDir: TEMP })
    expect(scratch.writable).toEqual(['/private/tmp/cordon-s1'])
    expect(rules(scratch.profile, 'allow', 'file-write*')).toHaveLength(1)
  })

  it('guards each writable dir and each ancestor of a protected or hidden path inside one, last', () => {
    const r = renderSeatbeltProfile(
      ww({ protectedPaths: [`${ROOT}/.git/hooks`, '/Users/dev/outside/x'], hiddenPaths: [`${ROOT}/a/b/.env`] }),
    )
    expect(r.guarded).toEqual([ROOT, '/private/tmp/cordon-s1', `${ROOT}/.git`, `${ROOT}/a/b`, `${ROOT}/a`])
    const forms = readSbpl(r.profile)
    const last = forms.at(-1) as Extract<Sexp, { kind: 'list' }>
    expect(last.items.slice(0, 2)).toEqual([
      { kind: 'atom', value: 'deny' },
      { kind: 'atom', value: 'file-write-unlink' },
    ])
  })

  it('a protected or hidden path wins over a writable root inside it', () => {
    const r = renderSeatbeltProfile(ww({ hiddenPaths: ['/Users/dev'] }))
    expect(r.profile).toContain('(require-not (subpath "/Users/dev"))')
  })

  it('network: the stricter of grants and options; deny drops network* and the network mach services', () => {
    const inherit = renderSeatbeltProfile(ww())
    expect(inherit.network).toBe('inherit')
    expect(rules(inherit.profile, 'allow', 'network*')).toHaveLength(1)
    expect(inherit.machServices).toEqual(DEFAULT_MACH_SERVICES.map((s) => s.name))

    for (const r of [
      renderSeatbeltProfile(ww(), { network: 'deny' }),
      renderSeatbeltProfile(ww({ network: 'deny' })),
    ]) {
      expect(r.network).toBe('deny')
      expect(rules(r.profile, 'allow', 'network*')).toEqual([])
      expect(rules(r.profile, 'allow', 'system-socket')).toEqual([])
      for (const name of r.machServices) expect(NETWORK_MACH_SERVICES).not.toContain(name)
      expect(r.droppedMachServices).toEqual(expect.arrayContaining(['com.apple.trustd']))
    }
    expect(renderSeatbeltProfile(ww({ network: 'deny' }), { network: 'inherit' }).network).toBe('deny')
  })

  it('mach services: the caller’s list replaces the default; an empty list allows no mach-lookup', () => {
    const r = renderSeatbeltProfile(ww(), { machServices: ['com.example.one'] })
    expect(r.machServices).toEqual(['com.example.one'])
    expect(r.profile).toContain('(global-name "com.example.one")')
    expect(r.profile).not.toContain('opendirectoryd')
    expect(rules(renderSeatbeltProfile(ww(), { machServices: [] }).profile, 'allow', 'mach-lookup')).toEqual([])
  })

  it('POSIX semaphores only when asked', () => {
    expect(rules(renderSeatbeltProfile(ww()).profile, 'allow', 'ipc-posix-sem')).toEqual([])
    expect(
      rules(renderSeatbeltProfile(ww(), { posixSemaphores: true }).profile, 'allow', 'ipc-posix-sem'),
    ).toHaveLength(1)
  })

  it('the own tty is readable, writable and ioctl-able; no other terminal is', () => {
    const r = renderSeatbeltProfile(ww(), { tty: '/dev/ttys004' })
    expect(r.profile).toContain('(allow file-read* file-write-data file-ioctl (literal "/dev/ttys004"))')
    expect(r.profile).toContain('(require-not (subpath "/dev"))') // reads exclude /dev: devices are by name
    expect(renderSeatbeltProfile(ww()).profile).not.toContain('ttys004')
  })

  it('adds protected and hidden paths from the options to the grants’ own', () => {
    const r = renderSeatbeltProfile(ww({ protectedPaths: [`${ROOT}/a`] }), {
      protectedPaths: [`${ROOT}/b`],
      hiddenPaths: ['/etc/shadow'],
    })
    expect(r.protectedPaths).toEqual([`${ROOT}/a`, `${ROOT}/b`])
    expect(r.hiddenPaths).toEqual(['/private/etc/shadow'])
  })

  it('never allows file-link, file-clone, sysctl-write or mach-register in any variant', () => {
    const variants = [
      renderSeatbeltProfile(ww()),
      renderSeatbeltProfile(ww(), { posixSemaphores: true, network: 'deny' }),
      renderSeatbeltProfile(grantsFor({ mode: 'read-only', workspaceRoot: ROOT })),
    ]
    for (const v of variants) {
      for (const op of ['file-link', 'file-clone', 'sysctl-write', 'mach-register']) {
        expect(rules(v.profile, 'allow', op)).toEqual([])
      }
      expect(v.profile).not.toContain('no-sandbox')
    }
  })

  it('refuses danger-full-access and lists every bad option at once', () => {
    const error = invalid(() =>
      renderSeatbeltProfile(grantsFor({ mode: 'danger-full-access', workspaceRoot: ROOT }), {
        tty: '/etc/passwd',
        machServices: ['com.apple.x"y'],
        protectedPaths: ['relative'],
        network: 'off' as never,
        unknown: 1,
      } as never),
    )
    expect(error.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^tty: /),
        expect.stringMatching(/^machServices\[0\]: /),
        expect.stringMatching(/^protectedPaths\[0\]: /),
        expect.stringMatching(/^network: /),
        expect.stringMatching(/unknown/),
        expect.stringMatching(/^mode: danger-full-access/),
      ]),
    )
  })

  it('refuses a temp dir that is not the grants’ own, or that would expose a host temp dir', () => {
    expect(invalid(() => renderSeatbeltProfile(ww(), { tempDir: '/tmp/other' })).issues).toEqual([
      expect.stringMatching(/^tempDir: .* is not the grants' temp dir/),
    ])
    const ro = grantsFor({ mode: 'read-only', workspaceRoot: ROOT })
    for (const bad of ['/tmp', '/private/tmp', '/', '/var', '/dev/fd', '/dev']) {
      expect(invalid(() => renderSeatbeltProfile(ro, { tempDir: bad })).issues).toEqual([
        expect.stringMatching(/^tempDir: .*writable/),
      ])
    }
  })
})
