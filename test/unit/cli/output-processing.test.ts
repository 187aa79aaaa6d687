// Output processing off on a real terminal without a program found through PATH: a child on a
// real pty (node-pty) turns OPOST off through outputProcessingOff (dist/, as the CLI runs it) and
// its "\n" reaches the master bare; turned back on, "\n" is "\r\n" again. Without the addon a
// trusted absolute stty does it, and a planted stty (in a directory others may write) is refused
// and never run, while the same plant run by its path does run (the control).
import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { loadPty } from '../../../src/subprocess/terminal/pty.js'
import { findTrustedProgram } from '../../../src/subprocess/trusted-program.js'
import { describePty } from '../../support/subprocess/terminal.js'
import { scratchDir } from '../../support/scratch.js'
import { spawnSync } from 'node:child_process'

const dist = path.resolve(import.meta.dirname, '..', '..', '..', 'dist')

/** The child: prints a line, turns OPOST off with `tools`, prints, turns it back on, prints. */
function childScript(tools: string): string {
  return `
import { outputProcessingOff } from ${JSON.stringify(path.join(dist, 'cli', 'output-processing.js'))}
import { loadNative } from ${JSON.stringify(path.join(dist, 'subprocess', 'native.js'))}
import { spawnSync } from 'node:child_process'
const tools = ${tools}
process.stdout.write('on:a\\n')
const notice = outputProcessingOff(0, tools)
process.stdout.write('off:' + (notice ?? 'none') + '|b\\n')
if (tools.native === null) spawnSync(tools.stty, ['opost'], { stdio: [0, 'ignore', 'ignore'] })
else loadNative().setOutputProcessing(0, true)
process.stdout.write('again:c\\n')
`
}

/** Runs `script` on a fresh pty and returns every byte its master read. */
async function onPty(script: string): Promise<string> {
  if (!fs.existsSync(path.join(dist, 'cli', 'output-processing.js')))
    throw new Error('dist/ is not built (npm run build:ts)')
  const pty = await loadPty()
  const child = pty.spawn(process.execPath, ['--input-type=module', '-e', script], {
    name: 'xterm',
    cols: 200,
    rows: 24,
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    encoding: null,
  })
  let out = ''
  child.onData((d) => {
    out += d.toString()
  })
  await new Promise((resolve) => child.onExit(resolve))
  return out
}

await describePty('outputProcessingOff on a real pty', () => {
  it('through the addon: OPOST really off after the call, on again after restoring', async () => {
    const out = await onPty(childScript('{}'))
    expect(out).toContain('on:a\r\n')
    expect(out).toContain('off:none|b\n')
    expect(out).not.toContain('|b\r\n')
    expect(out).toContain('again:c\r\n')
  })

  it('without the addon: a trusted absolute stty does it', async () => {
    const stty = findTrustedProgram('stty').identity?.path
    expect(stty).toBeDefined()
    const out = await onPty(childScript(`{ native: null, stty: ${JSON.stringify(stty)} }`))
    expect(out).toContain('off:none|b\n')
    expect(out).not.toContain('|b\r\n')
    expect(out).toContain('again:c\r\n')
  })

  it('without the addon, a planted stty is refused and never run: OPOST stays on and says so', async () => {
    const dir = scratchDir('cordon-planted-stty')
    const marker = path.join(scratchDir('cordon-stty-marker'), 'ran')
    const planted = path.join(dir, 'stty')
    fs.writeFileSync(planted, `#!/bin/sh\necho "$*" >> ${marker}\n`, { mode: 0o755 })
    fs.chmodSync(dir, 0o777)
    const tools = `{ native: null, sttyDirs: [${JSON.stringify(dir)}], stty: '/bin/true' }`
    const out = await onPty(childScript(tools))
    expect(out).toMatch(
      /off:cordon: output processing stays on \(no addon, and no trusted stty: \S+stty: \S+ is writable by others\)/,
    )
    expect(out).toMatch(/\|b\r\n/)
    expect(fs.existsSync(marker)).toBe(false)
    spawnSync(planted, ['-opost']) // the control: the plant runs when run by its path
    expect(fs.readFileSync(marker, 'utf8')).toBe('-opost\n')
  })
})
