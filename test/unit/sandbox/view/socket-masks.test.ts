// The host directories whose unix sockets a bubblewrap run cannot reach, on this host's real
// directories: /run always (a directory on every Linux host), the runtime dir and the SSH agent's
// directory when they are absolute directories, nested masks folded into the outer one, and what
// the policy allows under a mask bound back.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { socketMasksFor } from '../../../../src/sandbox/view/socket-masks.js'
import { scratchDir } from '../../../support/scratch.js'

const root = scratchDir('cordon-socket-masks')
const runtime = path.join(root, 'runtime')
const agent = path.join(root, 'agent')
fs.mkdirSync(path.join(runtime, 'inner'), { recursive: true })
fs.mkdirSync(agent, { recursive: true })
fs.writeFileSync(path.join(runtime, 'bus'), '')

describe('socketMasksFor', () => {
  it('masks /run, and never / or /tmp', () => {
    const { masks } = socketMasksFor([], {})
    expect(masks).toContain(fs.realpathSync('/run'))
    expect(masks).not.toContain('/')
    expect(masks).not.toContain('/tmp')
  })

  it("masks the runtime dir and the SSH agent's directory; relative ones are ignored", () => {
    const { masks } = socketMasksFor([], { XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: path.join(agent, 'sock') })
    expect(masks).toEqual(expect.arrayContaining([runtime, agent]))
    const relative = socketMasksFor([], { XDG_RUNTIME_DIR: 'runtime', SSH_AUTH_SOCK: 'agent/sock' }).masks
    expect(relative).not.toContain(runtime)
    expect(relative).not.toContain(agent)
  })

  it("masks every tmux server dir under $TMUX_TMPDIR and /tmp, and $TMUX's socket dir", () => {
    const tmuxTmp = path.join(root, 'tmux-tmp')
    fs.mkdirSync(path.join(tmuxTmp, 'tmux-1000'), { recursive: true })
    fs.mkdirSync(path.join(tmuxTmp, 'tmux-x'), { recursive: true })
    const elsewhere = path.join(root, 'elsewhere')
    fs.mkdirSync(elsewhere, { recursive: true })
    const { masks } = socketMasksFor([], { TMUX_TMPDIR: tmuxTmp, TMUX: `${path.join(elsewhere, 'default')},1234,0` })
    expect(masks).toEqual(expect.arrayContaining([path.join(tmuxTmp, 'tmux-1000'), elsewhere]))
    expect(masks).not.toContain(path.join(tmuxTmp, 'tmux-x'))
    expect(socketMasksFor([], { TMUX: 'default,1,0' }).masks).not.toContain(fs.realpathSync(process.cwd()))
  })

  it('folds a mask inside another into it', () => {
    const { masks } = socketMasksFor([], { XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: path.join(runtime, 'inner', 's') })
    expect(masks).toContain(runtime)
    expect(masks).not.toContain(path.join(runtime, 'inner'))
  })

  it('binds back what the policy allows under a mask, not the mask itself nor what does not exist', () => {
    const allow = [path.join(runtime, 'bus'), runtime, path.join(runtime, 'absent'), path.join(root, 'elsewhere')]
    const { keep } = socketMasksFor(allow, { XDG_RUNTIME_DIR: runtime })
    expect(keep).toContain(path.join(runtime, 'bus'))
    expect(keep).not.toContain(runtime)
    expect(keep).not.toContain(path.join(runtime, 'absent'))
    expect(keep).not.toContain(path.join(root, 'elsewhere'))
  })
})
