// What native code says about spawn stages, read from its sources: the kStage… constants it uses,
// and every place where a stage or a status line is spelled as a string literal instead (a stage
// that TypeScript would never hear of by that name).
import { stripComments } from './import-graph.js'

/** The functions of native/ whose arguments carry a stage name (or a whole status line). */
export const STAGE_CARRIERS = [
  'child_fail',
  'fail',
  'fail_start',
  'report_start',
  'report_line',
  'refuse',
  'refuse_forever',
  'send_reply',
] as const

/** The status lines a supervisor writes (launch.cc, supervisor.cc): parseStatusLine reads exactly these. */
export const STATUS_FORMATS = ['started %d\n', 'error %s %d\n', 'exit %d\n', 'signal %d\n'] as const

/** The `kStageX = "name"` constants a generated header defines: constant → stage name. */
export function stageConstants(header: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of header.matchAll(/constexpr const char\* (kStage\w+) = "([^"]+)";/g)) out.set(m[1]!, m[2]!)
  return out
}

/** Every kStage… identifier a source uses. */
export function stageUses(source: string): Set<string> {
  return new Set([...stripComments(source).matchAll(/\bkStage\w+/g)].map((m) => m[0]))
}

/** The text inside the parentheses that open at `open` (nested parentheses and strings respected). */
function argumentsAt(code: string, open: number): string {
  let depth = 0
  for (let i = open; i < code.length; i++) {
    const c = code[i]
    if (c === '"' || c === "'") {
      for (i++; i < code.length && code[i] !== c; i += code[i] === '\\' ? 2 : 1);
    } else if (c === '(') depth++
    else if (c === ')' && --depth === 0) return code.slice(open + 1, i)
  }
  return code.slice(open + 1)
}

const cLiteralText = (literal: string): string => literal.replace(/\\n/g, '\n').replace(/\\(.)/g, '$1')

/** Where `source` (a native .cc file named `file`) spells a stage or a status line as a literal. */
export function stageLiteralProblems(file: string, source: string): string[] {
  const code = stripComments(source)
  const problems: string[] = []
  for (const m of code.matchAll(/\b(\w+)\s*\(/g)) {
    const fn = m[1]!
    if (!(STAGE_CARRIERS as readonly string[]).includes(fn)) continue
    const args = argumentsAt(code, m.index + m[0].length - 1)
    for (const lit of args.matchAll(/"((?:[^"\\\n]|\\.)*)"/g)) {
      problems.push(
        `${file}: ${fn}(…"${lit[1]}"…): a stage or status line spelled as a literal (use kStage… from stages.h)`,
      )
    }
  }
  for (const m of code.matchAll(/\bstage\s*=\s*"([^"]*)"/g)) {
    problems.push(`${file}: stage = "${m[1]}": a stage spelled as a literal (use kStage… from stages.h)`)
  }
  for (const m of code.matchAll(/"((?:[^"\\\n]|\\.)*)"/g)) {
    const text = cLiteralText(m[1]!)
    if (/^(started|error|exit|signal) /.test(text) && !(STATUS_FORMATS as readonly string[]).includes(text)) {
      problems.push(
        `${file}: status line ${JSON.stringify(text)} is not one of ${STATUS_FORMATS.map((f) => JSON.stringify(f)).join(', ')}`,
      )
    }
  }
  return problems
}
