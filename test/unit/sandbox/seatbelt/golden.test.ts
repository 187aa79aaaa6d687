// Every Seatbelt profile, pinned: each mode × network × protected/hidden combination is rendered
// and compared with the checked-in profile under test/fixtures/seatbelt/, and each is checked
// structurally (balanced, version line, only known operations and filters). Runs on any platform:
// Linux CI renders and checks every profile a Mac would apply.
//
// After an intended change, regenerate and review the diff:
//   UPDATE_GOLDEN=1 npx vitest run test/unit/sandbox/seatbelt/golden.test.ts
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { grantsFor } from '../../../../src/policy/grants.js'
import { CONFINED_SANDBOX_MODES, NETWORK_POLICIES } from '../../../../src/policy/vocabulary.js'
import { renderSeatbeltProfile } from '../../../../src/sandbox/seatbelt/profile.js'
import { profileProblems, readSbpl } from '../../../support/sandbox/sbpl-reader.js'

const FIXTURES = new URL('../../../fixtures/seatbelt/', import.meta.url)
const UPDATE = process.env.UPDATE_GOLDEN === '1'

// Paths that exist on no test host, so grantsFor resolves them lexically and every host renders
// the same text (/tmp and /etc come out as /private/tmp and /private/etc).
const ROOT = '/Users/dev/project'
const INPUT = {
  workspaceRoot: ROOT,
  writableRoots: ['/Users/dev/cache'],
  tempDir: '/tmp/cordon-session-1',
  tty: '/dev/ttys003',
  protectedPaths: [`${ROOT}/.git/hooks`, `${ROOT}/.git/config`],
  hiddenPaths: ['/Users/dev/.ssh', `${ROOT}/.env`, '/etc/master.passwd'],
}

const cases = CONFINED_SANDBOX_MODES.flatMap((mode) =>
  NETWORK_POLICIES.flatMap((network) =>
    [false, true].flatMap((protect) =>
      [false, true].map((hide) => ({
        mode,
        network,
        protect,
        hide,
        name: `${mode}/network-${network}/${protect ? (hide ? 'protected-hidden' : 'protected') : hide ? 'hidden' : 'none'}.sb`,
      })),
    ),
  ),
)

function render(c: (typeof cases)[number]): string {
  const grants = grantsFor(
    {
      mode: c.mode,
      workspaceRoot: INPUT.workspaceRoot,
      writableRoots: INPUT.writableRoots,
      network: c.network,
      ...(c.protect ? { protectedPaths: INPUT.protectedPaths } : {}),
      ...(c.hide ? { hiddenPaths: INPUT.hiddenPaths } : {}),
    },
    { tempDir: INPUT.tempDir },
  )
  return renderSeatbeltProfile(grants, { tempDir: INPUT.tempDir, tty: INPUT.tty }).profile
}

describe('Seatbelt golden profiles', () => {
  it('covers all 16 combinations', () => {
    expect(cases).toHaveLength(16)
    expect(new Set(cases.map((c) => c.name)).size).toBe(16)
  })

  it.each(cases)('$name matches its checked-in profile', (c) => {
    const text = render(c)
    const file = new URL(c.name, FIXTURES)
    if (UPDATE) {
      fs.mkdirSync(new URL('.', file), { recursive: true })
      fs.writeFileSync(file, text)
    }
    if (!fs.existsSync(file)) throw new Error(`missing ${file.pathname}: run with UPDATE_GOLDEN=1 and review it`)
    expect(text).toBe(fs.readFileSync(file, 'utf8'))
  })

  it.each(cases)('$name is well-formed SBPL of known operations only', (c) => {
    const forms = readSbpl(render(c))
    expect(profileProblems(forms)).toEqual([])
  })

  it('has no stale fixture: every checked-in profile is one of the combinations', () => {
    const names = (fs.readdirSync(FIXTURES, { recursive: true }) as string[]).filter((f) => f.endsWith('.sb'))
    expect(names.sort()).toEqual(cases.map((c) => c.name).sort())
  })
})
