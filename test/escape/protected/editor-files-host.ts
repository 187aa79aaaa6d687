// The host of test/escape/protected/editor-files.test.ts, run as root or as uid 65534 through
// run-as.ts: for each case it makes a workspace of its own (the files given), runs the case's
// shell script there confined by the backend under workspace-write with the case's policy fields,
// and reports what the files read afterwards (null: absent), what cordon moved aside, and the
// account's word on the protected class.
// A case may lay symlinks too (`links`: name -> target); what each names afterwards is reported.
// argv: <json { backend, base, cases: [{ name, files, links?, script, policy, check }] }>; prints JSON.
import fs from 'node:fs'
import path from 'node:path'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'

/** One attack: files laid out first, a script, the policy's protection fields, paths to read after. */
export interface EditorCase {
  name: string
  files: Record<string, string>
  /** Symlinks made after the files (relative to the workspace): name -> target. */
  links?: Record<string, string>
  script: string
  policy: { protectedPaths?: string[]; unprotectedPaths?: string[]; protectedDefaults?: boolean }
  check: string[]
}

/** What one case left behind. */
export interface EditorOutcome {
  name: string
  exitCode: number | null
  stderr: string
  after: Record<string, string | null>
  /** What each of the case's links names after the run (null: no longer a link). */
  linksAfter: Record<string, string | null>
  refused: string[]
  enforcement: string | undefined
  protectedGoverned: boolean | undefined
  protectedHow: string | undefined
}

const read = (p: string) => {
  try {
    return fs.readFileSync(p, 'utf8')
  } catch {
    return null
  }
}

const readLink = (p: string) => {
  try {
    return fs.readlinkSync(p)
  } catch {
    return null
  }
}

async function runCase(sandbox: LocalSandbox, rt: LocalSubprocessRuntime, base: string, c: EditorCase) {
  const root = path.join(base, c.name)
  for (const [rel, text] of Object.entries(c.files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  fs.mkdirSync(root, { recursive: true })
  for (const [rel, target] of Object.entries(c.links ?? {})) fs.symlinkSync(target, path.join(root, rel))
  const confined = sandbox.confine(
    {
      argv: ['/bin/sh', '-c', c.script],
      cwd: root,
      graceMs: 500,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: { stdin: 'ignore', stdout: { maxBytes: 65536 }, stderr: { maxBytes: 65536 } },
    },
    { mode: 'workspace-write', workspaceRoot: root, sessionId: `editor-${c.name}`, ...c.policy },
  )
  const h = rt.spawn(confined.spec)
  const exit = await h.done
  await h.waitForExit()
  return {
    name: c.name,
    exitCode: exit.exitCode,
    stderr: h.collected.stderr?.readFrom(0).text ?? '',
    after: Object.fromEntries(c.check.map((rel) => [rel, read(path.join(root, rel))])),
    linksAfter: Object.fromEntries(Object.keys(c.links ?? {}).map((rel) => [rel, readLink(path.join(root, rel))])),
    refused: (h.refusedPaths ?? []).map((p) => path.relative(root, p)),
    enforcement: confined.enforcement,
    protectedGoverned: confined.plan?.account.classes.protected?.governed,
    protectedHow: confined.plan?.account.classes.protected?.how,
  } satisfies EditorOutcome
}

const args = JSON.parse(process.argv[2] ?? '{}') as { backend: SandboxBackendName; base: string; cases: EditorCase[] }
const sandbox = await LocalSandbox.create({ backends: [args.backend] })
const rt = new LocalSubprocessRuntime()
const out: EditorOutcome[] = []
for (const c of args.cases) out.push(await runCase(sandbox, rt, args.base, c))
await rt.dispose()
await sandbox.dispose()
process.stdout.write(JSON.stringify(out), () => process.exit(0))
