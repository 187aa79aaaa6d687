// The package's install step. The native parts (the cordon.node addon and the cordon-exec helper)
// are optional: where a prebuild of this platform loads, it is used; else they are built with
// node-gyp; and where that is impossible (no compiler, not Linux) the install still succeeds and
// cordon runs commands over node:child_process (the portable spawn path; `cordon probe` says
// which path is in use and why). This script never fails the install.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const say = (line) => console.error(`cordon: ${line}`)

/** Whether `file` loads in a fresh Node process (another libc or a broken binary does not). */
function loads(file) {
  return spawnSync(process.execPath, ['-e', `require(${JSON.stringify(file)})`], { stdio: 'ignore' }).status === 0
}

/** Whether `helper` runs here (`--version`). */
function runs(helper) {
  return existsSync(helper) && spawnSync(helper, ['--version'], { stdio: 'ignore' }).status === 0
}

/** An existing local build that loads, with its helper (npm ci keeps build/: no rebuild, as node-gyp-build did). */
function usableBuild() {
  const addon = join(root, 'build', 'Release', 'cordon.node')
  return existsSync(addon) && loads(addon) && runs(join(root, 'build', 'Release', 'cordon-exec')) ? addon : undefined
}

/** The prebuilt addon of this platform that loads here, with its helper beside it, if any. */
function usablePrebuild() {
  const dir = join(root, 'prebuilds', `${process.platform}-${process.arch}`)
  let files = []
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.node'))
  } catch {
    return undefined
  }
  const addon = files.map((f) => join(dir, f)).find(loads)
  return addon !== undefined && runs(join(dir, 'cordon-exec')) ? addon : undefined
}

/** The node-gyp to build with: npm's own (npm_config_node_gyp), else the dev dependency. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp))
    return process.env.npm_config_node_gyp
  try {
    const require = createRequire(import.meta.url)
    const pkg = require('node-gyp/package.json')
    return join(
      dirname(require.resolve('node-gyp/package.json')),
      typeof pkg.bin === 'string' ? pkg.bin : pkg.bin['node-gyp'],
    )
  } catch {
    return undefined
  }
}

function main() {
  if (process.platform !== 'linux') {
    say(
      `the native parts are Linux-only; on ${process.platform} commands run over node:child_process (the portable spawn path)`,
    )
    return
  }
  if (process.env.CORDON_SKIP_NATIVE_BUILD === '1') {
    say('CORDON_SKIP_NATIVE_BUILD=1: the native parts are not built; the portable spawn path will be used')
    return
  }
  const existing = usableBuild() ?? usablePrebuild()
  if (existing !== undefined) {
    say(`using the native addon ${existing}`)
    return
  }
  const gyp = nodeGyp()
  const built =
    gyp !== undefined &&
    spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] }).status === 0
  if (built && loads(join(root, 'build', 'Release', 'cordon.node'))) return
  say(
    `the native parts could not be ${gyp === undefined ? 'built (node-gyp was not found)' : 'built'}; the install goes on without them.\n` +
      '  Commands run over node:child_process (the portable spawn path): Landlock is unavailable, bubblewrap confines\n' +
      '  only where the cordon-exec helper exists, and confined modes otherwise fail closed (SANDBOX_UNAVAILABLE).\n' +
      '  To build them: install python3, make and a C++ compiler (Debian: apt-get install -y python3 make g++),\n' +
      '  then run `npm run build:native`. `cordon probe` shows the spawn path in use and why.',
  )
}

main()
