// Reading one config file as the host may trust it: absent is undefined; a symlink is refused for a
// project config (followed for --config FILE); a FIFO, a directory, a file over 64 KiB or not UTF-8
// is refused naming the file; the digest is the sha256 of the bytes read.
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readConfigFile, sha256Hex } from '../../../../src/policy/config/read-file.js'
import { MAX_CONFIG_BYTES } from '../../../../src/policy/config/schema.js'
import { isConfigInvalidError } from '../../../../src/policy/errors.js'
import { scratchDir } from '../../../support/scratch.js'

const dir = scratchDir('cordon-config-read')
const at = (name: string) => path.join(dir, name)

/** The issues of the ConfigInvalidError `read` throws. */
function refusal(read: () => unknown): { file: string; issues: readonly string[] } {
  try {
    read()
  } catch (error) {
    expect(isConfigInvalidError(error), String(error)).toBe(true)
    return error as { file: string; issues: readonly string[] }
  }
  throw new Error('no ConfigInvalidError')
}

describe('readConfigFile', () => {
  it('reads a regular file: its text and the sha256 of its bytes; absent is undefined', () => {
    fs.writeFileSync(at('c.json'), '{"mode":"read-only"}\n')
    const read = readConfigFile(at('c.json'), { followLinks: false })
    expect(read).toEqual({
      path: at('c.json'),
      text: '{"mode":"read-only"}\n',
      digest: createHash('sha256').update('{"mode":"read-only"}\n').digest('hex'),
    })
    expect(readConfigFile(at('missing.json'), { followLinks: false })).toBeUndefined()
    expect(readConfigFile(path.join(at('c.json'), 'below'), { followLinks: false })).toBeUndefined()
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('refuses a symlink unless told to follow it (--config FILE)', () => {
    fs.writeFileSync(at('target.json'), '{}')
    fs.symlinkSync(at('target.json'), at('link.json'))
    const r = refusal(() => readConfigFile(at('link.json'), { followLinks: false }))
    expect(r.file).toBe(at('link.json'))
    expect(r.issues[0]).toMatch(/^\(file\): is a symbolic link/)
    expect(readConfigFile(at('link.json'), { followLinks: true })?.text).toBe('{}')
    fs.symlinkSync(at('nowhere.json'), at('dangling.json'))
    expect(refusal(() => readConfigFile(at('dangling.json'), { followLinks: false })).issues[0]).toMatch(
      /symbolic link/,
    )
  })

  it('refuses what is not a regular file without blocking on it: a FIFO, a directory', () => {
    expect(spawnSync('mkfifo', [at('fifo')]).status).toBe(0)
    expect(refusal(() => readConfigFile(at('fifo'), { followLinks: false })).issues).toEqual([
      '(file): is not a regular file',
    ])
    fs.mkdirSync(at('d.json'))
    expect(refusal(() => readConfigFile(at('d.json'), { followLinks: false })).issues).toEqual([
      '(file): is not a regular file',
    ])
  })

  it('refuses a file over 64 KiB and one that is not UTF-8; reads exactly 64 KiB', () => {
    fs.writeFileSync(at('big.json'), ' '.repeat(MAX_CONFIG_BYTES + 1))
    expect(refusal(() => readConfigFile(at('big.json'), { followLinks: false })).issues[0]).toMatch(/larger than 65536/)
    fs.writeFileSync(at('edge.json'), ' '.repeat(MAX_CONFIG_BYTES))
    expect(readConfigFile(at('edge.json'), { followLinks: false })?.text.length).toBe(MAX_CONFIG_BYTES)
    fs.writeFileSync(at('latin1.json'), Buffer.from([0x7b, 0xe9, 0x7d]))
    expect(refusal(() => readConfigFile(at('latin1.json'), { followLinks: false })).issues).toEqual([
      '(file): is not UTF-8 text',
    ])
  })

  it('names a file it cannot open, with the errno', (ctx) => {
    if (process.getuid?.() === 0) ctx.skip('root opens a mode-000 file all the same')
    fs.writeFileSync(at('closed.json'), '{}', { mode: 0 })
    expect(refusal(() => readConfigFile(at('closed.json'), { followLinks: false })).issues[0]).toMatch(/EACCES/)
  })
})
