// A closed class is a fact of a run only when the plan really closes it and the failed run's
// output shows a known tool met it: the same message under a plan that leaves the class open,
// or from a run that succeeded, is no fact.
import { describe, expect, it } from 'vitest'
import { type ClosingPlan, closedClassesMet } from '../../../../src/sandbox/closed-classes/met.js'

const landlock: ClosingPlan = {
  backend: 'landlock',
  policy: { network: 'deny' },
  seccomp: { input: { network: 'deny', privateNet: true } },
}
const bubblewrap: ClosingPlan = {
  backend: 'bubblewrap',
  policy: {},
  seccomp: { input: { network: 'inherit', privateNet: false, privateDevpts: true } },
  mounts: { shm: '/s' },
}
const PTY = "    raise OSError('out of pty devices')\nOSError: out of pty devices"

describe('closedClassesMet', () => {
  it('a failed run whose output shows a closed class: the class, what it met and why, and the flags', () => {
    expect(closedClassesMet(landlock, { exitCode: 1, stderr: PTY })).toEqual([
      {
        class: 'terminals',
        evidence:
          "Python's pty could not open a pseudo-terminal: new ptys cannot be opened under landlock (/dev/ptmx and /dev/pts are closed)",
        remedy: '--backend bubblewrap',
      },
    ])
  })

  it('reads stdout too, and every class met', () => {
    const met = closedClassesMet(landlock, {
      exitCode: 2,
      stderr: 'Error: connect EPERM /run/x.sock',
      stdout: 'script: failed to create pseudo-terminal: Permission denied',
    })
    expect(met.map((m) => m.class)).toEqual(['terminals', 'unix-sockets'])
  })

  it('no fact where the plan leaves the class open (the control), nor for a run that exited 0, died or never ran', () => {
    expect(closedClassesMet(bubblewrap, { exitCode: 1, stderr: PTY })).toEqual([])
    expect(closedClassesMet(landlock, { exitCode: 0, stderr: PTY })).toEqual([])
    expect(closedClassesMet(landlock, { exitCode: null, stderr: PTY })).toEqual([])
    expect(closedClassesMet(landlock, { exitCode: 1, stderr: PTY, runnerFailed: true })).toEqual([])
    expect(closedClassesMet(landlock, { exitCode: 1, stderr: 'make: *** [all] Error 1' })).toEqual([])
  })
})
