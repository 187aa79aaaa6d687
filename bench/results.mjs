/**
 * bench/RESULTS.md: the latest table of `npm run bench` (every GOAL, RATIO and SKIP line each
 * benchmark printed), with its date and machine. run-all replaces the table between the two markers and keeps
 * the text around it (what a figure means, what was tried), so the notes survive every run.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { arch, cpus, release } from 'node:os'
import { fileURLToPath } from 'node:url'

/** Where run-all writes by default: beside this file, in the checkout that runs the benchmarks. */
export const RESULTS_FILE = fileURLToPath(new URL('./RESULTS.md', import.meta.url))

export const BEGIN = '<!-- results: written by bench/run-all.mjs; everything up to the end marker is replaced -->'
export const END = '<!-- results: end -->'

/** The machine a run measured: cpu model, cores, kernel, architecture, node. */
export function machineFacts() {
  const cores = cpus()
  return {
    cpu: cores[0]?.model?.trim() || 'unknown',
    cores: cores.length,
    kernel: release(),
    arch: arch(),
    node: process.version,
  }
}

/**
 * `GOAL name value op limit PASS|MISS`, `RATIO name value` or `SKIP name why` as a row; undefined
 * for any other line.
 */
export function parseLine(line) {
  const goal = /^GOAL (\S+) (\S+) (<=|>=) (\S+) (PASS|MISS)$/.exec(line)
  if (goal) return { name: goal[1], value: goal[2], goal: `${goal[3]} ${goal[4]}`, verdict: goal[5] }
  const ratio = /^RATIO (\S+) (\S+)$/.exec(line)
  if (ratio) return { name: ratio[1], value: ratio[2], goal: '', verdict: '' }
  const skip = /^SKIP (\S+) (.+)$/.exec(line)
  if (skip) return { name: skip[1], value: `(not measured: ${skip[2]})`, goal: '', verdict: '' }
  return undefined
}

const cell = (text) => String(text).replaceAll('|', '\\|')

/** A markdown table padded to its columns' widths, as `biome format` lays one out. */
export function markdownTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

/**
 * The block run-all writes: date, machine, load, then one row per GOAL/RATIO/SKIP line in the order
 * the benchmarks printed them, and a row for a benchmark that failed.
 *   run: { date: Date, machine: machineFacts(), seconds, loadStart, loadEnd,
 *          results: [{ name, code, signal, lines }] }
 */
export function renderResults(run) {
  const m = run.machine
  const when = `${run.date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
  const rows = []
  for (const r of run.results) {
    if (r.code !== 0) rows.push([r.name, `(the benchmark failed: exit ${r.code ?? r.signal})`, '', '', ''])
    for (const line of r.lines) {
      const row = parseLine(line)
      if (row) rows.push([r.name, row.name, row.value, row.goal, row.verdict].map(cell))
    }
  }
  return [
    BEGIN,
    `Measured ${when} by \`bench/run-all.mjs\`: ${run.results.length} benchmark${run.results.length === 1 ? '' : 's'} in ${run.seconds} s.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.arch}, kernel ${m.kernel}, node ${m.node}; loadavg ${run.loadStart} at the start, ${run.loadEnd} at the end.`,
    '',
    markdownTable(['bench', 'line', 'value', 'goal', 'verdict'], rows),
    END,
  ].join('\n')
}

/** `previous` (the file's text, or undefined) with its table replaced by `block`. */
export function replaceResults(previous, block) {
  if (previous !== undefined) {
    const start = previous.indexOf(BEGIN)
    const end = previous.indexOf(END, start)
    if (start >= 0 && end >= 0) return `${previous.slice(0, start)}${block}${previous.slice(end + END.length)}`
  }
  return `# Benchmark results\n\nThe latest \`npm run bench\`: every ratio is against a peer measured in the same run.\n\n${block}\n`
}

/** Writes `run`'s table into `file`, keeping the text around the previous table. */
export function writeResults(file, run) {
  let previous
  try {
    previous = readFileSync(file, 'utf8')
  } catch {
    previous = undefined
  }
  writeFileSync(file, replaceResults(previous, renderResults(run)))
}
