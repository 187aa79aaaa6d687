// A denial's relative path resolves where the failing command really ran: the executor's shell logs
// each directory it changes to (profiles/dir-log.bash), so `cd sub && touch x` names
// sub/x, not the cwd's x. Real Landlock, real bash; the user's own BASH_ENV still runs.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalSandbox } from '../../../src/sandbox/local-sandbox.js'
import { LocalShellExecutor } from '../../../src/shell/executor.js'
import { needBackend } from '../../support/sandbox/backends.js'
import { scratchDir } from '../../support/scratch.js'

const base = fs.realpathSync(scratchDir('cordon-denial-cwd'))
const root = path.join(base, 'root')
fs.mkdirSync(path.join(root, 'pkg', 'sub'), { recursive: true })
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

describe('denial paths after cd', () => {
  it('names the file in the directory the command cd-ed into, leaves no log behind, and keeps BASH_ENV', async (ctx) => {
    await needBackend(ctx, 'landlock')
    const sandbox = await LocalSandbox.create({ backends: ['landlock'] })
    const ex = new LocalShellExecutor({ cwd: root, workspaceRoot: root, sandbox })
    const userEnv = path.join(base, 'user-env.sh')
    fs.writeFileSync(userEnv, 'export FROM_USER_BASH_ENV=yes\n')
    try {
      const r = await ex.run(ex.resolve({ command: 'cd pkg/sub && touch x', env: { BASH_ENV: userEnv } }))
      expect(r.sandbox).toMatchObject({ denied: true, deniedPaths: [path.join(root, 'pkg', 'sub', 'x')] })
      const env = await ex.run(
        ex.resolve({
          command: 'echo "$FROM_USER_BASH_ENV ${BASH_ENV-unset} ${CORDON_DIR_LOG-unset}"',
          env: { BASH_ENV: userEnv },
        }),
      )
      expect(env.stdout.text).toBe(`yes ${userEnv} unset\n`)
      // .run is the session's runtime dir (XDG_RUNTIME_DIR, TMUX_TMPDIR), made before any run.
      const leftovers = await ex.run(ex.resolve({ command: 'ls -A "$TMPDIR" | grep -vx .run' }))
      expect(leftovers.stdout.text).toBe('')
      // A relative path with no cd at all still resolves against the cwd.
      const plain = await ex.run(ex.resolve({ command: 'touch pkg/y' }))
      expect(plain.sandbox?.deniedPaths).toEqual([path.join(root, 'pkg', 'y')])
    } finally {
      await sandbox.dispose()
    }
  })
})
