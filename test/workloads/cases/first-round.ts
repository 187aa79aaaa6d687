/**
 * The first round of the corpus (issue 12): git, npm, node, python, build and file tools,
 * servers, output, writes outside the mode and reads the uid cannot do.
 */
import type { WorkloadCase } from '../case.js'

const gitRepo = `git init -q -b main && printf 'hello\\n' > README.md && git add README.md && git commit -q -m first`
const tinyTgz = '{fix}/wl-tiny-1.0.0.tgz'
const pool = `{py} -c "import multiprocessing as mp; print(sum(mp.Pool(2).map(abs, [-1, -2, -3])))"`
const server = (port: string) =>
  `{py} -m http.server ${port} --bind 127.0.0.1 >/dev/null 2>&1 & pid=$!; ` +
  `for i in $(seq 200); do curl -s -o /dev/null http://127.0.0.1:${port}/ && break; sleep 0.05; done; ` +
  `curl -s http://127.0.0.1:${port}/ | grep -o '<title>[^<]*</title>'; kill $pid; wait $pid; echo "server exit $?"`
const nodeTestTmp = `mkdir -p test && cat > test/tmp.test.mjs <<'EOF'
import test from 'node:test'
import assert from 'node:assert'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
test('writes a scratch file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-'))
  fs.writeFileSync(path.join(dir, 'f'), 'x')
  assert.equal(fs.readFileSync(path.join(dir, 'f'), 'utf8'), 'x')
  fs.rmSync(dir, { recursive: true })
})
EOF`
const helloC = `cat > hello.c <<'EOF'
#include <stdio.h>
int main(void) { puts("hello, world"); return 0; }
EOF
printf 'hello: hello.c\\n\\t$(CC) -O1 -o $@ $<\\n' > Makefile`
const unittestTmp = `mkdir -p tests && touch tests/__init__.py && cat > tests/test_tmp.py <<'EOF'
import os, tempfile, unittest
class TempTest(unittest.TestCase):
    def test_named_file(self):
        with tempfile.NamedTemporaryFile('w+') as f:
            f.write('x'); f.flush(); f.seek(0)
            self.assertEqual(f.read(), 'x')
    def test_dir(self):
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, 'f'), 'w').close()
            self.assertEqual(os.listdir(d), ['f'])
EOF`
const noShm = {
  fails:
    'Landlock refuses /dev/shm on purpose (no private one without a mount namespace; the host one would open every same-uid semaphore): multiprocessing cannot make its semaphores',
  // The run says so, with the flags that open it (test/workloads/cases/remedies.ts).
  closed: { class: 'shared-memory', remedy: '--backend bubblewrap' },
}

