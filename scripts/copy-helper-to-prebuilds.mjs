// After prebuildify has put cordon.node in prebuilds/<platform>-<arch>/, put the cordon-exec
// helper beside it, so a package installed from prebuilds (no compiler) can still supervise.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const helper = join(root, 'build', 'Release', 'cordon-exec')
if (!existsSync(helper)) {
  console.error('copy-helper-to-prebuilds: build/Release/cordon-exec is missing (run npm run build:native)')
  process.exit(1)
}
const target = join(root, 'prebuilds', `${process.platform}-${process.arch}`)
mkdirSync(target, { recursive: true })
copyFileSync(helper, join(target, 'cordon-exec'))
// Like the addon (prebuildify --strip): symbols are not needed to run it.
if (spawnSync('strip', [join(target, 'cordon-exec')], { stdio: 'inherit' }).status !== 0) {
  console.error('copy-helper-to-prebuilds: strip failed; the helper is shipped with its symbols')
}
console.log(`copy-helper-to-prebuilds: ${join(target, 'cordon-exec')}`)
