// The README shows what the CLI prints, as it prints it: each ```console block of README.md is a
// transcript (`$ COMMAND` lines, then its stdout and stderr as a terminal shows them). Here each
// block runs as one sh script, `cordon` (and `npx cordon`) the built bin/cordon.js, and each
// command's output must be the lines shown. One thing is normalised, because it must vary: a
// refused write reads EROFS where the backend made a read-only view of the host, EACCES where
// Landlock alone refuses it.
import { spawnSync } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { shellQuote } from '../../../../src/cli/shell-quote.js'
import { needBackend } from '../../../support/sandbox/backends.js'
import { scratchDir } from '../../../support/scratch.js'

const repo = join(import.meta.dirname, '..', '..', '..', '..')
const readme = readFileSync(join(repo, 'README.md'), 'utf8')

/** One `$ COMMAND` of a transcript and the lines it prints. */
interface Step {
  command: string
  output: string[]
}

/** The transcripts of `markdown`: each ```console block as its steps. */
function transcripts(markdown: string): Step[][] {
  return [...markdown.matchAll(/^```console\n([\s\S]*?)^```$/gm)].map((block) => {
    const steps: Step[] = []
    for (const line of (block[1] as string).split('\n').slice(0, -1)) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] })
      else steps.at(-1)?.output.push(line)
    }
    return steps
  })
}

/** A dir holding `cordon` and `npx` stand-ins that run this checkout's CLI. */
function binDir(): string {
  const dir = scratchDir('cordon-readme-bin')
  const cli = `exec ${shellQuote(process.execPath)} ${shellQuote(join(repo, 'bin', 'cordon.js'))} "$@"\n`
  writeFileSync(join(dir, 'cordon'), `#!/bin/sh\n${cli}`)
  writeFileSync(join(dir, 'npx'), `#!/bin/sh\n[ "$1" = cordon ] || exit 99\nshift\n${cli}`)
  for (const name of ['cordon', 'npx']) chmodSync(join(dir, name), 0o755)
  return dir
}

const MARK = '@@cordon-readme-step@@'

/** Runs `steps` as one sh script (so `echo $?` sees the step before); returns each step's output lines. */
function play(steps: Step[], bin: string): string[][] {
  // Each step's status is kept across the marker, as a person's shell keeps it for the next line.
  const script = steps.map((s) => `{ ${s.command}\n} 2>&1; __s=$?; echo; echo ${MARK}; (exit $__s)`).join('\n')
  const r = spawnSync('sh', ['-c', script], {
    cwd: scratchDir('cordon-readme-cwd'),
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  })
  expect(r.stderr).toBe('')
  const outputs = r.stdout.split(`\n${MARK}\n`).slice(0, -1)
  expect(outputs).toHaveLength(steps.length)
  return outputs.map((text) => text.split('\n').slice(0, -1))
}

/** What must vary from host to host, made one. */
const normalised = (line: string) => line.replace(/: (Read-only file system|Permission denied)$/, ': <refused>')

describe("the README's transcripts", () => {
  const blocks = transcripts(readme)

  it('are there: the demo and the CLI section', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    expect(blocks.flat().map((s) => s.command)).toEqual(
      expect.arrayContaining(['npx cordon run -- touch /etc/cordon-demo', "printf 'a\\nb\\n' | cordon run -- wc -l"]),
    )
  })

  it('each command prints what the README shows', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const bin = binDir()
    for (const steps of blocks) {
      const outputs = play(steps, bin)
      steps.forEach((step, i) => {
        expect(outputs[i]?.map(normalised), step.command).toEqual(step.output.map(normalised))
      })
    }
  })

  it('the reader (the control): a changed line is seen as a difference', () => {
    const [steps] = transcripts('```console\n$ cordon --version\ncordon 9.9.9\n$ echo $?\n0\n```\n')
    expect(steps).toEqual([
      { command: 'cordon --version', output: ['cordon 9.9.9'] },
      { command: 'echo $?', output: ['0'] },
    ])
    const outputs = play(steps as Step[], binDir())
    expect(outputs[0]).not.toEqual(['cordon 9.9.9'])
    expect(outputs[1]).toEqual(['0'])
  })
})
