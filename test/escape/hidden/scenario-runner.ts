// Runs the red team's scenarios as whoever starts it (root, or uid 65534 through setpriv) and
// prints `{ uid, outcomes }` as JSON. argv: <backend> <base dir> [all|owner-home].
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { runRedteam } from './scenarios.js'

const backend = (process.argv[2] ?? 'landlock') as SandboxBackendName
const base = process.argv[3]
const which = process.argv[4] === 'owner-home' ? 'owner-home' : 'all'
if (!base) throw new Error('usage: scenario-runner <backend> <base> [all|owner-home]')
const outcomes = await runRedteam(backend, base, which)
process.stdout.write(JSON.stringify({ uid: process.getuid?.(), outcomes }), () => process.exit(0))
