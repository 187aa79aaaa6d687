# Sourced by the `bash -c` that runs a confined command (through BASH_ENV; src/shell/failure-log.ts).
# Each command that fails appends its shell's working directory and its text to $CORDON_ERR_LOG,
# so a denial message's relative path resolves where the command really ran. Only this shell
# reads this file: BASH_ENV goes back to the caller's own (sourced here) before anything runs.
if [ -n "${CORDON_ERR_LOG-}" ]; then
  __cordon_err_log=$CORDON_ERR_LOG
  unset CORDON_ERR_LOG
  set -o errtrace
  trap 'printf "%s\t%s\n" "$PWD" "${BASH_COMMAND//$'"'"'\n'"'"'/ }" >>"$__cordon_err_log" 2>/dev/null' ERR
fi
if [ -n "${CORDON_USER_BASH_ENV-}" ]; then
  export BASH_ENV=$CORDON_USER_BASH_ENV
  unset CORDON_USER_BASH_ENV
  . "$BASH_ENV"
else
  unset BASH_ENV
fi
