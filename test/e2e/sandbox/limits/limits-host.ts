// A harness-like host for the limit attacks (started as root or, through setpriv, as uid 65534 by
// test/escape/host/run-as.ts): it confines each attack through a LocalSandbox of one backend, and
// while each runs a timer of its own checks every 10 ms how late it fires. The result goes as JSON
// to a file. argv: <result file> <JSON {backend, kind, root, names}>.
import { LocalSandbox } from '../../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../../src/sandbox/probe.js'
import { LocalSubprocessRuntime } from '../../../../src/subprocess/runtime.js'
import type { SubprocessSpawnSpec } from '../../../../src/subprocess/types.js'
import { writeResultFile } from '../../../escape/host/result-file.js'
import { runSpec, specFor } from '../../../support/sandbox/run-confined.js'
import { LIMIT_ATTACKS } from './attacks.js'

interface Args {
  backend: SandboxBackendName
  /** bubblewrap: in the sandbox's resident instance, or a bwrap of the run's own. */
  kind: 'launched' | 'resident' | 'wrapped'
  root: string
  names: string[]
}

/** One confined attack's outcome. */
export interface LimitOutcome {
  name: string
  stdout: string
  stderr: string
  exitCode: number | null
  signal: string | null
  account: Record<string, { governed: boolean; how: string }>
  /** How late the host's 10 ms timer fired at worst while the attack ran (ms). */
  lateMs: number
  ms: number
}

/** A lateness worth measuring again (the test's bound). */
const LATE_MS = 100

/** Resolves with the worst lateness of a 10 ms timer until `stop` is called. */
function watchTimer(): { stop(): number } {
  let worst = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - 10)
    last = now
  }, 10)
  return {
    stop() {
      clearInterval(timer)
      return worst
    },
  }
}

async function run(args: Args): Promise<LimitOutcome[]> {
  const sandbox = await LocalSandbox.create({ backends: [args.backend] })
  const runtime = new LocalSubprocessRuntime()
  const out: LimitOutcome[] = []
  try {
    for (const attack of LIMIT_ATTACKS.filter((a) => args.names.includes(a.name))) {
      const confined = sandbox.confine(specFor(['/bin/bash', '-c', attack.script], args.root), {
        mode: 'read-only',
        workspaceRoot: args.root,
        limits: attack.limits,
      })
      const spec = confined.spec
      if (args.kind === 'wrapped' && spec.confinement) spec.confinement = { ...spec.confinement, resident: undefined }
      // A late timer is measured again, up to three times in all: other tests on the machine's two
      // cores can delay it now and then; an attack that starves the host does so every time.
      let watched = await runWatched(runtime, spec)
      for (let tries = 1; tries < 3 && watched.lateMs >= LATE_MS; tries++) {
        const again = await runWatched(runtime, spec)
        if (again.lateMs < watched.lateMs) watched = again
      }
      out.push({
        name: attack.name,
        ...watched,
        account: (confined.plan?.account.classes ?? {}) as LimitOutcome['account'],
      })
    }
  } finally {
    await runtime.dispose()
    await sandbox.dispose()
  }
  return out
}

/**
 * Runs `spec` to the end of its tree; the timer is watched from the moment the command started
 * (a resident instance's own start, once per plan, is the host's work, not the command's).
 */
async function runWatched(runtime: LocalSubprocessRuntime, spec: SubprocessSpawnSpec) {
  const started = performance.now()
  let timer: ReturnType<typeof watchTimer> | undefined
  const result = await runSpec(spec, 60_000, {
    runtime,
    onSpawned: () => {
      timer = watchTimer()
    },
  })
  return {
    ...result,
    lateMs: Math.round(timer?.stop() ?? 0),
    ms: Math.round(performance.now() - started),
  }
}

const [resultFile, json] = process.argv.slice(2)
if (!resultFile || !json) throw new Error('usage: limits-host <result file> <json>')
await writeResultFile(resultFile, () => run(JSON.parse(json) as Args))
