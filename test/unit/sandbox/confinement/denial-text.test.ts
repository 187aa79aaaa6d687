// The denial text each backend's kernel mechanisms produce: the lower-case strerror of the errno
// each one refuses with (EACCES for Landlock; EROFS, EACCES and EBUSY under bubblewrap; EPERM for
// Seatbelt), one list per backend.
import os from 'node:os'
import { describe, expect, it } from 'vitest'
import { ALL_SANDBOX_BACKENDS } from '../../../../src/policy/backends.js'
import { DENIAL_CODES, DENIAL_SIGNATURES, LANDLOCK_VIEW } from '../../../../src/sandbox/confinement/denial-text.js'

/** The text a failed call prints for `errno` on Linux, lower case (as bash and coreutils print it). */
const LINUX_TEXT: Record<string, string> = {
  EACCES: 'permission denied',
  EROFS: 'read-only file system',
  EBUSY: 'device or resource busy',
  EPERM: 'operation not permitted',
}

describe('DENIAL_SIGNATURES', () => {
  it('has a list for each backend and no other', () => {
    expect(Object.keys(DENIAL_SIGNATURES).sort()).toEqual([...ALL_SANDBOX_BACKENDS, LANDLOCK_VIEW].sort())
  })

  it("is each backend's errno texts, in lower case", () => {
    expect(DENIAL_SIGNATURES.landlock).toEqual([LINUX_TEXT.EACCES])
    expect(DENIAL_SIGNATURES[LANDLOCK_VIEW]).toEqual([LINUX_TEXT.EACCES, LINUX_TEXT.EROFS])
    expect(DENIAL_SIGNATURES.bubblewrap).toEqual([LINUX_TEXT.EROFS, LINUX_TEXT.EACCES, LINUX_TEXT.EBUSY])
    expect(DENIAL_SIGNATURES.seatbelt).toEqual([LINUX_TEXT.EPERM])
    for (const texts of Object.values(DENIAL_SIGNATURES)) for (const t of texts) expect(t).toBe(t.toLowerCase())
  })

  it('names errnos this host knows', () => {
    for (const name of Object.keys(LINUX_TEXT)) expect(os.constants.errno).toHaveProperty(name)
  })
})

describe('DENIAL_CODES', () => {
  it("is each backend's refusal errnos by name, one for each of its texts but the busy mount point", () => {
    expect(Object.keys(DENIAL_CODES).sort()).toEqual([...ALL_SANDBOX_BACKENDS, LANDLOCK_VIEW].sort())
    for (const [backend, codes] of Object.entries(DENIAL_CODES)) {
      const texts = codes.map((c) => LINUX_TEXT[c])
      expect(DENIAL_SIGNATURES[backend]?.filter((t) => t !== LINUX_TEXT.EBUSY)).toEqual(texts)
    }
  })
})
