// Where cordon's user configuration lives: $XDG_CONFIG_HOME/cordon, else ~/.config/cordon, and
// nowhere for a home that is missing, relative or `/`; the file is config.json in it.
import { describe, expect, it } from 'vitest'
import { userConfigDir, userConfigFile } from '../../../../src/policy/state/config-dir.js'

describe('userConfigDir', () => {
  it('prefers an absolute $XDG_CONFIG_HOME, else ~/.config', () => {
    expect(userConfigDir({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/h' })).toBe('/x/cfg/cordon')
    expect(userConfigDir({ XDG_CONFIG_HOME: 'rel', HOME: '/h' })).toBe('/h/.config/cordon')
    expect(userConfigDir({ HOME: '/h' })).toBe('/h/.config/cordon')
  })

  it("another user's, by their home (never this process's $XDG_CONFIG_HOME)", () => {
    expect(userConfigDir({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/o')).toBe('/home/o/.config/cordon')
  })

  it('none for a home of `/` or a relative one', () => {
    expect(userConfigDir({ HOME: '/' })).toBeUndefined()
    expect(userConfigDir({ HOME: 'h' })).toBeUndefined()
  })
})

describe('userConfigFile', () => {
  it('is config.json in the config dir, or none', () => {
    expect(userConfigFile({ XDG_CONFIG_HOME: '/x/cfg' })).toBe('/x/cfg/cordon/config.json')
    expect(userConfigFile({ HOME: '/h' })).toBe('/h/.config/cordon/config.json')
    expect(userConfigFile({ HOME: '/' })).toBeUndefined()
  })
})
