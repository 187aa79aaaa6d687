// Attack (found by an attacker's pass): a command reaches its run's supervisor (pid 1 of the run's
// pid namespace, same uid) and sets the supervisor's RLIMIT_NOFILE to 0 the moment it starts. A
// resident supervisor answers the host after the command is exec'd; when that answer needed a new
// descriptor, the host reported "spawn failed at launcher: EMFILE" for a command that had run.
// Now seccomp limits prlimit (and scheduling) to the caller even in a pid namespace, and the
// supervisor opens its pidfd before the command starts. Controls: the same program aimed at
// itself (pid 0) succeeds, and a bwrap per run reports every run as it happened.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { SandboxExecutionPolicy } from '../../../src/policy/vocabulary.js'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalSubprocessRuntime } from '../../../src/subprocess/runtime.js'
import { describeWithBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

// A static program with no libc: prlimit64(TARGET, RLIMIT_NOFILE, {LIMIT, LIMIT}) is its first
// instruction's work, then it appends one line ("ran 0": the prlimit succeeded, "ran E": refused)
// to racer.out in its cwd. TARGET 1 (LIMIT 0) is the supervisor; 0 (LIMIT 64, so that it can
// still open its file) the program itself.
const RACER = `
#include <sys/syscall.h>
#include <sys/resource.h>
#include <fcntl.h>
static long sc(long n, long a, long b, long c, long d) {
  long r; register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}
__attribute__((force_align_arg_pointer)) void _start(void) {
  struct rlimit z = {LIMIT, LIMIT};
  long rc = sc(SYS_prlimit64, TARGET, RLIMIT_NOFILE, (long)&z, 0);
  char msg[] = "ran 0\\n";
  if (rc != 0) msg[4] = 'E';
  long fd = sc(SYS_openat, AT_FDCWD, (long)"racer.out", O_WRONLY | O_CREAT | O_APPEND, 0644);
  sc(SYS_write, fd, (long)msg, sizeof msg - 1, 0);
  sc(SYS_exit_group, 0, 0, 0, 0);
}
`

const racers: { supervisor?: string; itself?: string } = {}
beforeAll(() => {
  // Only x86-64 (the racer is x86-64 assembly): elsewhere no racer is built and the test skips.
  const dir = scratchDir('cordon-racer-src')
  fs.writeFileSync(path.join(dir, 'racer.c'), RACER)
  for (const [name, target, limit] of [
    ['supervisor', 1, 0],
    ['itself', 0, 64],
  ] as const) {
    const out = path.join(dir, `racer-${name}`)
    const flags = ['-O2', '-static', '-nostdlib', '-fno-stack-protector', `-DTARGET=${target}`, `-DLIMIT=${limit}`]
    const cc = process.arch === 'x64' ? spawnSync('gcc', [...flags, '-o', out, path.join(dir, 'racer.c')]) : undefined
    if (cc?.status === 0) racers[name] = out
  }
})

const owned: Array<{ dispose(): Promise<void> }> = []
afterAll(async () => {
  for (const o of owned.reverse()) await o.dispose()
})

/** Runs the racer `tries` times; how many runs were reported failed, and how many of those had run. */
async function race(
  sandbox: LocalSandbox,
  tries: number,
  racer: string,
): Promise<{ failed: number; ranAnyway: string[]; ran: number; lines: string[] }> {
  const root = scratchDir('cordon-resident-race')
  fs.copyFileSync(racer, path.join(root, 'racer'))
  fs.chmodSync(path.join(root, 'racer'), 0o755)
  const runtime = new LocalSubprocessRuntime()
  owned.push(runtime)
  const policy: SandboxExecutionPolicy = { mode: 'workspace-write', workspaceRoot: root, network: 'deny' }
  const lines = () => {
    try {
      return fs.readFileSync(path.join(root, 'racer.out'), 'utf8').split('\n').filter(Boolean)
    } catch {
      return []
    }
  }
  let failed = 0
  const ranAnyway: string[] = []
  for (let i = 0; i < tries; i++) {
    const before = lines().length
    const confined = sandbox.confine(
      {
        argv: [path.join(root, 'racer')],
        cwd: root,
        env: { PATH: '/usr/bin:/bin' },
        graceMs: 500,
        stdio: { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
      },
      policy,
    )
    const outcome = await runtime.spawn(confined.spec).done.then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    )
    if (outcome === undefined) continue
    failed++
    await new Promise((r) => setTimeout(r, 200))
    if (lines().length > before) ranAnyway.push(`run ${i}: reported "${outcome}", yet it ran: ${lines().at(-1)}`)
  }
  return { failed, ranAnyway, ran: lines().length, lines: lines() }
}

await describeWithBackend('bubblewrap', 'resident instances: a run reported as not started never ran', (sandbox) => {
  it("a command cannot lower its supervisor's RLIMIT_NOFILE, and every run is reported as it happened", async (ctx) => {
    const { supervisor, itself } = racers
    if (supervisor === undefined || itself === undefined)
      return ctx.skip('needs gcc and x86-64 to build the static racer')
    // Control: aimed at itself, the same call succeeds in an instance.
    const own = await race(sandbox(), 5, itself)
    expect(own.lines).toEqual(Array(5).fill('ran 0'))
    // Control: a bwrap per run reports every run as it happened.
    const perRun = await LocalSandbox.create({
      backends: ['bubblewrap'],
      capabilities: sandbox().capabilities,
      residentInstances: false,
    })
    owned.push(perRun)
    const control = await race(perRun, 20, supervisor)
    expect(control.ranAnyway).toEqual([])
    expect(control.ran).toBe(20)
    // The attack, in resident instances (the default): refused, and no run misreported.
    const attacked = await race(sandbox(), 150, supervisor)
    expect(attacked.ranAnyway).toEqual([])
    expect(attacked.failed).toBe(0)
    expect(new Set(attacked.lines)).toEqual(new Set(['ran E']))
  }, 240_000)
})
