/**
 * The load suite (issue 28): per backend, mode and face (executor, bash tool), 1,000 sequential
 * runs and 200 concurrent ones, each on a fresh sandbox. After each: no descriptor the host did
 * not hold before, no zombie, no process of the runs, no session, temp or spill file, no cgroup
 * leaf but the set made ahead; and the host's RSS after run 1,000 within 10% of its RSS after run
 * 100. The baseline is read once every kind of run has started once: the launchers of this host
 * thread, one per kind of run, stay by design.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxBackendName } from '../../src/policy/backends.js'
import type { SandboxMode } from '../../src/policy/vocabulary.js'
import { backendStatus, gateFor } from '../support/sandbox/backends.js'
import { eventually } from '../support/subprocess/processes.js'
import { type Face, Fleet } from './fleet.js'
import {
  type Baseline,
  descendants,
  fdChanges,
  hostBaseline,
  hostFds,
  leftovers,
  markedProcesses,
  ownPrivateDirs,
  settledRss,
  zombies,
} from './leak-watch.js'

export const SEQUENTIAL = 1000
export const CONCURRENT = 200
/** The run after which the RSS baseline is read. */
const RSS_FROM = 100
/** How much the RSS may grow from run RSS_FROM to the last run. */
const RSS_SLACK = 0.1
/** How long what a run left may take to go once its run resolved or its sandbox was disposed. */
const SETTLE_MS = 10_000
/** A generous per-test limit: a loaded CI core runs a confined command in tens of ms. */
const LOAD_TIMEOUT_MS = 600_000

const FACES: readonly Face[] = ['executor', 'tool']

/**
 * Starts every kind of run of `modes` once, a background job too (each kind's launcher stays),
 * then reads what the host holds.
 */
async function takeBaseline(backend: SandboxBackendName, modes: readonly SandboxMode[], root: string) {
  for (const mode of modes) {
    for (const face of FACES) {
      const fleet = await Fleet.open(backend, mode, face, root)
      for (let i = 1; i <= 3; i++) await fleet.run(i)
      fleet.startSleeper()
      await fleet.close()
    }
  }
  // The resident instances of the warm-up's sandboxes end once their runs have; a watched
  // pidfd is closed on the event loop's next turn.
  await eventually(() => !descendants().some((p) => p.cmdline.startsWith('bwrap')), SETTLE_MS)
  await new Promise((r) => setTimeout(r, 100))
  return hostBaseline()
}

/** What a fleet's runs left running or unreaped while it is open (empty: nothing). */
async function leftRunning(fleet: Fleet): Promise<string[]> {
  const left = () => [
    ...markedProcesses(fleet.marker).map((p) => `survivor ${p.pid} ${p.state} ${p.cmdline}`),
    ...zombies().map((p) => `zombie ${p.pid} (parent ${p.ppid}) ${p.cmdline}`),
  ]
  await eventually(() => left().length === 0, SETTLE_MS)
  return left()
}

/** What a closed fleet left in the host against `baseline` (empty: nothing), once it had time to go. */
async function leftAfterClose(fleet: Fleet, baseline: Baseline): Promise<string[]> {
  await eventually(() => leftovers(baseline, fleet.marker, fleet.spills).length === 0, SETTLE_MS)
  return leftovers(baseline, fleet.marker, fleet.spills)
}