/** The first round. */
export const FIRST_ROUND: readonly WorkloadCase[] = [
  // --- git ----------------------------------------------------------------------------------
  {
    name: 'git-init-add-commit',
    about: 'a new repository, a first commit and its log: all inside the root',
    command: `${gitRepo} && git log --format='%H %an %s'`,
    mode: 'workspace-write',
    effects: 'git cat-file -p HEAD && git status --short',
    nobody: 'also',
    needs: ['git'],
  },
  {
    name: 'git-branch-checkout',
    about: 'branch, checkout, commit on the branch and back: refs and index inside the root',
    setup: gitRepo,
    command:
      'git branch feature && git checkout -q feature && echo f > f.txt && git add f.txt && git commit -q -m feature && git checkout -q main && git log --all --format=%s && ls',
    mode: 'workspace-write',
    effects: 'git branch --list && git rev-parse feature',
    needs: ['git'],
  },
  {
    name: 'git-worktree-add',
    about: 'a linked worktree inside the root: its metadata goes to .git/worktrees (not protected)',
    setup: gitRepo,
    command: 'git worktree add -q wt/feature -b feature && git -C wt/feature log --format=%s && git worktree list',
    mode: 'workspace-write',
    effects: 'ls wt/feature && git worktree list --porcelain',
    needs: ['git'],
  },
  {
    name: 'git-worktree-outside',
    about:
      'a worktree in a sibling dir is outside the root: "could not create leading directories" names a path whose parent does not exist; the remedy is the nearest existing dir',
    setup: gitRepo,
    command: 'git worktree add -q {out}/wt -b side',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/wt/.git', remedy: '--writable {out}' },
    effects: 'ls {out}/wt 2>&1; git worktree list --porcelain | grep -c worktree',
    needs: ['git'],
  },
  {
    name: 'git-hook-runs-on-commit',
    about: 'an existing pre-commit hook runs on commit (the protected hooks dir stays readable and executable)',
    setup: `${gitRepo} && printf '#!/bin/sh\\necho "pre-commit ran" >> hook.log\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
    command: 'echo x > x.txt && git add x.txt && git commit -q -m x && cat hook.log && git log --format=%s',
    mode: 'workspace-write',
    nobody: 'also',
    needs: ['git'],
  },
  {
    name: 'git-hook-plant',
    about:
      'planting a hook is refused under bubblewrap (.git/hooks is protected: it would run unconfined later); the remedy that works is leaving that one path unprotected (--unprotect), not the mode already in force',
    setup: gitRepo,
    command: `printf '#!/bin/sh\\necho planted\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{root}/.git/hooks/post-checkout',
      remedy: '--unprotect .git/hooks',
    },
    // Landlock cannot make a subpath of a writable root read-only: stated by the probe (partial).
    on: { landlock: 'same' },
    effects: 'cat .git/hooks/post-checkout 2>&1',
    needs: ['git'],
  },
  {
    name: 'git-config-protected',
    about:
      'git config writes .git/config (protected under bubblewrap: the rename onto the read-only bind fails with EBUSY); the denial must be reported with the remedy that lifts that one protection',
    setup: gitRepo,
    command: 'git config core.autocrlf input',
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{root}/.git/config',
      remedy: '--unprotect .git/config',
    },
    on: { landlock: 'same' },
    effects: 'git config --get core.autocrlf',
    needs: ['git'],
  },
  {
    name: 'editor-files-present-commit',
    about:
      'a project with editor and agent settings (.vscode, .idea, .claude, .mcp.json, .envrc: protected by default) still installs, builds and commits: only those files are read-only',
    setup: `${gitRepo} && mkdir -p .vscode .idea .claude/commands && echo '{}' > .vscode/settings.json && echo '{}' > .vscode/tasks.json && echo '<project/>' > .idea/misc.xml && echo '{}' > .claude/settings.json && echo '{}' > .mcp.json && echo 'export A=1' > .envrc`,
    command: `echo '{"name":"app","version":"1.0.0"}' > package.json && npm install --offline ${tinyTgz} >/dev/null && git add -A && git commit -q -m deps && git log --format=%s && cat .vscode/settings.json .envrc`,
    mode: 'workspace-write',
    effects: 'git status --short && ls node_modules && cat .vscode/tasks.json',
    nobody: 'also',
    needs: ['git', 'npm'],
  },
  {
    name: 'vscode-task-plant',
    about:
      'rewriting .vscode/tasks.json (a folderOpen task runs unconfined when the person opens the folder) is refused under bubblewrap; the remedy lifts that one protection',
    setup: `mkdir -p .vscode && echo '{}' > .vscode/tasks.json`,
    command: `echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"},"command":"touch pwned"}]}' > .vscode/tasks.json`,
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{root}/.vscode/tasks.json',
      remedy: '--unprotect .vscode/tasks.json',
    },
    // Landlock cannot make a subpath of a writable root read-only: stated by its account (partial).
    on: { landlock: 'same' },
    effects: 'cat .vscode/tasks.json',
  },
  {
    name: 'git-log-diff-status',
    about: 'read-only inspection of a repository: log, diff, status, show',
    setup: `${gitRepo} && echo two >> README.md && git commit -q -am second && echo three >> README.md`,
    command: "git log --format='%h %s' && git diff --stat && git status --short && git show --stat --format=%s HEAD~1",
    mode: 'read-only',
    needs: ['git'],
  },
  {
    name: 'git-clone-local',
    about: 'clone of a local bare repository into the root',
    command: 'git clone -q {fix}/upstream.git clone && git -C clone log --format=%s',
    mode: 'workspace-write',
    effects: 'git -C clone rev-parse HEAD',
    needs: ['git'],
  },
  {
    name: 'git-clone-leading-dirs',
    about:
      '"could not create leading directories of …: Read-only file system" for a target whose parents do not exist: still a denial, remedied by the nearest existing dir',
    command: 'git clone -q {fix}/upstream.git {out}/deps/a/b',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/deps/a/b', remedy: '--writable {out}' },
    effects: 'git -C {out}/deps/a/b log --format=%s 2>&1',
    needs: ['git'],
  },
  {
    name: 'git-init-missing-parent',
    about: '"cannot mkdir": git init of a new dir under a missing parent outside the root',
    command: 'git init -q {out}/new/repo',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/new/repo', remedy: '--writable {out}' },
    effects: 'ls -a {out}/new/repo 2>&1',
    needs: ['git'],
  },

  // --- npm ----------------------------------------------------------------------------------
  {
    name: 'npm-install-tarball',
    about: 'npm install of a local packed tarball: works out of the box (the cache is the confined one)',
    setup: `echo '{"name":"app","version":"1.0.0"}' > package.json`,
    command: `npm install --offline ${tinyTgz} && node -p "require('wl-tiny')(2, 3)"`,
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    effects: 'cat package.json && ls node_modules',
    nobody: 'also',
    needs: ['npm'],
  },
  {
    name: 'npm-install-directory',
    about: 'npm install of a local package directory (a symlink in node_modules)',
    setup: `echo '{"name":"app","version":"1.0.0"}' > package.json`,
    command: `npm install --offline {fix}/tiny && node -p "require('wl-tiny')(1, 2)"`,
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    effects: 'cat package.json && readlink node_modules/wl-tiny',
    needs: ['npm'],
  },
  {
    name: 'npm-ci',
    about: 'npm ci from a lockfile whose dependency is a local tarball',
    setup: 'cp {fix}/ci-app/package.json {fix}/ci-app/package-lock.json .',
    command: `npm ci --offline && node -p "require('wl-tiny')(20, 22)"`,
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    effects: 'ls node_modules && cat node_modules/wl-tiny/package.json',
    nobody: 'also',
    needs: ['npm'],
  },
  {
    name: 'npm-test-read-only',
    about: 'npm test running node --test in read-only: npm logs and node temp files go to the session TMPDIR',
    setup: `echo '{"name":"app","version":"1.0.0","scripts":{"test":"node --test"}}' > package.json && ${nodeTestTmp}`,
    command: 'npm test',
    mode: 'read-only',
    compare: ['stdout', 'stderr'],
    needs: ['npm'],
  },
  {
    name: 'npm-prefix-outside',
    about:
      'npm install --prefix outside the root: npm reports EACCES (Landlock) or ENOENT from a recursive mkdir on a read-only bind (bubblewrap); both are the sandbox refusing the same write',
    setup: 'mkdir {out}/p',
    command: `npm install --offline --prefix {out}/p ${tinyTgz}`,
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{out}/p/node_modules',
      remedy: '--writable {out}/p',
    },
    effects: 'ls {out}/p/node_modules 2>&1',
    needs: ['npm'],
  },
  {
    name: 'npm-prefix-outside-read-only',
    about:
      "the same in read-only: npm's 'EACCES: permission denied' and its code lines must not make paths of the tokens (no <cwd>/EACCES)",
    setup: 'mkdir {out}/p',
    command: `npm install --offline --prefix {out}/p ${tinyTgz}`,
    mode: 'read-only',
    expected: {
      denied: true,
      path: '{out}/p/node_modules',
      remedy: '--mode workspace-write --writable {out}/p',
    },
    effects: 'ls {out}/p/node_modules 2>&1',
    needs: ['npm'],
  },
  {
    name: 'npm-registry-view',
    about: 'one registry case: npm view against the real registry (network inherit)',
    command: 'npm view semver@7.6.0 version',
    mode: 'workspace-write',
    needs: ['npm', 'registry'],
  },
  {
    name: 'npm-registry-denied-network',
    about: 'the same registry call under network deny: no route out of the private network namespace',
    // A cold cache in the root: npm answers from a warm one when the network fails.
    command: 'npm view semver@7.6.0 version --cache .npm-cold --fetch-retries=0 --fetch-timeout=5000',
    mode: 'workspace-write',
    network: 'deny',
    expected: { fails: 'network deny: only loopback exists in the private network namespace' },
    needs: ['npm', 'registry'],
  },

  // --- node ---------------------------------------------------------------------------------
  {
    name: 'node-test-read-only',
    about: 'node --test in read-only; the test writes os.tmpdir() (the session TMPDIR)',
    setup: nodeTestTmp,
    command: 'node --test --test-reporter=spec',
    mode: 'read-only',
    nobody: 'also',
  },
  {
    name: 'node-test-denial-on-stdout',
    about: "a test writing outside the root fails with EROFS/EACCES that node's test runner prints on STDOUT",
    setup: `mkdir -p test && cat > test/report.test.mjs <<'EOF'
import test from 'node:test'
import fs from 'node:fs'
test('writes a report', () => { fs.writeFileSync('{out}/report.txt', 'ok') })
EOF`,
    command: 'node --test',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/report.txt', remedy: '--writable {out}' },
    effects: 'cat {out}/report.txt 2>&1',
    nobody: 'also',
  },

  // --- python -------------------------------------------------------------------------------
  {
    name: 'python-venv-pip-local',
    about: 'a venv, then pip install of a local wheel and a local sdist (offline, pip cache in the confined cache)',
    command:
      '{py} -m venv .venv && .venv/bin/pip install -q --no-index {fix}/wl_tiny-1.0-py3-none-any.whl && .venv/bin/pip install -q --no-index --no-build-isolation {fix}/wl_sdist-1.0.tar.gz && .venv/bin/python -c "import wl_tiny, wl_sdist; print(wl_tiny.add(2, 3), wl_sdist.mul(2, 3))"',
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    effects: '.venv/bin/pip list --format=freeze 2>/dev/null | grep wl',
    nobody: 'also',
    needs: ['python3-venv'],
  },
  {
    name: 'python-unittest-tempfile',
    about: 'unittest with tempfile in read-only: the session TMPDIR is the only writable place and suffices',
    setup: unittestTmp,
    command: '{py} -m unittest -q',
    mode: 'read-only',
    compare: ['stdout', 'stderr'],
    nobody: 'also',
  },
  {
    name: 'python-multiprocessing-pool',
    about:
      'multiprocessing.Pool in workspace-write: the default chain picks bubblewrap here (Landlock is partial), whose private /dev/shm makes it work',
    command: pool,
    mode: 'workspace-write',
    expected: 'same',
    on: { landlock: noShm },
  },
  {
    name: 'python-multiprocessing-shared-memory',
    about: '--shared-memory: the chain prefers bubblewrap (a private /dev/shm) even in read-only',
    command: pool,
    mode: 'read-only',
    flags: ['--shared-memory'],
    expected: 'same',
    on: { landlock: noShm },
    nobody: 'also',
  },
  {
    name: 'python-multiprocessing-read-only-default',
    about:
      'without --shared-memory the default chain picks Landlock for read-only (full there), which refuses /dev/shm: the truthful verdict is a failure cordon does not call a write denial',
    command: pool,
    mode: 'read-only',
    expected: 'same',
    on: { landlock: noShm },
  },
  {
    name: 'python-sqlite3',
    about: 'sqlite3 creates, fills and queries a database (and its journal) in the root',
    command: `{py} -c "import sqlite3; c = sqlite3.connect('app.db'); c.execute('create table t (x)'); c.executemany('insert into t values (?)', [(1,), (2,)]); c.commit(); print(c.execute('select sum(x) from t').fetchone()[0])"`,
    mode: 'workspace-write',
    effects: `{py} -c "import sqlite3; print(sqlite3.connect('app.db').execute('select count(*) from t').fetchone())"`,
  },
  {
    name: 'python-sqlite3-read-only-query',
    about: 'a SELECT on an existing database in read-only (sqlite falls back to a read-only open)',
    setup: `{py} -c "import sqlite3; c = sqlite3.connect('app.db'); c.execute('create table t (x)'); c.execute('insert into t values (41)'); c.commit()"`,
    command: `{py} -c "import sqlite3; print(sqlite3.connect('app.db').execute('select x + 1 from t').fetchone()[0])"`,
    mode: 'read-only',
  },

  // --- build and file tools -----------------------------------------------------------------
  {
    name: 'make-gcc',
    about: 'make compiles a C program (gcc temp files in TMPDIR) and runs it',
    setup: helloC,
    command: 'make -s && ./hello',
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    nobody: 'also',
    needs: ['make', 'gcc'],
  },
  {
    name: 'make-gcc-read-only',
    about: 'the same build in read-only: the linker cannot create its output in the root',
    setup: helloC,
    command: 'make -s',
    mode: 'read-only',
    expected: { denied: true, path: '{root}/hello', remedy: '--mode workspace-write' },
    effects: 'ls hello 2>&1',
    needs: ['make', 'gcc'],
  },
  {
    name: 'chmod-x-script',
    about: 'write a script, chmod +x it, run it',
    command: `printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod +x run.sh && ./run.sh && stat -c %A run.sh`,
    mode: 'workspace-write',
  },
  {
    name: 'tar-gzip-roundtrip',
    about: 'tar czf, extract, gzip -k, gunzip -c',
    setup: 'mkdir -p src && echo a > src/a.txt && echo notes > notes.txt',
    command:
      'tar czf src.tgz src && rm -rf src && tar xzf src.tgz && cat src/a.txt && gzip -k notes.txt && gunzip -c notes.txt.gz && tar tzf src.tgz',
    mode: 'workspace-write',
    effects: 'ls',
    nobody: 'also',
  },
  {
    name: 'tar-extract-outside',
    about: 'tar -C a dir outside the root: tar names members relative to -C',
    command: 'tar xzf {fix}/bundle.tgz -C {out}',
    via: ['cli', 'executor'],
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/bundle', remedy: '--writable {out}' },
    effects: 'ls {out}/bundle 2>&1',
  },
  {
    name: 'sed-in-place',
    about: 'sed -i (a temp file beside the target, renamed over it)',
    setup: "printf 'name=old\\n' > config.ini",
    command: 'sed -i s/old/new/ config.ini && cat config.ini',
    mode: 'workspace-write',
    effects: 'cat config.ini',
    nobody: 'also',
  },
  {
    name: 'sed-in-place-outside',
    about: "sed -i on a file outside the root: sed names its temp file ('couldn't open temporary file')",
    setup: "printf 'name=old\\n' > {out}/config.ini",
    command: 'sed -i s/old/new/ {out}/config.ini',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/sed*', remedy: '--writable {out}' },
    effects: 'cat {out}/config.ini',
  },
  {
    name: 'symlinks-inside',
    about: 'ln -s, read through the link, readlink, replace a dir link',
    setup: 'echo data > data.txt && mkdir v1 v2',
    command:
      'ln -s data.txt link.txt && cat link.txt && readlink link.txt && ln -sfn v1 current && ln -sfn v2 current && readlink current',
    mode: 'workspace-write',
    effects: 'ls -l link.txt current | cut -c1',
  },
  {
    name: 'symlink-write-through-to-outside',
    about: 'a write through a symlink inside the root that points outside: the target is what is refused',
    setup: 'ln -s {out} shared',
    command: 'echo x > shared/f.txt',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/f.txt', remedy: '--writable {out}' },
    effects: 'cat {out}/f.txt 2>&1',
    nobody: 'also',
  },
  {
    name: 'mktemp-read-only',
    about: 'mktemp and mktemp -d in read-only: they create in TMPDIR (the session one)',
    command:
      'd=$(mktemp -d) && echo x > "$d/f" && cat "$d/f" && f=$(mktemp) && echo y > "$f" && cat "$f" && rm -rf "$d" "$f" && echo cleaned',
    mode: 'read-only',
    nobody: 'also',
  },
  {
    name: 'file-ops',
    about: 'mkdir -p, cp -r, mv, rm -rf, touch inside the root',
    command: 'mkdir -p a/b && touch a/b/c && cp -r a d && mv d e && rm -rf a && find . | sort',
    mode: 'workspace-write',
  },
  {
    name: 'rg-search',
    about: 'ripgrep in read-only',
    setup: "mkdir -p src && printf 'fn main() {}\\n// TODO: x\\n' > src/main.rs",
    command: 'rg -n TODO',
    mode: 'read-only',
    needs: ['rg'],
  },
  {
    name: 'foreign-owned-workspace',
    about:
      'a root host in a workspace owned by uid 65534 (a bind-mounted checkout): the command runs as the owner and writes its own workspace',
    setup: "printf 'a\\n' > f.txt && chown -R 65534:65534 {root}",
    command: 'sed -i s/a/b/ f.txt && echo c >> f.txt && touch new.txt && cat f.txt',
    mode: 'workspace-write',
    effects: 'cat f.txt && ls',
  },

  // --- servers and the network --------------------------------------------------------------
  {
    name: 'http-server-curl-kill',
    about: 'a background server on loopback, curl, kill, all within one command (network inherit)',
    command: server('{port}'),
    mode: 'read-only',
    nobody: 'also',
    needs: ['curl'],
  },
  {
    name: 'http-server-curl-kill-network-deny',
    about: 'the same under network deny: the private network namespace keeps its own loopback',
    command: server('{port}'),
    mode: 'read-only',
    network: 'deny',
    nobody: 'also',
    needs: ['curl'],
  },
  {
    name: 'host-service-network-inherit',
    about: "a host loopback service is reachable under network inherit (the host's network)",
    command: 'curl -s --max-time 5 http://127.0.0.1:{hostport}/',
    mode: 'read-only',
    hostServer: true,
    needs: ['curl'],
  },
  {
    name: 'host-service-network-deny',
    about: "under network deny the host's loopback services are out of reach (another network namespace)",
    command: 'curl -s --max-time 5 http://127.0.0.1:{hostport}/',
    mode: 'read-only',
    network: 'deny',
    hostServer: true,
    expected: { fails: "network deny: the host's loopback is another network namespace" },
    needs: ['curl'],
  },

  // --- output -------------------------------------------------------------------------------
  {
    name: 'long-output-spill',
    about: 'output past the in-memory bound: the tail is kept, and the spill file the JSON names exists after the run',
    command: 'seq 1 200000',
    mode: 'read-only',
    spill: true,
    nobody: 'also',
  },

  // --- writes outside what the mode grants --------------------------------------------------
  {
    name: 'write-outside-read-only',
    about: 'a redirection outside the root in read-only',
    command: 'echo x > {out}/note.txt',
    mode: 'read-only',
    expected: { denied: true, path: '{out}/note.txt', remedy: '--mode workspace-write --writable {out}' },
    effects: 'cat {out}/note.txt 2>&1',
    nobody: 'also',
  },
  {
    name: 'write-outside-workspace-write',
    about: 'a redirection outside the root in workspace-write',
    command: 'echo x > {out}/note.txt',
    mode: 'workspace-write',
    expected: { denied: true, path: '{out}/note.txt', remedy: '--writable {out}' },
    effects: 'cat {out}/note.txt 2>&1',
  },
  {
    name: 'write-inside-read-only',
    about: 'read-only: the root itself is not writable; workspace-write is the remedy',
    command: 'echo x > note.txt',
    mode: 'read-only',
    expected: { denied: true, path: '{root}/note.txt', remedy: '--mode workspace-write' },
    effects: 'cat note.txt 2>&1',
  },
  {
    name: 'cd-subdir-relative-write',
    about: "after cd into a subdir, a relative failing write resolves against the shell's cwd",
    setup: 'mkdir -p pkg/sub',
    command: 'cd pkg/sub && echo x > out.txt',
    via: ['cli', 'executor'],
    mode: 'read-only',
    expected: { denied: true, path: '{root}/pkg/sub/out.txt', remedy: '--mode workspace-write', orNoClaimViaCli: true },
    effects: 'cat pkg/sub/out.txt 2>&1',
    nobody: 'also',
  },
  {
    name: 'cd-outside-relative-write',
    about: 'after cd to a dir outside the root, a relative failing write names that dir (not the root)',
    setup: 'mkdir {out}/sub',
    command: 'cd {out}/sub && touch made.txt',
    via: ['cli', 'executor'],
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{out}/sub/made.txt',
      remedy: '--writable {out}/sub',
      orNoClaimViaCli: true,
    },
    effects: 'ls {out}/sub',
    nobody: 'also',
  },
  {
    name: 'cd-variable-relative-write',
    about:
      'cd through a variable: only the shell knows its cwd; cordon must use it (or name no path, never a wrong one)',
    setup: 'mkdir {out}/sub',
    command: 'dest={out}/sub; cd "$dest" && touch made.txt',
    via: ['cli', 'executor'],
    mode: 'workspace-write',
    expected: {
      denied: true,
      path: '{out}/sub/made.txt',
      remedy: '--writable {out}/sub',
      orNoClaimViaCli: true,
    },
    effects: 'ls {out}/sub',
  },

  // --- reads the uid cannot do (never a write denial) ---------------------------------------
  {
    name: 'read-unreadable-as-nobody',
    about: 'uid 65534 reading a root 0600 file fails unconfined too: the same failure, and no denial claimed',
    command: 'cat {fix}/root-secret.txt',
    mode: 'read-only',
    compare: ['stdout', 'stderr'],
    nobody: 'only',
  },
  {
    name: 'copy-unreadable-as-nobody',
    about: "cp of a file the uid cannot read: 'cannot open … for reading', not a write denial",
    command: 'cp {fix}/root-secret.txt ./copy.txt',
    mode: 'workspace-write',
    compare: ['stdout', 'stderr'],
    nobody: 'only',
  },
  {
    name: 'root-reads-foreign-0600',
    about:
      "a confined root has no CAP_DAC_OVERRIDE, so another uid's 0600 file is unreadable (unconfined root reads it): a failed read, never a write denial with a --writable remedy",
    command: 'cat {fix}/nobody-secret.txt',
    mode: 'read-only',
    expected: { fails: "a confined root is not root: no capability overrides another uid's 0600 mode" },
  },
]
