/**
 * What package managers fetch, served by the stand-in hosts under `/files/` (stand-in-hosts.ts):
 * an npm registry entry with its tarball, a git repository for the dumb HTTP protocol, and a pip
 * "simple" index with a wheel. Built with the real tools (tar, git, python's zipfile), into a
 * directory every user can read.
 */
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { STAND_IN } from './stand-in-hosts.js'

/** The package every fixture names. */
export const FIXTURE_PACKAGE = {
  name: 'cordon-tinypkg',
  version: '1.0.0',
  says: 'tiny package, fetched through the proxy',
}

const BASE = `http://${STAND_IN.allowed.name}/files`

function npmRegistry(files: string): void {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-npm-fixture-'))
  const pkg = path.join(work, 'package')
  fs.mkdirSync(pkg)
  const { name, version, says } = FIXTURE_PACKAGE
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }))
  fs.writeFileSync(path.join(pkg, 'index.js'), `module.exports = ${JSON.stringify(says)}\n`)
  const dir = path.join(files, 'npm')
  fs.mkdirSync(dir, { recursive: true })
  const tarball = path.join(dir, `${name}-${version}.tgz`)
  execFileSync('tar', ['-czf', tarball, '-C', work, 'package'])
  fs.rmSync(work, { recursive: true, force: true })
  const bytes = fs.readFileSync(tarball)
  const dist = {
    tarball: `${BASE}/npm/${name}-${version}.tgz`,
    shasum: crypto.createHash('sha1').update(bytes).digest('hex'),
    integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
  }
  const packument = {
    name,
    'dist-tags': { latest: version },
    versions: { [version]: { name, version, main: 'index.js', dist } },
  }
  fs.writeFileSync(path.join(dir, name), JSON.stringify(packument))
}

function gitRepository(files: string): void {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-git-fixture-'))
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: work,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
      stdio: 'ignore',
    })
  git('init', '-q', '-b', 'main')
  fs.writeFileSync(path.join(work, 'README'), `${FIXTURE_PACKAGE.says}\n`)
  git('add', 'README')
  git('commit', '-q', '-m', 'fixture')
  const bare = path.join(files, 'repo.git')
  execFileSync('git', ['clone', '-q', '--bare', work, bare], { stdio: 'ignore' })
  execFileSync('git', ['update-server-info'], { cwd: bare, stdio: 'ignore' })
  fs.rmSync(work, { recursive: true, force: true })
}

function pipIndex(files: string): void {
  const name = FIXTURE_PACKAGE.name.replaceAll('-', '_')
  const wheel = `${name}-1.0-py3-none-any.whl`
  const dir = path.join(files, 'simple', FIXTURE_PACKAGE.name)
  fs.mkdirSync(dir, { recursive: true })
  const script = `
import sys, zipfile
name, out = sys.argv[1], sys.argv[2]
info = f"{name}-1.0.dist-info"
with zipfile.ZipFile(out, "w") as z:
    z.writestr(f"{name}.py", "SAYS = 'tiny'\\n")
    z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n")
    z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\\nGenerator: cordon-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr(f"{info}/RECORD", "")
`
  execFileSync('python3', ['-c', script, name, path.join(files, wheel)])
  fs.writeFileSync(path.join(dir, 'index.html'), `<html><body><a href="../../${wheel}">${wheel}</a></body></html>\n`)
}

/** Builds every fixture into a fresh directory readable by every user; the caller removes it. */
export function buildPackageFixtures(): string {
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-package-fixtures-'))
  npmRegistry(files)
  gitRepository(files)
  pipIndex(files)
  execFileSync('chmod', ['-R', 'a+rX', files])
  return files
}
