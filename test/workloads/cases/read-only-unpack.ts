/**
 * Inspections that unpack or copy into the run's own TMPDIR in read-only (issue 24, item 1): they
 * set modes and times there (tar, cp -a, chmod +x, git clone, venv, npx), which a read-only run
 * may do inside its writable set as long as the mounts refuse it outside (bubblewrap's read-only
 * binds, a Landlock run's own read-only view: native/mount-view.cc). Every output names TMPDIR paths as D, so runs compare, and every
 * command takes its temp files away again.
 */
import type { WorkloadCase } from '../case.js'

const tree = `mkdir -p src && printf '#!/bin/sh\\necho ran\\n' > src/run.sh && chmod 755 src/run.sh && echo data > src/data.txt && chmod 640 src/data.txt && touch -d 2020-01-02T00:00:00Z src/run.sh src/data.txt src`
/** A mktemp -d taken away when the command ends (the harness checks that TMPDIR is left as found). */
const tmpDir = `d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT`
const modesAndTimes = (dir: string) => `stat -c '%a %Y %n' "${dir}"/src/* | sed "s|${dir}|D|"`
const binPackage = `mkdir -p pkg && printf '{"name":"wl-bin","version":"1.0.0","bin":{"wl-bin":"cli.js"}}\\n' > pkg/package.json && printf '#!/usr/bin/env node\\nconsole.log("wl-bin ran")\\n' > pkg/cli.js && npm pack -q ./pkg >/dev/null`

/** The read-only unpacking round. */
export const READ_ONLY_UNPACK: readonly WorkloadCase[] = [
  {
    name: 'tar-extract-tmpdir-read-only',
    about: 'tar -x into mktemp -d keeps the archived modes and times (chmod and utime in TMPDIR)',
    setup: `${tree} && tar -czf pkg.tgz src`,
    command: `${tmpDir} && tar -xzf pkg.tgz -C "$d" && ${modesAndTimes('$d')}`,
    mode: 'read-only',
    nobody: 'also',
  },
  {
    name: 'cp-a-tmpdir-read-only',
    about: 'cp -a of a tree of the root into mktemp -d preserves modes and times',
    setup: tree,
    command: `${tmpDir} && cp -a src "$d/" && ${modesAndTimes('$d')}`,
    mode: 'read-only',
    nobody: 'also',
  },
  {
    name: 'chmod-x-mktemp-read-only',
    about: 'a script written to mktemp, made executable and run',
    command: `f=$(mktemp) && trap 'rm -f "$f"' EXIT && printf '#!/bin/sh\\necho ran from tmp\\n' > "$f" && chmod +x "$f" && "$f"`,
    mode: 'read-only',
    nobody: 'also',
  },
  {
    name: 'git-clone-tmpdir-read-only',
    about: 'git clone into mktemp -d (git chmods its config lock and sets core.filemode there)',
    command: `${tmpDir} && git clone -q {fix}/upstream.git "$d/c" && git -C "$d/c" log --format=%s`,
    mode: 'read-only',
    needs: ['git'],
  },
  {
    name: 'python-venv-tmpdir-read-only',
    about: 'python3 -m venv in mktemp -d (ensurepip copies with modes) and its interpreter runs',
    command: `${tmpDir} && {py} -m venv "$d/v" && "$d/v/bin/python" -c 'import sys; print(sys.prefix != sys.base_prefix)'`,
    mode: 'read-only',
    needs: ['python3-venv'],
  },
  {
    name: 'npx-y-package-read-only',
    about: 'npx -y of a packed package: installed into the npm cache in TMPDIR (bin links chmod +x), then run',
    setup: binPackage,
    command: 'npx -y --offline --package="$PWD/wl-bin-1.0.0.tgz" wl-bin',
    mode: 'read-only',
    needs: ['npm'],
  },
]
