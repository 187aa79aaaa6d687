// Where each setting came from, as `cordon explain` shows it: the `sources` object of --json and
// one text line per setting, `(default)`, `(from the command line)` or `(from FILE)`, paths escaped.
import { describe, expect, it } from 'vitest'
import { sourceLines, sourcesReport } from '../../../../src/policy/config/describe.js'
import { layerConfig } from '../../../../src/policy/config/layers.js'

const config = layerConfig(
  [
    { source: { kind: 'user', file: '/home/u/.config/cordon/config.json' }, settings: { mode: 'workspace-write' } },
    {
      source: { kind: 'project', file: '/w/.cordon.json' },
      settings: { hiddenPaths: ['.env\u001b[2J'], limits: { processes: 8 } },
    },
    { source: { kind: 'flags' }, settings: { network: 'deny' } },
  ],
  '/w',
)

describe('sourcesReport and sourceLines', () => {
  it('the sources object names each setting, its value, its source and file', () => {
    const report = sourcesReport(config)
    expect(report.mode).toEqual({ value: 'workspace-write', from: 'user', file: '/home/u/.config/cordon/config.json' })
    expect(report.network).toEqual({ value: 'deny', from: 'flags' })
    expect(report.writableRoots).toEqual({ value: [], from: 'default' })
    expect(report.hiddenPaths).toEqual([{ value: '.env\u001b[2J', from: 'project', file: '/w/.cordon.json' }])
    expect(report.limits).toEqual({ processes: { value: 8, from: 'project', file: '/w/.cordon.json' } })
    expect(report.files.map((f) => f.kind)).toEqual(['user', 'project'])
  })

  it('the text: a line per setting with where it came from, every path escaped', () => {
    const lines = sourceLines(sourcesReport(config))
    expect(lines).toEqual([
      'settings (config files: /home/u/.config/cordon/config.json, /w/.cordon.json):',
      '  mode: workspace-write (from /home/u/.config/cordon/config.json)',
      '  writable roots: none (default)',
      '  network: deny (from the command line)',
      '  hidden: .env\\x1b[2J (from /w/.cordon.json)',
      '  limits.processes: 8 (from /w/.cordon.json)',
    ])
    expect(sourceLines(undefined)).toEqual([])
    expect(sourceLines(sourcesReport(layerConfig([], undefined)))[0]).toBe('settings (no config file):')
  })
})
