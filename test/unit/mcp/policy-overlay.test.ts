// The flags' policy fields `cordon mcp` lays over each run's policy: what a resolved policy sets
// of the fields no configuration holds is carried (writable roots, hidden and protected paths
// reach the tool through its config, under the approval digest), the run's own mode, root,
// session and network never changed; the sandbox beneath sees the laid-over policy.
import { describe, expect, it } from 'vitest'
import { overlaid, overlaidSandbox, overlayOf } from '../../../src/mcp/policy-overlay.js'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import type { ShellSandbox } from '../../../src/shell/executor.js'
import type { SubprocessSpawnSpec } from '../../../src/subprocess/types.js'

const flags: SandboxExecutionPolicy = {
  mode: 'workspace-write',
  workspaceRoot: '/w',
  network: 'deny',
  writableRoots: ['/extra'],
  hiddenPaths: ['/secret'],
  protectedPaths: ['build.sh'],
  hiddenDefaults: { except: ['npmrc'] },
  requireEnforcement: 'full',
}

describe('the policy overlay', () => {
  it('takes the fields a policy sets, and only those', () => {
    expect(overlayOf(flags)).toEqual({
      hiddenDefaults: { except: ['npmrc'] },
      requireEnforcement: 'full',
    })
    expect(overlayOf({ mode: 'read-only', workspaceRoot: '/w' })).toEqual({})
  })

  it('lays them over a run, the run its own mode, network and paths', () => {
    const run = {
      mode: 'read-only' as const,
      workspaceRoot: '/w',
      sessionId: 's',
      network: 'inherit' as const,
      hiddenPaths: ['/tool-set'],
    }
    expect(overlaid(run, overlayOf(flags))).toEqual({
      ...run,
      hiddenDefaults: { except: ['npmrc'] },
      requireEnforcement: 'full',
    })
  })

  it('the sandbox beneath confines under the laid-over policy', () => {
    const seen: SandboxExecutionPolicy[] = []
    const below: ShellSandbox = {
      confine: (spec, policy) => {
        seen.push(policy)
        return { spec, backend: 'test' }
      },
    }
    const spec = { argv: ['true'], cwd: '/w' } as unknown as SubprocessSpawnSpec
    overlaidSandbox(below, overlayOf(flags)).confine(spec, { mode: 'read-only', workspaceRoot: '/w' })
    expect(seen).toEqual([
      {
        mode: 'read-only',
        workspaceRoot: '/w',
        hiddenDefaults: { except: ['npmrc'] },
        requireEnforcement: 'full',
      },
    ])
  })

  it('keeps the sandbox’s refusal log: noteRun and refusals reach the sandbox beneath', () => {
    const noted: unknown[] = []
    const below: ShellSandbox = {
      confine: (spec) => ({ spec, backend: 'test' }),
      noteRun: (run) => void noted.push(run),
      refusals: () => ({ entries: [], lastRun: 7, dropped: 0 }),
    }
    const over = overlaidSandbox(below, {})
    over.noteRun?.({ run: 1 } as never)
    expect(noted).toEqual([{ run: 1 }])
    expect(over.refusals?.()).toEqual({ entries: [], lastRun: 7, dropped: 0 })
    expect(overlaidSandbox({ confine: below.confine }, {})).not.toHaveProperty('refusals')
  })
})
