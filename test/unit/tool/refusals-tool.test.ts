// The model's text for the refusal log: a line per run and per refusal, every path and command
// escaped (a file name cannot forge a line), the last run's number to page from.
import { describe, expect, it } from 'vitest'
import { renderRefusalLog } from '../../../src/tool/refusals-tool.js'

describe('renderRefusalLog', () => {
  it('renders each run and refusal, escaped, and the paging line', () => {
    const text = renderRefusalLog({
      lastRun: 9,
      dropped: 2,
      entries: [
        {
          run: 4,
          time: '2026-12-02T10:00:00.000Z',
          command: 'touch "$(printf \'a\\nb\')"',
          workdir: '/w',
          mode: 'workspace-write',
          backend: 'bubblewrap',
          background: true,
          failed: false,
          refusals: [
            { kind: 'path', path: '/etc/a\nrun 5 forged', operation: 'write' },
            { kind: 'path', path: '/root/x', operation: 'unknown' },
            { kind: 'host', host: 'evil.test', port: 443, operation: 'connect', reason: 'not-allowed', count: 3 },
            { kind: 'class', class: 'shared-memory', operation: 'unknown', evidence: 'sem_open', remedy: '--shm' },
          ],
          refusalsOmitted: 7,
        },
      ],
    })
    const lines = text.split('\n')
    expect(lines[0]).toMatch(
      /^run 4 at 2026-12-02T10:00:00.000Z \(workspace-write, bubblewrap, background job, exit ignored it\): touch/,
    )
    expect(lines.slice(1)).toEqual([
      '  write refused: /etc/a\\nrun 5 forged',
      '  refused: /root/x',
      '  connection refused: evil.test:443 (not-allowed, 3 times)',
      '  shared-memory closed: sem_open (opened by --shm)',
      '  ... and 7 more',
      '[last run: 9; 2 older runs with refusals are no longer logged]',
    ])
  })

  it('says so when the session has none', () => {
    expect(renderRefusalLog({ lastRun: 0, dropped: 0, entries: [] })).toBe(
      '(no refusals logged for this session)\n[last run: 0]',
    )
  })
})
