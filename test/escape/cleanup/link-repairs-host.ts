/**
 * The by-path repairs of `link-repairs.ts` in a process of their own, so the control runs as
 * the host user under test (root or uid 65534): `restore LINK TARGET` | `take-away PATH`.
 * Prints what it did (`restored`, `taken`, `absent`).
 */
import { restoreLinkByPath, takeAwayByPath } from './link-repairs.js'

const [verb, a, b] = process.argv.slice(2)
if (verb === 'restore' && a && b) {
  restoreLinkByPath(a, b)
  process.stdout.write('restored\n')
} else if (verb === 'take-away' && a) {
  process.stdout.write(takeAwayByPath(a) ? 'taken\n' : 'absent\n')
} else {
  process.stderr.write('usage: restore LINK TARGET | take-away PATH\n')
  process.exit(2)
}
