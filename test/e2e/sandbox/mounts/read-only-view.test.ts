// Read-only runs unpack and copy into their own TMPDIR with modes and times kept (tar -x, cp -a,
// chmod +x, touch, xattrs), while the same metadata calls outside the writable set fail EROFS —
// each refusal with its control: the same call on the same object succeeds unconfined, as root
// and as uid 65534, through the CLI (issue 24, item 1). Under Landlock the refusal comes from the
// run's own mount namespace (the host read-only but for TMPDIR), not from seccomp.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendStatus, gateFor } from '../../../support/sandbox/backends.js'
import { cordonArgv, NOBODY, spawnAs } from '../../../support/workload/run.js'

const USERS = [0, NOBODY] as const
const ENV = { PATH: '/usr/bin:/bin', HOME: '/', LC_ALL: 'C' }

let base = ''
beforeAll(() => {
  base = fs.realpathSync(fs.mkdtempSync('/var/tmp/cordon-ro-view-'))
  fs.chmodSync(base, 0o755)
})
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

/** A dir owned by `uid` outside every grant, holding `outside` (0644, its times now). */
function outsideDir(uid: number): string {
  const dir = fs.mkdtempSync(path.join(base, `u${uid}-`))
  fs.writeFileSync(path.join(dir, 'outside'), 'host\n', { mode: 0o644 })
  fs.chownSync(dir, uid, uid)
  fs.chownSync(path.join(dir, 'outside'), uid, uid)
  return dir
}

const INSIDE = `set -u
d=$(mktemp -d); cd "$d"
printf x > f
chmod 755 f && echo chmod-in
touch -d 2001-01-01 f && echo touch-in
mkdir src && printf y > src/g && chmod 640 src/g && cp -a src copy && echo cp-a
tar -cf a.tar src && mkdir u && tar -xpf a.tar -C u && echo tar-x
[ "$(stat -c %a u/src/g)" = 640 ] && [ "$(stat -c %a copy/g)" = 640 ] && echo modes-kept
/usr/bin/python3 -c 'import os; os.setxattr("f", "user.k", b"1")' && echo xattr-in
echo > /dev/null && echo devnull-writes`

/** The metadata calls on `target` (and /dev/null for root): one line per outcome. */
const outside = (target: string, root: boolean) => `
chmod 600 '${target}' 2>&1 && echo chmod-out-done
touch -d 2001-01-01 '${target}' 2>&1 && echo touch-out-done
/usr/bin/python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.k", b"1"); print("xattr-out-done")' '${target}' 2>&1 | tail -1
${root ? 'chmod 666 /dev/null 2>&1 && echo devnull-chmod-done' : ''}
true`

const status = await Promise.all(['landlock', 'bubblewrap'].map((b) => backendStatus(b as 'landlock')))

describe.each(['landlock', 'bubblewrap'] as const)('read-only metadata on %s', (backend) => {
  const gate = gateFor(status[backend === 'landlock' ? 0 : 1]!)
  describe.each(USERS)('as uid %i', (uid) => {
    it('works in TMPDIR, fails EROFS outside, and each refusal succeeds unconfined', async (ctx) => {
      if (gate === 'skip') ctx.skip(`${backend} is not usable on this host`)
      if (gate === 'fail') throw new Error(`${backend} is required (CORDON_REQUIRE_BACKENDS) but not usable`)
      const dir = outsideDir(uid)
      const target = path.join(dir, 'outside')
      const before = fs.statSync(target)
      const script = `${INSIDE}\n${outside(target, uid === 0)}`
      const confined = await spawnAs(
        uid,
        cordonArgv(['--backend', backend, '--mode', 'read-only', '--', 'bash', '-c', script]),
        { cwd: dir, env: ENV },
      )
      const lines = confined.stdout.split('\n')
      for (const ok of ['chmod-in', 'touch-in', 'cp-a', 'tar-x', 'modes-kept', 'xattr-in', 'devnull-writes'])
        expect(lines, `${ok}\n${confined.stdout}${confined.stderr}`).toContain(ok)
      for (const done of ['chmod-out-done', 'touch-out-done', 'xattr-out-done', 'devnull-chmod-done'])
        expect(lines, confined.stdout).not.toContain(done)
      expect(confined.stdout).toMatch(/chmod: changing permissions of .*outside.*: Read-only file system/)
      expect(confined.stdout).toMatch(/touch: .*outside.*: Read-only file system/)
      expect(confined.stdout).toMatch(/OSError: \[Errno 30\] Read-only file system/)
      if (uid === 0) expect(confined.stdout).toMatch(/'\/dev\/null': Read-only file system/)
      const after = fs.statSync(target)
      expect([after.mode, after.mtimeMs]).toEqual([before.mode, before.mtimeMs])
      expect(fs.statSync('/dev/null').mode & 0o777).toBe(0o666)

      // The controls: the same calls on the same objects, unconfined, as the same user.
      const control = await spawnAs(uid, ['bash', '-c', outside(target, uid === 0)], { cwd: dir, env: ENV })
      const done = control.stdout.split('\n')
      for (const d of [
        'chmod-out-done',
        'touch-out-done',
        'xattr-out-done',
        ...(uid === 0 ? ['devnull-chmod-done'] : []),
      ])
        expect(done, control.stdout).toContain(d)
      expect(fs.statSync(target).mode & 0o777).toBe(0o600)
    }, 60_000)
  })
})
