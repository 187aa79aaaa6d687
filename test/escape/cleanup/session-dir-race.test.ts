// A confined command still running when the host disposes its sandbox (a background job the host
// did not wait for) races the removal of its session temp dir: it swaps a directory of its TMPDIR
// for a link to a host directory over and over (renameat2 RENAME_EXCHANGE). A removal that walks
// by path (Node's fs.rm) follows the link and deletes the host's files: the control, run against
// the same racer until it does. cordon's dispose removes by directory fd with O_NOFOLLOW and
// deletes nothing outside, on every backend, in many rounds, with the host as root and as uid 65534
// (test/escape/cleanup/session-dir-race-host.ts is the host).
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { removeTree, removeTreeSync } from '../../../src/subprocess/private-dirs/remove-tree.js'
import { needBackend, TEST_BACKENDS } from '../../support/sandbox/backends.js'
import { scratchDir, scratchDirAs } from '../../support/scratch.js'
import { linkSwapRacer, racing, victimDir } from './swap-racer.js'
import { REPO, runScriptAs, USERS } from '../host/run-as.js'

const HOST = path.join(REPO, 'test/escape/cleanup/session-dir-race-host.ts')

const FILES = 40
const CONTROL_ROUNDS = 150
const CONFINED_ROUNDS = 25

const RACER = linkSwapRacer(FILES)

const victim = (base: string) => victimDir(base, FILES)

describe('the session temp dir is removed without following a link a running command swaps in', () => {
  it('removeTreeSync and removeTree against the same racer delete no host file', async () => {
    const base = scratchDir('cordon-rmrace-helper')
    let lost = 0
    for (let round = 0; round < CONFINED_ROUNDS * 2; round++) {
      const v = victim(base)
      const tree = path.join(base, `tree${round}`)
      fs.mkdirSync(tree)
      const racer = spawn('python3', ['-c', RACER, tree, v.dir], { stdio: ['ignore', 'pipe', 'inherit'] })
      await racing(racer)
      if (round % 2 === 0) removeTreeSync(tree)
      else await removeTree(tree)
      racer.kill('SIGKILL')
      await new Promise((resolve) => racer.once('exit', resolve))
      if (v.left() < FILES) lost++
      fs.rmSync(tree, { recursive: true, force: true })
    }
    expect(lost).toBe(0)
  }, 240_000) // 50 python racers: slow on a loaded 2-core machine

  it('removeTreeSync removes files, nested dirs, links, fifos and sockets, and nothing a link points to', () => {
    const base = scratchDir('cordon-rmtree')
    const v = victim(base)
    const tree = path.join(base, 'tree')
    fs.mkdirSync(path.join(tree, 'a/b/c'), { recursive: true })
    fs.writeFileSync(path.join(tree, 'a/b/c/f'), 'x')
    fs.symlinkSync(v.dir, path.join(tree, 'a/dirlink'))
    fs.symlinkSync(path.join(v.dir, 'f0'), path.join(tree, 'a/b/filelink'))
    fs.symlinkSync('/nonexistent', path.join(tree, 'dangling'))
    spawnSync('mkfifo', [path.join(tree, 'a/fifo')])
    const sock = spawnSync('python3', [
      '-c',
      `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(path.join(tree, 's'))})`,
    ])
    expect(sock.status).toBe(0)
    fs.chmodSync(path.join(tree, 'a/b'), 0o500) // read-only for its owner: root still removes it
    removeTreeSync(tree)
    expect(fs.existsSync(tree)).toBe(false)
    expect(v.left()).toBe(FILES)
    removeTreeSync(tree) // gone already: nothing happens
  })

  for (const user of USERS)
    describe(`with the host as ${user}: fs.rm loses host files, cordon's dispose none`, () => {
      const host = (args: object) =>
        runScriptAs(user, HOST, [JSON.stringify({ files: FILES, ...args })], { timeoutMs: 170_000 }).then((r) => {
          expect(r.code, r.stderr).toBe(0)
          return JSON.parse(r.stdout.trim().split('\n').pop() as string) as { rounds: number; hits: number }
        })
      it(`control: fs.rm run by ${user} against the racer deletes its host files`, async () => {
        const base = scratchDirAs(user, 'cordon-rmrace-control')
        const r = await host({ how: 'fs-rm', base, rounds: CONTROL_ROUNDS })
        expect(r.hits, `no host file lost in ${r.rounds} rounds`).toBe(1)
      }, 180_000)
      for (const backend of TEST_BACKENDS)
        it(`${backend}: dispose by ${user} during a confined racer deletes no host file (${CONFINED_ROUNDS} rounds)`, async (ctx) => {
          await needBackend(ctx, backend)
          const base = scratchDirAs(user, `cordon-rmrace-${backend}`)
          expect(await host({ how: 'dispose', backend, base, rounds: CONFINED_ROUNDS })).toEqual({
            rounds: CONFINED_ROUNDS,
            hits: 0,
          })
        }, 180_000)
    })
})
