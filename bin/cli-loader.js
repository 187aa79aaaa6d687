'use strict'
// Loads the `cordon` CLI. The fast way is the whole CLI as one bundle (dist/cli/cordon.bundle.cjs,
// scripts/bundle-cli.mjs) compiled with the V8 code cache made beside it at build time: one file,
// no module graph and almost no compiling is most of a quick start (bench/startup.mjs). The cache
// sits in the package (as trusted as the code: a confined command cannot write there, it is a
// protected path); V8 ignores it when it was made for other source or another node. Without the
// bundle (a tsc-only build) the compiled modules are imported instead.
const fs = require('node:fs')
const path = require('node:path')
const vm = require('node:vm')
const { createRequire } = require('node:module')
const { pathToFileURL } = require('node:url')

const BUNDLE = path.join(__dirname, '..', 'dist', 'cli', 'cordon.bundle.cjs')
const CACHE = path.join(__dirname, '..', 'dist', 'cli', 'cordon.bundle.cache')

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js')

/** The bundle's exports and its script (undefined when there is no bundle, or it is older than dist/). */
function loadBundle(useCache) {
  let source
  try {
    // tsc rewrites main.js on every build: a bundle older than it would run stale code.
    if (fs.statSync(BUNDLE).mtimeMs < fs.statSync(MAIN).mtimeMs) return undefined
    // The bundle is ASCII (scripts/bundle-cli.mjs): latin1 reads it without decoding.
    source = fs.readFileSync(BUNDLE, 'latin1')
  } catch {
    return undefined
  }
  let cachedData
  if (useCache) {
    try {
      cachedData = fs.readFileSync(CACHE)
    } catch {
      // no cache: compiled as usual
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: BUNDLE,
    // No importModuleDynamically: the bundle has no import() (V8 would not honour it with a cache).
    cachedData,
  })
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, path.dirname(BUNDLE))
  return { cli: module.exports, script }
}

/** Runs the CLI with `argv` (and `io`, default the process's streams); resolves to the exit status. */
async function run(argv, io) {
  const loaded = loadBundle(true)
  const cli = loaded
    ? loaded.cli
    : await import(pathToFileURL(path.join(__dirname, '..', 'dist', 'cli', 'main.js')).href)
  return cli.main(argv, io)
}

/**
 * Makes the code cache (the build calls it): runs `cordon run -- true` once so the functions a
 * run uses are compiled, then writes what V8 compiled beside the bundle. A host where the run
 * cannot be confined still gets the cache of what was compiled.
 */
async function writeCodeCache() {
  const loaded = loadBundle(false)
  if (!loaded) throw new Error(`${BUNDLE} is missing: run scripts/bundle-cli.mjs`)
  const { Writable } = require('node:stream')
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() })
  await loaded.cli.main(['run', '--', 'true'], { stdout: sink, stderr: sink })
  const temp = `${CACHE}.${process.pid}.tmp`
  fs.writeFileSync(temp, loaded.script.createCachedData())
  fs.renameSync(temp, CACHE)
}

module.exports = { run, loadBundle, writeCodeCache, BUNDLE, CACHE }
