// After prebuildify has put cordon.node in prebuilds/<platform>-<arch>/, put the cordon-exec
// helper beside it, so a package installed from prebuilds (no compiler) can still supervise.
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
console.log(`copy-helper-to-prebuilds: ${join(target, 'cordon-exec')}`)
