// The texts a model reads when a command never started, built from the error's own fields.
import { describe, expect, it } from 'vitest'
import { SpawnError } from '../../../src/policy/errors.js'
import { abortedBeforeSpawnText, spawnFailureText } from '../../../src/shell/spawn-failure.js'

describe('spawnFailureText', () => {
  it('reads a SpawnError as its stage, errno name and path, never its own message', () => {
    const error = new SpawnError({ stage: 'chdir', errno: 2, path: '/work/missing' })
    expect(spawnFailureText(error)).toBe('spawn failed: chdir: ENOENT (/work/missing)')
    expect(spawnFailureText(new SpawnError({ stage: 'exec', errno: 13 }))).toBe('spawn failed: exec: EACCES')
  })

  it('reads any other error by its message, and anything else as text', () => {
    expect(spawnFailureText(new Error('no such runner'))).toBe('spawn failed: no such runner')
    expect(spawnFailureText('gone')).toBe('spawn failed: gone')
  })

  it('says a command aborted before spawn, with the reason', () => {
    expect(abortedBeforeSpawnText(new Error('deadline'))).toBe('aborted before spawn: deadline')
    expect(abortedBeforeSpawnText(undefined)).toBe('aborted before spawn: aborted')
  })
})
