// Which spawn path a host uses and why: CORDON_SPAWN read strictly, `portable` always honoured,
// `auto` native exactly where the addon loads, and an explicit `native` never downgraded.
import { describe, expect, it } from 'vitest'
import { loadNativeWithPath } from '../../../../src/subprocess/native.js'
import { chooseSpawnPath, SPAWN_ENV, spawnPathFromEnv } from '../../../../src/subprocess/portable/spawn-path.js'
import { invalid } from '../../../support/invalid.js'

/** Where the addon loads from here, or undefined where it does not. */
function addon(): string | undefined {
  try {
    return loadNativeWithPath().path
  } catch {
    return undefined
  }
}

describe('spawnPathFromEnv', () => {
  it('reads native, portable or auto, and auto when unset or empty', () => {
    expect(spawnPathFromEnv({})).toBe('auto')
    expect(spawnPathFromEnv({ [SPAWN_ENV]: '' })).toBe('auto')
    for (const value of ['auto', 'native', 'portable'] as const) {
      expect(spawnPathFromEnv({ [SPAWN_ENV]: value })).toBe(value)
    }
  })

  it('refuses anything else as an invalid request', () => {
    const error = invalid(() => spawnPathFromEnv({ [SPAWN_ENV]: 'Native' }))
    expect(error.message).toContain('CORDON_SPAWN: must be native, portable or auto, got "Native"')
  })
})

describe('chooseSpawnPath', () => {
  it('takes portable when asked, forced', () => {
    expect(chooseSpawnPath('portable')).toMatchObject({ path: 'portable', forced: true })
  })

  it('takes native under auto exactly where the addon loads, and names the file', () => {
    const file = addon()
    const expected =
      file === undefined ? { path: 'portable', forced: false } : { path: 'native', forced: false, addon: file }
    expect(chooseSpawnPath('auto')).toMatchObject(expected)
  })

  it('never downgrades an explicit native: it throws where the addon does not load', () => {
    const file = addon()
    const choose = () => chooseSpawnPath('native')
    if (file === undefined) expect(choose).toThrow()
    else expect(choose()).toMatchObject({ path: 'native', forced: true, addon: file })
  })
})
