/**
 * The `cordon` command line: verb dispatch, errors as one clear line (or JSON), exit 125 when
 * cordon itself could not do what was asked.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TerminalIo } from './shell.js'
import { EXIT_CORDON_FAILED, UsageError } from './usage-error.js'
import { PACKAGE_ROOT } from '../policy/package-root.js'
import { displayLine, escapeDisplayText } from '../policy/display-text.js'

/**
 * `io` with stdin (default process.stdin), each stream read only when asked: making the
 * process's streams costs a run ~1 ms each, and a command that prints nothing needs none.
 */
function withStdin(io: CliIo): CliIo & { stdin: NonNullable<CliIo['stdin']> } {
  return {
    get stdout() {
      return io.stdout
    },
    get stderr() {
      return io.stderr
    },
    get stdin() {
      return io.stdin ?? process.stdin
    },
  }
}

/** The process's own streams, made when first used. */
function processIo(): CliIo {
  return {
    get stdout() {
      return process.stdout
    },
    get stderr() {
      return process.stderr
    },
  }
}

// Each verb's module is loaded only when that verb runs (start-up time: `--version` loads none).
const VERBS = {
  run: async () => {
    const m = await import('./run.js')
    return { help: m.RUN_HELP, run: (a: string[], io: CliIo) => m.runVerb(a, withStdin(io)) }
  },
  shell: async () => {
    const m = await import('./shell.js')
    return { help: m.SHELL_HELP, run: (a: string[], io: CliIo) => m.shellVerb(a, withStdin(io)) }
  },
  probe: async () => {
    const m = await import('./probe.js')
    return { help: m.PROBE_HELP, run: (a: string[], io: CliIo) => m.probeVerb(a, io) }
  },
  explain: async () => {
    const m = await import('./explain.js')
    return { help: m.EXPLAIN_HELP, run: (a: string[], io: CliIo) => m.explainVerb(a, io) }
  },
  schema: async () => {
    const m = await import('./schema/verb.js')
    return { help: m.SCHEMA_HELP, run: (a: string[], io: CliIo) => m.schemaVerb(a, io) }
  },
  mcp: async () => {
    const m = await import('./mcp.js')
    return { help: m.MCP_HELP, run: (a: string[], io: CliIo) => m.mcpVerb(a, withStdin(io)) }
  },
} as const

type VerbName = keyof typeof VERBS
const isVerb = (v: string | undefined): v is VerbName => v !== undefined && Object.hasOwn(VERBS, v)

const MAIN_HELP = `Usage: cordon <verb> [options]

Verbs:
  run [options] -- WORD...   run a command confined (read-only by default) and report its facts
  shell [options] [-- PROG]  an interactive program on a terminal cordon allocates (default $SHELL)
  probe [--json]             which sandbox backends work on this host
  explain [options]          the policy, backend and exact rules a run would use, without running
  schema run                 the JSON Schema of \`cordon run --json\`'s output
  mcp [options]              serve cordon's tools to an MCP client over stdio (needs @modelcontextprotocol/sdk)

Options:
  -V, --version              print cordon's version
  -h, --help                 this help

Run \`cordon <verb> --help\` for a verb's options.
`

function version(): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
  return pkg.version
}

/** The CLI's streams; `stdin` (default process.stdin) is read only by terminals (shell, run --tty). */
export interface CliIo {
  stdout: TerminalIo['stdout']
  stderr: NodeJS.WritableStream
  stdin?: TerminalIo['stdin']
}

/**
 * Tells `io` why cordon failed: as JSON on stdout under `--json`, else one line on stderr, and
 * for a usage error the verb's help to read (`see cordon run --help`), never the whole help.
 */
function reportFailure(error: unknown, verb: string | undefined, json: boolean, io: CliIo): void {
  const e = error instanceof Error ? error : new Error(String(error))
  const code = (e as { code?: string }).code ?? 'CORDON_ERROR'
  // A message may quote what the person typed or a path a config named (JSON.stringify leaves
  // bidi controls and combining marks raw): nothing in it may act on the terminal.
  const message = escapeDisplayText(e.message)
  if (json) {
    io.stdout.write(`${JSON.stringify({ error: { name: e.name, code, message } })}\n`)
  } else if (error instanceof UsageError) {
    const who = isVerb(verb) ? `cordon ${verb}` : 'cordon'
    io.stderr.write(`${who}: ${message}\nsee ${who} --help\n`)
  } else {
    io.stderr.write(`cordon: ${message}\n`)
  }
}

/** What `cordon` does with a first word that is no verb: help (`cordon help VERB`: that verb's), the version, else a UsageError. */
async function topLevel(word: string | undefined, rest: readonly string[], io: CliIo): Promise<number> {
  switch (word) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      io.stdout.write(isVerb(rest[0]) ? (await VERBS[rest[0]]()).help : MAIN_HELP)
      return word === undefined ? EXIT_CORDON_FAILED : 0
    case '-V':
    case '-v':
    case '--version':
      io.stdout.write(`cordon ${version()}\n`)
      return 0
    default: {
      const verbs = Object.keys(VERBS).join(', ')
      if (word.startsWith('-')) throw new UsageError(`unknown option ${displayLine(word)} (-V, --version, -h, --help)`)
      throw new UsageError(`unknown verb "${displayLine(word)}" (${verbs})`)
    }
  }
}

/** Runs the CLI with `argv` (without node and script); returns the exit status. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [verb, ...rest] = argv
  const json = rest.includes('--json') && !rest.slice(0, rest.indexOf('--json')).includes('--')
  try {
    if (isVerb(verb)) return await (await VERBS[verb]()).run(rest, io)
    return await topLevel(verb, rest, io)
  } catch (error) {
    reportFailure(error, verb, json, io)
    // Every failure of cordon itself (usage, SANDBOX_UNAVAILABLE, an invalid request…) is 125.
    return EXIT_CORDON_FAILED
  }
}
