// Installing without a compiler, and the addon loader's order, in copies of the package: the
// install step (scripts/build-native.mjs) never fails an install, uses a prebuild of this
// platform without compiling, and the loader takes a local build first, then the prebuilds, a
// binary that does not load falling through to the next; with none, the portable path, saying why.
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { scratchDir } from '../../support/scratch.js'

const repo = join(import.meta.dirname, '..', '..', '..')
const built = join(repo, 'build', 'Release')
const platformDir = `${process.platform}-${process.arch}`

/** A copy of the package with `parts` (and node_modules linked in). */
function copyOf(parts: readonly string[]): string {
  const copy = scratchDir('cordon-install')
  for (const part of ['package.json', ...parts]) cpSync(join(repo, part), join(copy, part), { recursive: true })
  symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'))
  return copy
}

/** Puts this tree's addon and helper into `copy`'s prebuild layout. */
function addPrebuild(copy: string): string {
  const dir = join(copy, 'prebuilds', platformDir)
  mkdirSync(dir, { recursive: true })
  copyFileSync(join(built, 'cordon.node'), join(dir, 'cordon.glibc.node'))
  copyFileSync(join(built, 'cordon-exec'), join(dir, 'cordon-exec'))
  return dir
}

/** Runs the install step in `copy` where no compiler works (CC and CXX point nowhere). */
function install(copy: string) {
  return spawnSync(process.execPath, [join(copy, 'scripts', 'build-native.mjs')], {
    cwd: copy,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      CC: '/nonexistent/cc',
      CXX: '/nonexistent/c++',
      npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
      npm_config_node_gyp: undefined,
    },
  })
}

/** The spawn path a host importing `copy`'s dist/ chooses. */
function spawnPathIn(copy: string): { path: string; reason: string; addon?: string; helper?: string } {
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(join(copy, 'dist', 'subprocess', 'portable', 'spawn-path.js'))}); process.stdout.write(JSON.stringify(m.chooseSpawnPath('auto')))`,
    ],
    { encoding: 'utf8', env: { ...process.env, CORDON_SPAWN: undefined, CORDON_ADDON: undefined } },
  )
  if (r.status !== 0) throw new Error(r.stderr)
  return JSON.parse(r.stdout)
}

describe('install without a compiler', () => {
  it('the install step exits 0 when the build is impossible, builds nothing, and says why', () => {
    const copy = copyOf(['binding.gyp', 'native', 'scripts'])
    const r = install(copy)
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/\/nonexistent\/c/) // the build really tried, with the broken compiler
    expect(r.stderr).toMatch(/cordon: the native parts could not be built; the install goes on without them/)
    expect(r.stderr).toMatch(/portable spawn path/)
    expect(existsSync(join(copy, 'build', 'Release', 'cordon.node'))).toBe(false)
  })

  it('a prebuild of this platform that loads is used as is: nothing is compiled', () => {
    const copy = copyOf(['binding.gyp', 'native', 'scripts'])
    const dir = addPrebuild(copy)
    const r = install(copy)
    expect(r.status).toBe(0)
    expect(r.stderr).toContain(`cordon: using the native addon ${join(dir, 'cordon.glibc.node')}`)
    expect(existsSync(join(copy, 'build'))).toBe(false)
  })
})

describe('the addon loader', () => {
  it('loads a prebuild when there is no local build, with the helper beside it', () => {
    const copy = copyOf(['dist', 'profiles'])
    const dir = addPrebuild(copy)
    expect(spawnPathIn(copy)).toMatchObject({
      path: 'native',
      addon: join(dir, 'cordon.glibc.node'),
      helper: join(dir, 'cordon-exec'),
    })
  })

  it('a local build that does not load falls through to the prebuild', () => {
    const copy = copyOf(['dist', 'profiles'])
    const dir = addPrebuild(copy)
    mkdirSync(join(copy, 'build', 'Release'), { recursive: true })
    writeFileSync(join(copy, 'build', 'Release', 'cordon.node'), 'not an ELF file')
    expect(spawnPathIn(copy)).toMatchObject({ path: 'native', addon: join(dir, 'cordon.glibc.node') })
  })

  it('a local build that loads comes before a prebuild', () => {
    const copy = copyOf(['dist', 'profiles'])
    addPrebuild(copy)
    mkdirSync(join(copy, 'build', 'Release'), { recursive: true })
    copyFileSync(join(built, 'cordon.node'), join(copy, 'build', 'Release', 'cordon.node'))
    expect(spawnPathIn(copy)).toMatchObject({ path: 'native', addon: join(copy, 'build', 'Release', 'cordon.node') })
  })

  it('with nothing that loads: the portable path, and why', () => {
    const copy = copyOf(['dist', 'profiles'])
    mkdirSync(join(copy, 'build', 'Release'), { recursive: true })
    writeFileSync(join(copy, 'build', 'Release', 'cordon.node'), 'not an ELF file')
    const choice = spawnPathIn(copy)
    expect(choice.path).toBe('portable')
    expect(choice.reason).toMatch(/the native addon could not be loaded \(.*cordon\.node: file too short/)
    expect(choice.helper).toBeUndefined()
  })
})
