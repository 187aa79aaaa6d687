// `cordon run -c 'STRING'` (`--command`) runs STRING as bash reads it; `-- WORD...` quotes each
// word. One quoted word that reads like a shell command (`-- 'echo $HOME'`) is a program no one
// has: bash says "command not found" (127), and then, only then, cordon hints at -c.
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { describePty } from '../../../support/subprocess/terminal.js'
import { scratchDir } from '../../../support/scratch.js'

const bin = join(import.meta.dirname, '..', '..', '..', '..', 'bin', 'cordon.js')
const root = scratchDir('cordon-command')
const env = { ...process.env, CORDON_T_WORD: 'expanded' }

function cordon(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000, env })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const FREE = ['run', '--mode', 'danger-full-access']
const HINT = `cordon: hint: 'echo $CORDON_T_WORD' ran as one word, the name of a program; to run it as a shell command: cordon run -c 'echo $CORDON_T_WORD'\n`

describe('cordon run -c', () => {
  it('runs the string as bash reads it: variables, pipes, status', () => {
    const r = cordon([...FREE, '-c', 'echo "$CORDON_T_WORD" | tr a-z A-Z; exit 3'])
    expect(r.status).toBe(3)
    expect(r.stdout).toBe('EXPANDED\n')
    const long = cordon([...FREE, '--command', 'printf "%s|" $((6*7)) *.none'])
    expect(long.stdout).toBe('42|*.none|')
    // The control: the same words after -- are quoted one by one.
    expect(cordon([...FREE, '--', 'printf', '%s|', '$((6*7))']).stdout).toBe('$((6*7))|')
  })

  it('-c with words after -- is a usage error, nothing run; so is an empty string', () => {
    const marker = join(root, 'ran')
    const both = cordon([...FREE, '-c', `touch ${marker}`, '--', 'touch', marker])
    expect(both.status).toBe(125)
    expect(both.stderr).toBe(
      'cordon run: -c takes the whole command as one string; drop the words after it (touch…) or drop -c\nsee cordon run --help\n',
    )
    expect(existsSync(marker)).toBe(false)
    expect(cordon([...FREE, '-c', ' ']).stderr.split('\n')[0]).toBe('cordon run: -c: the command is empty')
  })

  it('one quoted word that bash cannot find: its own message, then the hint; exit 127 kept', () => {
    const r = cordon([...FREE, '--', 'echo $CORDON_T_WORD'])
    expect(r.status).toBe(127)
    // bash 5.1+ names the line; older ones do not.
    expect(r.stderr).toMatch(/^bash: (line 1: )?echo \$CORDON_T_WORD: command not found\n/)
    expect(r.stderr.split('\n').slice(1).join('\n')).toBe(HINT)
    expect(cordon([...FREE, '-c', 'echo $CORDON_T_WORD']).stdout).toBe('expanded\n')
  })

  it('no hint otherwise: a plain missing program, a found one-word program, several words, --json', () => {
    const missing = cordon([...FREE, '--', 'cordon-no-such-program'])
    expect(missing.status).toBe(127)
    expect(missing.stderr).not.toContain('hint')
    const script = join(root, 'my prog')
    writeFileSync(script, '#!/bin/sh\necho ran\n')
    chmodSync(script, 0o755)
    const found = cordon([...FREE, '--', './my prog'])
    expect(found).toMatchObject({ status: 0, stdout: 'ran\n', stderr: '' })
    const words = cordon([...FREE, '--', 'echo $CORDON_T_WORD', 'x'])
    expect(words.status).toBe(127)
    expect(words.stderr).not.toContain('hint')
    const json = cordon([...FREE, '--json', '--', 'echo $CORDON_T_WORD'])
    expect(json.status).toBe(127)
    expect(json.stderr).toBe('')
  })
})

await describePty('cordon run --tty -c', () => {
  it('runs the string on a terminal as bash reads it', () => {
    const r = cordon([...FREE, '--tty', '-c', 'test -t 1 && echo "tty $((6*7)) $CORDON_T_WORD"; exit 4'])
    expect(r.status).toBe(4)
    expect(r.stdout).toBe('tty 42 expanded\r\n')
  })
})
