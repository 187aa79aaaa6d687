# Sourced by the `bash -c` that runs a confined command (through BASH_ENV; src/shell/failure-log.ts).
# Each change of directory (cd, pushd, popd, in this shell and its subshells) appends the new
# working directory, NUL-terminated, to $CORDON_DIR_LOG, so a denial message's relative path
# resolves where the command ran. No trap: an ERR, EXIT or DEBUG trap makes bash fork the command
# it would otherwise exec as its last, and a signal that kills that command would reach the host
# as the shell's exit code 128+N instead of the signal (and a loop would pay for every command).
# Only this shell reads this file: BASH_ENV goes back to the caller's own (sourced here) before
# anything runs.
if [ -n "${CORDON_DIR_LOG-}" ]; then
  __cordon_dir_log=$CORDON_DIR_LOG
  unset CORDON_DIR_LOG
  cd() { builtin cd "$@" || return; printf '%s\0' "$PWD" 2>/dev/null >>"$__cordon_dir_log"; return 0; }
  pushd() { builtin pushd "$@" || return; printf '%s\0' "$PWD" 2>/dev/null >>"$__cordon_dir_log"; return 0; }
  popd() { builtin popd "$@" || return; printf '%s\0' "$PWD" 2>/dev/null >>"$__cordon_dir_log"; return 0; }
fi
if [ -n "${CORDON_USER_BASH_ENV-}" ]; then
  export BASH_ENV=$CORDON_USER_BASH_ENV
  unset CORDON_USER_BASH_ENV
  . "$BASH_ENV"
else
  unset BASH_ENV
fi
