// The digest record's decision: a project config the same by digest is kept; one no wider than the
// recorded one (changed, new, or removed where nothing narrowed) is recorded anew; a wider one (a
// removed narrowing file included) is refused, naming each field.
import { describe, expect, it } from 'vitest'
import { checkAgainstRecord } from '../../../../src/policy/config/record.js'
import { DEFAULT_CONFIG_SETTINGS } from '../../../../src/policy/config/settings.js'

const root = '/w'
const base = { ...DEFAULT_CONFIG_SETTINGS, mode: 'workspace-write' as const }
const narrow = { root, digest: 'd1', content: { network: 'deny' as const, hiddenPaths: ['.env'] } }

describe('checkAgainstRecord', () => {
  it('no record: a file is recorded, no file keeps (nothing to record)', () => {
    expect(checkAgainstRecord(undefined, { digest: 'd', content: {} }, base, root)).toEqual({ action: 'record' })
    expect(checkAgainstRecord(undefined, { digest: null, content: null }, base, root)).toEqual({ action: 'keep' })
  })

  it('the same digest keeps, whatever the content says', () => {
    expect(checkAgainstRecord(narrow, { digest: 'd1', content: null }, base, root)).toEqual({ action: 'keep' })
    const none = { root, digest: null, content: null }
    expect(checkAgainstRecord(none, { digest: null, content: null }, base, root)).toEqual({ action: 'keep' })
  })

  it('a changed file no wider than the recorded one is recorded', () => {
    const narrower = {
      digest: 'd2',
      content: { network: 'deny' as const, hiddenPaths: ['.env', 'x'], mode: 'read-only' as const },
    }
    expect(checkAgainstRecord(narrow, narrower, base, root)).toEqual({ action: 'record' })
    // Reformatted, same meaning: a new digest, nothing wider.
    expect(checkAgainstRecord(narrow, { digest: 'd3', content: { ...narrow.content } }, base, root)).toEqual({
      action: 'record',
    })
  })

  it('a new file where none was is no wider: recorded', () => {
    const none = { root, digest: null, content: null }
    expect(checkAgainstRecord(none, { digest: 'd', content: { network: 'deny' } }, base, root)).toEqual({
      action: 'record',
    })
  })

  it('a wider file, or the narrowing file removed, is refused with each field', () => {
    const wider = checkAgainstRecord(narrow, { digest: 'd2', content: { hiddenPaths: ['.env'] } }, base, root)
    expect(wider).toEqual({
      action: 'refuse',
      widenings: [{ field: 'network', was: '"deny"', is: '"inherit"' }],
    })
    const removed = checkAgainstRecord(narrow, { digest: null, content: null }, base, root)
    expect(removed.action).toBe('refuse')
    expect(removed.action === 'refuse' && removed.widenings.map((w) => w.field)).toEqual(['hiddenPaths', 'network'])
  })
})
