import { defineConfig } from 'vitest/config'

/**
 * The suites of the subprocess floor that run a second time, on the portable spawn path
 * (test/e2e/portable/*.test.ts choose their paths themselves and run once).
 */
const PORTABLE_SUITES = ['test/e2e/subprocess/runtime.test.ts']

export default defineConfig({
  test: {
    // Real processes and a noisy 2-core machine: generous per-test time, no parallel
    // file storm that would starve the timing-sensitive process tests.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    // Tags each run's scratch dirs and fails the run when one is left in the temp dir.
    globalSetup: ['test/support/scratch-guard.ts'],
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'native', include: ['test/**/*.test.ts'] } },
      // The same suites over node:child_process (what macOS and addon-less hosts get).
      { extends: true, test: { name: 'portable', include: PORTABLE_SUITES, env: { CORDON_SPAWN: 'portable' } } },
    ],
  },
})
