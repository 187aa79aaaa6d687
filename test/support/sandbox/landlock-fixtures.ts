// Shared stand-ins for the Landlock unit tests: a fake file system (dev, inode, kind per path),
// the ABI-7 masks, a small read view and a host that offers everything.
import {
  FS,
  handledFsFor,
  type PathInspector,
  READ_TREE,
  type RulesetEntry,
  scopedFor,
} from '../../../src/sandbox/ruleset/landlock.js'
import type { PlanHost } from '../../../src/sandbox/confinement/plan.js'

const dirs = new Map<string, number>([
  ['/', 2],
  ['/usr', 3],
  ['/work/ws', 100],
  ['/work/extra', 101],
  ['/tmp/cordon-tmp-s-abc', 102],
])
const files = new Map<string, number>([
  ['/dev/null', 5],
  ['/dev/zero', 6],
  ['/dev/urandom', 7],
])
export const fakeFs: PathInspector = (p) => {
  const d = dirs.get(p)
  if (d !== undefined) return { dev: 1, ino: d, directory: true }
  const f = files.get(p)
  if (f !== undefined) return { dev: 9, ino: f, directory: false }
  return undefined
}
export const MASKS = { abi: 7, handledFs: handledFsFor(7), handledNet: 0, scoped: scopedFor(7) }
export const VIEW: RulesetEntry[] = [
  { path: '/', rights: FS.READ_DIR, origin: 'read' },
  { path: '/usr', rights: READ_TREE, origin: 'read' },
]
export const HOST: PlanHost = {
  arch: 'x86_64',
  abi: 7,
  seccomp: true,
  supervisor: true,
  setpcap: true,
  capLast: 40,
  uid: 0,
  namespaces: { available: true, viaUserNamespace: false },
}
