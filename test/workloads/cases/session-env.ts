/**
 * The session's environment (issue 24, items 5, 6 and 8): a stdin that is not a terminal reaches
 * the command; per-user socket and runtime dirs (tmux, screen) live in the session's private
 * scratch; the scrub keeps values that cannot be secrets and a failed run names what it removed.
 */
import type { WorkloadCase } from '../case.js'

/** Removes a tmux socket its killed server leaves (the unconfined control's is in the host /tmp). */
const dropSocket = (name: string) => `rm -f "\${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/${name}"`
const noPty =
  'Landlock gives a command no pty of its own (granting /dev/pts would reopen every host terminal): tmux and screen cannot open a window; bubblewrap gives each run a /dev/pts of its own'
// 4 MiB of text, in lines: more than every pipe and buffer on the way holds.
const bigInput = `${'0123456789abcdef'.repeat(4)}\n`.repeat(64 * 1024)

/** The session-environment round. */
export const SESSION_ENV: readonly WorkloadCase[] = [
  // --- stdin (item 5) -----------------------------------------------------------------------
  {
    name: 'stdin-pipe-line-count',
    about: 'a piped stdin reaches the confined command, EOF included: wc counts its lines',
    command: 'wc -l',
    stdin: 'a\nb\n',
    mode: 'read-only',
    nobody: 'also',
    via: ['cli', 'executor'],
  },
  {
    name: 'stdin-sqlite-script',
    about: 'sqlite3 runs the SQL script it reads on stdin, and the database keeps its rows',
    command: 'sqlite3 app.db',
    stdin: 'create table t(x);\ninsert into t values (1), (2), (3);\nselect count(*) from t;\n',
    mode: 'workspace-write',
    effects: "sqlite3 app.db 'select count(*) from t'",
    nobody: 'also',
    needs: ['sqlite3'],
  },
  {
    name: 'stdin-large-streamed',
    about: 'four MiB of stdin stream through to the command whole',
    command: 'sha256sum; echo done',
    stdin: bigInput,
    mode: 'read-only',
  },
  {
    name: 'stdin-partly-read',
    about: 'a command that reads one line and one that reads nothing end the run; the rest of stdin is not waited for',
    command: 'head -n 1; true; echo after',
    stdin: bigInput,
    mode: 'read-only',
    via: ['cli', 'executor'],
  },
  // --- per-user runtime dirs (item 6) -------------------------------------------------------
  {
    name: 'tmux-server-socket',
    about: 'a tmux server needs no pty: its socket goes in the session runtime dir (TMUX_TMPDIR), not the host /tmp',
    command: `tmux -L wlsrv -f /dev/null start-server \\; set -g exit-empty off && tmux -L wlsrv ls && tmux -L wlsrv kill-server && echo "server gone" && ${dropSocket('wlsrv')}`,
    mode: 'read-only',
    nobody: 'also',
    needs: ['tmux'],
  },
  {
    name: 'tmux-detached-session',
    about: 'tmux starts a detached session on a private pty, lists it and ends it',
    command: `tmux -L wlses -f /dev/null new-session -d -s wl 'sleep 60' && tmux -L wlses ls -F '#{session_name}' && tmux -L wlses kill-server && ${dropSocket('wlses')}`,
    mode: 'read-only',
    on: { landlock: { fails: noPty } },
    nobody: 'also',
    needs: ['tmux'],
  },
  {
    name: 'tmux-detached-session-write',
    about: 'the same under workspace-write',
    command: `tmux -L wlsew -f /dev/null new-session -d -s wl 'sleep 60' && tmux -L wlsew ls -F '#{session_name}' && tmux -L wlsew kill-server && ${dropSocket('wlsew')}`,
    mode: 'workspace-write',
    on: { landlock: { fails: noPty } },
    needs: ['tmux'],
  },
  {
    name: 'screen-detached-session',
    about: 'screen makes its socket dir (SCREENDIR, mode 0700) in the session runtime dir and runs a detached session',
    command: "screen -dmS wl sleep 60 && sleep 0.5 && screen -ls wl | grep -c '\\.wl' && screen -S wl -X quit",
    mode: 'workspace-write',
    on: {
      landlock: { fails: noPty },
      // As uid 65534 it works (test/e2e/cli/runtime-dirs.test.ts): screen ignores a failed chown there.
      bubblewrap: {
        fails:
          'as root, screen chowns its pty to group tty (gid 5), which the user namespace bubblewrap makes does not map: "chown tty: Invalid argument"',
      },
    },
    needs: ['screen'],
  },
  // --- the environment scrub (item 8) -------------------------------------------------------
  {
    name: 'env-switch-values-kept',
    about:
      'a value that cannot be a secret is kept whatever its name: corepack reads COREPACK_INTEGRITY_KEYS=0 (KEYS is a credential word)',
    env: { COREPACK_INTEGRITY_KEYS: '0', FEATURE_TOKEN_ENABLED: 'TRUE', GITHUB_TOKEN_OPTIONAL: '' },
    command:
      'echo "keys=$COREPACK_INTEGRITY_KEYS enabled=$FEATURE_TOKEN_ENABLED optional=${GITHUB_TOKEN_OPTIONAL-unset}"',
    mode: 'read-only',
    nobody: 'also',
  },
  {
    name: 'env-removed-named',
    about: 'a run that fails for want of a scrubbed credential names it (names only); --keep-env passes it on',
    env: { DEPLOY_API_KEY: 'wl-not-a-real-key-0123' },
    command: 'test -n "$DEPLOY_API_KEY" && echo "deploying with a key of ${#DEPLOY_API_KEY} characters"',
    mode: 'read-only',
    expected: { fails: 'the scrub removes DEPLOY_API_KEY (its name ends in KEY): the script finds no key' },
    removedEnv: { names: ['DEPLOY_API_KEY'], remedy: '--keep-env DEPLOY_API_KEY' },
  },
]
