// Landlock rights without the kernel: what each ABI handles, and rules cut by kind and ABI with
// the (dev, ino) cache key.
import { describe, expect, it } from 'vitest'
import { isInvalidRequestError } from '../../../../src/policy/errors.js'
import { grantsFor } from '../../../../src/policy/grants.js'
import {
  FILE_RIGHTS,
  FS,
  handledFsFor,
  handledNetFor,
  NET,
  type PathInspector,
  planRuleset,
  type RulesetEntry,
  rightsFor,
  rulesetArgs,
  rulesetAttrSize,
  SCOPE,
  scopedFor,
} from '../../../../src/sandbox/ruleset/landlock.js'
import { fakeFs, MASKS, VIEW } from '../../../support/sandbox/landlock-fixtures.js'

describe('Landlock rights per ABI', () => {
  it('handles bits 0..12 at ABI 1, adds REFER (2), TRUNCATE (3), IOCTL_DEV (5)', () => {
    expect([0, 1, 2, 3, 4, 5, 7].map(handledFsFor)).toEqual([0, 0x1fff, 0x3fff, 0x7fff, 0x7fff, 0xffff, 0xffff])
  })

  it('handles TCP only when denied without a private network, from ABI 4; scopes from ABI 6', () => {
    expect(handledNetFor(3, 'deny', false)).toBe(0)
    expect(handledNetFor(4, 'deny', false)).toBe(NET.BIND_TCP | NET.CONNECT_TCP)
    expect(handledNetFor(7, 'deny', true)).toBe(0)
    expect(handledNetFor(7, 'inherit', false)).toBe(0)
    expect(scopedFor(5)).toBe(0)
    expect(scopedFor(6)).toBe(SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL)
  })

  it('sizes the ruleset attr for the ABI, and maps access words to rights', () => {
    expect([1, 3, 4, 5, 6, 7].map(rulesetAttrSize)).toEqual([8, 8, 16, 16, 24, 24])
    expect(rightsFor(['read', 'execute'])).toBe(FS.READ_FILE | FS.READ_DIR | FS.EXECUTE)
    expect(rightsFor(['remove'])).toBe(FS.REMOVE_DIR | FS.REMOVE_FILE)
  })
})

describe('planRuleset', () => {
  it('cuts file-only rights on non-directories, never grants device creation, skips missing devices', () => {
    const grants = grantsFor({ mode: 'workspace-write', workspaceRoot: '/work/ws' })
    const plan = planRuleset(
      [
        ...VIEW,
        ...grants.writable.map((w) => ({ path: w.path, rights: rightsFor(w.access), origin: 'writable' as const })),
        { path: '/dev/null', rights: 0xffff, origin: 'device' },
        { path: '/dev/tty', rights: FS.READ_FILE, origin: 'device' },
      ],
      MASKS,
      fakeFs,
    )
    expect(plan.rules.map((r) => r.path)).toEqual(['/', '/usr', '/work/ws', '/dev/null'])
    for (const rule of plan.rules) {
      if (!rule.directory) expect(rule.allowed & ~FILE_RIGHTS).toBe(0)
      expect(rule.allowed & (FS.MAKE_CHAR | FS.MAKE_BLOCK)).toBe(0)
    }
    expect(plan.rules[0]!.allowed).toBe(FS.READ_DIR)
  })

  it('cuts rights to what is handled (an older ABI, or a write-only domain)', () => {
    const plan = planRuleset(VIEW, { abi: 1, handledFs: handledFsFor(1), handledNet: 0, scoped: 0 }, fakeFs)
    expect(plan.attrSize).toBe(8)
    for (const rule of plan.rules) expect(rule.allowed & ~0x1fff).toBe(0)
  })

  it('never skips a missing writable root', () => {
    try {
      planRuleset([{ path: '/work/gone', rights: FS.WRITE_FILE, origin: 'writable' }], MASKS, fakeFs)
      expect.unreachable()
    } catch (error) {
      expect(isInvalidRequestError(error)).toBe(true)
      expect(String(error)).toContain('/work/gone')
    }
  })

  it('keys the cache by (dev, ino): a recreated root is a different ruleset', () => {
    const entries: RulesetEntry[] = [{ path: '/work/ws', rights: FS.WRITE_FILE, origin: 'writable' }]
    const before = planRuleset(entries, MASKS, fakeFs).key
    expect(planRuleset(entries, MASKS, fakeFs).key).toBe(before)
    const recreated: PathInspector = (p) => (p === '/work/ws' ? { dev: 1, ino: 999, directory: true } : fakeFs(p))
    expect(planRuleset(entries, MASKS, recreated).key).not.toBe(before)
    expect(planRuleset(entries, { ...MASKS, handledNet: 3 }, fakeFs).key).not.toBe(before)
  })

  it('renders as cordon-exec rules, each with the inode it must still be', () => {
    const plan = planRuleset([{ path: '/work/ws', rights: FS.WRITE_FILE, origin: 'writable' }], MASKS, fakeFs)
    expect(rulesetArgs(plan)).toEqual(['--landlock', 'ffff:0:3:24', '--rule', '2:1:100:/work/ws'])
  })
})
