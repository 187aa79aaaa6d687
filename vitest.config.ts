import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real processes and a noisy 2-core machine: generous per-test time, no parallel
    // file storm that would starve the timing-sensitive process tests.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    reporters: ['default'],
  },
})
