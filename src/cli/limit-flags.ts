/**
 * The resource-limit flags `run`, `shell` and `explain` share: `--max-processes N`, `--max-memory
 * SIZE`, `--max-temp SIZE`, `--max-cpu SECONDS` (sizes with an optional K, M or G suffix, binary),
 * turned into the policy's `limits`. A bad value is a UsageError naming the flag.
 */
import type { ParseArgsConfig } from 'node:util'
import { displayLine } from '../policy/display-text.js'
import type { ResourceLimits, SandboxExecutionPolicy } from '../policy/vocabulary.js'
import { UsageError } from './usage-error.js'

/** The parseArgs options of the limit flags. */
export const LIMIT_OPTIONS = {
  'max-processes': { type: 'string' },
  'max-memory': { type: 'string' },
  'max-temp': { type: 'string' },
  'max-cpu': { type: 'string' },
} as const satisfies ParseArgsConfig['options']

/** The limit flags' help lines. */
export const LIMIT_HELP = `      --max-processes N  at most N processes and threads in the run's tree (default 4096 where a
                         pids cgroup can hold it; else RLIMIT_NPROC, which does not bind root)
      --max-memory SIZE  at most SIZE of memory for the run's tree (a memory cgroup; default half
                         the host's memory where one can be made), e.g. 2G
      --max-temp SIZE    at most SIZE in the session's TMPDIR (not governed yet: see cordon explain)
      --max-cpu SECONDS  at most SECONDS of CPU time per process (RLIMIT_CPU)`

const SUFFIX: Readonly<Record<string, number>> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }

/** `text` as bytes (`512`, `64K`, `2G`, `1.5G`; a trailing `B` or `iB` allowed), or undefined when it is not a size. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(text.trim())
  if (!match) return undefined
  const bytes = Math.floor(Number(match[1]) * (SUFFIX[(match[2] ?? '').toUpperCase()] ?? 1))
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined
}

/** A positive whole number, or undefined. */
function parseCount(text: string): number | undefined {
  if (!/^\d+$/.test(text.trim())) return undefined
  const n = Number(text)
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

const FLAGS: ReadonlyArray<{
  flag: keyof typeof LIMIT_OPTIONS
  key: keyof ResourceLimits
  parse: (text: string) => number | undefined
  want: string
}> = [
  { flag: 'max-processes', key: 'processes', parse: parseCount, want: 'a positive whole number' },
  { flag: 'max-memory', key: 'memoryBytes', parse: parseSize, want: 'a size such as 512M or 2G' },
  { flag: 'max-temp', key: 'tempBytes', parse: parseSize, want: 'a size such as 512M or 2G' },
  { flag: 'max-cpu', key: 'cpuSeconds', parse: parseCount, want: 'a positive whole number of seconds' },
]

/** The limits the flags in `values` set (undefined: none); every bad value named in one UsageError. */
export function limitsFrom(values: Record<string, unknown>): ResourceLimits | undefined {
  const limits: ResourceLimits = {}
  const bad: string[] = []
  for (const { flag, key, parse, want } of FLAGS) {
    const text = values[flag] as string | undefined
    if (text === undefined) continue
    const n = parse(text)
    if (n === undefined) bad.push(`--${flag}: "${displayLine(text)}" is not ${want}`)
    else limits[key] = n
  }
  if (bad.length > 0) throw new UsageError(bad.join('\n'))
  return Object.keys(limits).length > 0 ? limits : undefined
}

/** `policy` with the limits the flags in `values` set (itself when they set none). */
export function withLimits(policy: SandboxExecutionPolicy, values: Record<string, unknown>): SandboxExecutionPolicy {
  const limits = limitsFrom(values)
  return limits === undefined ? policy : { ...policy, limits: { ...policy.limits, ...limits } }
}
