/**
 * The workload corpus's shared fixtures, built once per corpus run, unconfined, as root, without
 * any registry: a tiny npm package (a directory and its `npm pack` tarball), an npm project's
 * lockfile that depends on that tarball, a wheel and an sdist of tiny Python packages, a bare git
 * repository with two commits, a tarball to extract, and two 0600 files (root's, and uid 65534's).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { NOBODY, RUN_DEPTH_NAME, baseEnv } from './run.js'

const write = (file: string, text: string, mode = 0o644) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text, { mode })
}

/** A wheel written by hand (a zip with its dist-info), so building one needs neither setuptools nor wheel. */
const WHEEL_SCRIPT = `
import base64, hashlib, sys, zipfile
out = sys.argv[1]
files = {
  'wl_tiny/__init__.py': 'def add(a, b):\\n    return a + b\\n',
  'wl_tiny-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: wl-tiny\\nVersion: 1.0\\n',
  'wl_tiny-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: cordon-workloads\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
}
record = []
with zipfile.ZipFile(out, 'w') as z:
  for name, text in files.items():
    data = text.encode()
    z.writestr(name, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    record.append(f'{name},sha256={digest},{len(data)}')
  record.append('wl_tiny-1.0.dist-info/RECORD,,')
  z.writestr('wl_tiny-1.0.dist-info/RECORD', '\\n'.join(record) + '\\n')
`

/** Builds the fixtures under `<base>/fix` (world-readable but the secrets); returns that dir. */
export function buildFixtures(base: string): string {
  const fix = path.join(base, 'fix')
  const scratch = path.join(base, 'fixture-scratch')
  fs.mkdirSync(scratch, { recursive: true })
  const home = path.join(scratch, 'home')
  const env = { ...baseEnv(home, scratch), npm_config_cache: path.join(scratch, 'npm-cache') }
  fs.mkdirSync(home, { recursive: true })
  const run = (argv: string[], cwd: string) => execFileSync(argv[0]!, argv.slice(1), { cwd, env, stdio: 'pipe' })

  // npm: a package directory, its tarball, and a project locked to that tarball. The lockfile
  // names the tarball relative to the project, so it is made at the depth every run root has.
  write(path.join(fix, 'tiny', 'package.json'), '{"name":"wl-tiny","version":"1.0.0","main":"index.js"}\n')
  write(path.join(fix, 'tiny', 'index.js'), 'module.exports = (a, b) => a + b\n')
  run(['npm', 'pack', '--silent', './tiny'], fix)
  const ciRoot = path.join(base, 'runs', RUN_DEPTH_NAME, 'root')
  fs.mkdirSync(ciRoot, { recursive: true })
  const tarball = path.relative(ciRoot, path.join(fix, 'wl-tiny-1.0.0.tgz'))
  write(
    path.join(ciRoot, 'package.json'),
    `${JSON.stringify({ name: 'ci-app', version: '1.0.0', dependencies: { 'wl-tiny': `file:${tarball}` } })}\n`,
  )
  run(['npm', 'install', '--offline', '--silent'], ciRoot)
  for (const f of ['package.json', 'package-lock.json'])
    fs.cpSync(path.join(ciRoot, f), path.join(fix, 'ci-app', f), { recursive: true })
  fs.rmSync(path.dirname(ciRoot), { recursive: true, force: true })

  // Python: a wheel and a setup.py sdist.
  run(['/usr/bin/python3', '-c', WHEEL_SCRIPT, path.join(fix, 'wl_tiny-1.0-py3-none-any.whl')], fix)
  const sdist = path.join(scratch, 'wl_sdist-1.0')
  write(path.join(sdist, 'wl_sdist', '__init__.py'), 'def mul(a, b):\n    return a * b\n')
  write(
    path.join(sdist, 'setup.py'),
    'from setuptools import setup\nsetup(name="wl_sdist", version="1.0", packages=["wl_sdist"])\n',
  )
  write(path.join(sdist, 'PKG-INFO'), 'Metadata-Version: 1.0\nName: wl_sdist\nVersion: 1.0\n')
  run(['tar', 'czf', path.join(fix, 'wl_sdist-1.0.tar.gz'), 'wl_sdist-1.0'], scratch)

  // git: a bare repository with two commits.
  const work = path.join(scratch, 'upstream')
  fs.mkdirSync(work)
  run(['git', 'init', '-q', '-b', 'main'], work)
  write(path.join(work, 'lib.txt'), 'one\n')
  run(['git', 'add', '.'], work)
  run(['git', 'commit', '-q', '-m', 'upstream one'], work)
  write(path.join(work, 'lib.txt'), 'one\ntwo\n')
  run(['git', 'commit', '-q', '-am', 'upstream two'], work)
  run(['git', 'clone', '-q', '--bare', work, path.join(fix, 'upstream.git')], scratch)

  // tar: a bundle dir to extract.
  write(path.join(scratch, 'bundle', 'a.txt'), 'a\n')
  write(path.join(scratch, 'bundle', 'b.txt'), 'b\n')
  run(['tar', 'czf', path.join(fix, 'bundle.tgz'), 'bundle'], scratch)

  fs.rmSync(scratch, { recursive: true, force: true })
  execFileSync('chmod', ['-R', 'a+rX', fix])
  // Files a uid cannot read: root's (for uid 65534) and uid 65534's (for a capability-less root).
  write(path.join(fix, 'root-secret.txt'), 'root only\n', 0o600)
  write(path.join(fix, 'nobody-secret.txt'), 'nobody only\n', 0o600)
  fs.chownSync(path.join(fix, 'nobody-secret.txt'), NOBODY, NOBODY)
  return fix
}