/** Runs 1..SEQUENTIAL one after another; at run RSS_FROM and at the end, reads RSS and fds. */
async function sequential(fleet: Fleet): Promise<void> {
  let rssFrom = 0
  let fdsFrom = new Map<number, string>()
  let rulesetsFrom = 0
  for (let i = 1; i <= SEQUENTIAL; i++) {
    await fleet.run(i)
    if (i === RSS_FROM) {
      expect(await leftRunning(fleet), `after run ${i}`).toEqual([])
      // The dirs the check after close looks for are where this fleet's spill files are.
      const spill = fleet.spills.at(-1)!
      expect(
        ownPrivateDirs().filter((d) => spill.startsWith(`${d}/`)),
        spill,
      ).toHaveLength(1)
      rssFrom = settledRss()
      fdsFrom = hostFds()
      rulesetsFrom = fleet.openRulesets
    }
  }
  expect(await leftRunning(fleet), `after run ${SEQUENTIAL}`).toEqual([])
  const rss = settledRss()
  // A resident instance replaced meanwhile (a stale plan) may hold a handful; a leak per run holds hundreds.
  const { added } = fdChanges(fdsFrom, hostFds())
  expect(added.length, `fds opened between run ${RSS_FROM} and ${SEQUENTIAL}:\n${added.join('\n')}`).toBeLessThan(8)
  expect(fleet.openRulesets).toBeLessThanOrEqual(rulesetsFrom + 1)
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`
  expect(
    rss / rssFrom,
    `RSS ${mib(rssFrom)} after run ${RSS_FROM}, ${mib(rss)} after ${SEQUENTIAL}`,
  ).toBeLessThanOrEqual(1 + RSS_SLACK)
}

/** The two tests of one backend, mode and face: sequential and concurrent, each on a fresh fleet. */
function loadTests(backend: SandboxBackendName, mode: SandboxMode, face: Face, root: string, baseline: () => Baseline) {
  it(`${face}, ${mode}: ${SEQUENTIAL} sequential runs leave nothing, RSS flat`, {
    timeout: LOAD_TIMEOUT_MS,
  }, async () => {
    const fleet = await Fleet.open(backend, mode, face, root)
    try {
      await sequential(fleet)
    } finally {
      await fleet.close()
    }
    expect(await leftAfterClose(fleet, baseline())).toEqual([])
  })

  it(`${face}, ${mode}: ${CONCURRENT} concurrent runs leave nothing`, { timeout: LOAD_TIMEOUT_MS }, async () => {
    const fleet = await Fleet.open(backend, mode, face, root)
    try {
      await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => fleet.run(i + 1)))
      expect(await leftRunning(fleet)).toEqual([])
    } finally {
      await fleet.close()
    }
    expect(await leftAfterClose(fleet, baseline())).toEqual([])
  })
}

/** The control: a live job's sleeper is found by its marker, and its fleet's close leaves nothing. */
function controlTest(backend: SandboxBackendName, mode: SandboxMode, root: string, baseline: () => Baseline) {
  it(`control, ${mode}: a live job's sleeper is found by its marker; close leaves nothing`, async () => {
    const fleet = await Fleet.open(backend, mode, 'executor', root)
    try {
      fleet.startSleeper()
      const sleeping = () => markedProcesses(fleet.marker).some((p) => p.cmdline === 'sleep 60')
      expect(await eventually(sleeping, SETTLE_MS)).toBe(true)
      expect(leftovers(baseline(), fleet.marker).filter((l) => l.startsWith('survivor'))).not.toEqual([])
    } finally {
      await fleet.close()
    }
    expect(await leftAfterClose(fleet, baseline())).toEqual([])
  })
}

/** The tests of `modes` on sandboxes pinned to `backend`: the control, then every mode through both faces. */
function loadBody(backend: SandboxBackendName, modes: readonly SandboxMode[], root: string): void {
  let baseline: Baseline | undefined
  beforeAll(async () => {
    baseline = await takeBaseline(backend, modes, root)
  }, LOAD_TIMEOUT_MS)
  controlTest(backend, modes[0]!, root, () => baseline!)
  for (const mode of modes) for (const face of FACES) loadTests(backend, mode, face, root, () => baseline!)
}

/**
 * The load suite of both confined modes on `backend` (workspace `root`). Skipped with the reason
 * where the backend is unusable, failed where CORDON_REQUIRE_BACKENDS names it.
 */
export async function describeLoad(backend: SandboxBackendName, root: string): Promise<void> {
  const status = await backendStatus(backend)
  const gate = gateFor(status)
  if (gate === 'fail') {
    describe(`load [${backend}]`, () => {
      it(`requires the ${backend} backend (CORDON_REQUIRE_BACKENDS)`, () => {
        throw new Error(`backend ${backend} is required by CORDON_REQUIRE_BACKENDS but unusable: ${status.reason}`)
      })
    })
    return
  }
  const title = gate === 'skip' ? `load [${backend}] (skipped: ${status.reason})` : `load [${backend}]`
  describe.skipIf(gate === 'skip')(title, () => loadBody(backend, ['read-only', 'workspace-write'], root))
}

/**
 * The unconfined baseline: `danger-full-access`, which bypasses the sandbox (pinned to Landlock,
 * never asked), through both faces: what the executor and the tool leave without any backend.
 */
export function describeUnconfined(root: string): void {
  describe('load, unconfined baseline', () => loadBody('landlock', ['danger-full-access'], root))
}
