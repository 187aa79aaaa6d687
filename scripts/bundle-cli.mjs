#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js and everything it imports) into one CommonJS file,
// dist/cli/cordon.bundle.cjs, and makes its V8 code cache (bin/cli-loader.js loads both). It sits
// beside main.js so that every path the modules compute from import.meta.url (../../profiles,
// ../../package.json) still holds. zod (loaded on demand through createRequire), node-pty (an
// optional dependency) and the MCP server with its optional SDK (src/cli/mcp.ts) stay outside.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// Without esbuild (a build without devDependencies) the CLI still works, from dist/ (slower).
let build
try {
  ;({ build } = await import('esbuild'))
} catch (error) {
  console.warn(`bundle-cli: esbuild is not available (${error.message}); the CLI runs from dist/ unbundled`)
  process.exit(0)
}

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'dist/cli/cordon.bundle.cjs')
const built = await build({
  entryPoints: [join(root, 'dist/cli/main.js')],
  outfile: out,
  write: false,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['zod', 'node-pty', '@modelcontextprotocol/sdk'],
  // CommonJS has no import.meta: the bundle's own file URL stands in for every module's.
  define: { 'import.meta.url': '__cordon_bundle_url' },
  banner: { js: 'const __cordon_bundle_url = require("node:url").pathToFileURL(__filename).href;' },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
})

// esbuild's __toESM copies every property of a module into a new object, once per importing
// module: ~60 times here, for node:fs, node:path and node:os (~2 ms of a start). The bundle
// imports nothing but builtins that way, for which an object over the module (named exports
// through the prototype, `default` its own) is the same.
const TO_ESM =
  'var __toESM=(mod,isNodeMode,target)=>(target=mod!=null?__create(__getProtoOf(mod)):{},__copyProps(isNodeMode||!mod||!mod.__esModule?__defProp(target,"default",{value:mod,enumerable:!0}):target,mod))'
let text = built.outputFiles[0].text
if (text.split(TO_ESM).length !== 2) throw new Error("esbuild's __toESM changed: update scripts/bundle-cli.mjs")
for (const m of text.matchAll(/__toESM\(require\("([^"]+)"\)/g))
  if (!m[1].startsWith('node:')) throw new Error(`the bundle imports ${m[1]} through __toESM: it is not a builtin`)
// `cordon mcp` loads dist/mcp/ and the optional MCP SDK at run time (src/cli/mcp.ts): `cordon run`
// must neither load nor compile them, so neither may be in the bundle.
if (/require\("@modelcontextprotocol\//.test(text) || text.includes('createMcpServer'))
  throw new Error('the bundle holds the MCP server or its SDK: load them with require at run time (src/cli/mcp.ts)')
// bin/cli-loader.js runs the bundle in a vm.Script, where import() has no loader.
if (/[^\w$.]import\(/.test(text)) throw new Error('the bundle has a dynamic import(): load that module with require')
text = text.replace(TO_ESM, 'var __toESM=mod=>Object.create(mod,{default:{value:mod,enumerable:!0}})')
// ASCII only, so the loader reads it as latin1 into a one-byte string (half the memory of the
// two-byte one utf8 makes, and no decoding). esbuild escapes strings but leaves regex literals:
// every non-ASCII unit there is in a literal, where \uXXXX means the same.
text = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
writeFileSync(out, text)

// The code cache: made by a fresh node in an empty dir, so that what it compiles is a plain run's.
const scratch = mkdtempSync(join(tmpdir(), 'cordon-code-cache-'))
try {
  const made = spawnSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(join(root, 'bin/cli-loader.js'))}).writeCodeCache()`],
    { cwd: scratch, stdio: ['ignore', 'inherit', 'inherit'] },
  )
  if (made.status !== 0) throw new Error(`making the code cache failed (exit ${made.status})`)
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
