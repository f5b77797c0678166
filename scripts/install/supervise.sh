#!/usr/bin/env bash
# Keeps one Tally service running in the background on hosts without systemd.
# Started by install.sh (scripts/install/services.sh) through `setsid`, as root; runs the
# service as USER and restarts it when it exits (backoff 1 s doubling to 30 s; reset after
# 60 s of uptime). SIGTERM/SIGINT: forwards STOP_SIGNAL to the service, waits for it, exits.
#
# Usage: supervise.sh NAME RUN_DIR STOP_SIGNAL USER CWD ENV_FILE|- -- CMD [ARG...]
#   writes RUN_DIR/NAME.pid (this process) and RUN_DIR/NAME.child.pid (the service);
#   stdout/stderr (the service's and its own) go wherever the caller pointed them (the log).
#   ENV_FILE: KEY=VALUE lines exported to the service (read here so secrets never sit in argv).
#
# Everything runs from main(), so bash has parsed the whole file before anything runs:
# updating this file while supervisors are running cannot derail them.
set -uo pipefail

say() { printf '[supervise %s] %s %s\n' "$name" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }

load_env_file() {
  local line key value
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
      key="${BASH_REMATCH[1]}" value="${BASH_REMATCH[2]}"
      if [[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]]; then value="${BASH_REMATCH[1]}"; fi
      export "$key=$value"
    fi
  done <"$1"
}

# shellcheck disable=SC2317 # invoked by trap
on_stop() {
  stopping=1
  if ((child > 0)); then kill -s "$stop_signal" "$child" 2>/dev/null || true; fi
}

main() {
  if [[ $# -lt 8 || "$7" != "--" ]]; then
    echo "usage: supervise.sh NAME RUN_DIR STOP_SIGNAL USER CWD ENV_FILE|- -- CMD..." >&2
    exit 2
  fi
  name="$1" run_dir="$2" stop_signal="$3"
  local user="$4" cwd="$5" env_file="$6"
  shift 7
  [[ "$env_file" == "-" ]] || load_env_file "$env_file"
  cd "$cwd" || exit 1
  ulimit -n 65536 2>/dev/null || true
  # Files the services create are their group's too (as UMask= in the systemd units): recordings
  # and live HLS are shared between the media user and tally through the media user's group.
  umask 0007

  child=0 stopping=0
  trap on_stop TERM INT
  trap '' HUP
  printf '%s\n' "$$" >"$run_dir/$name.pid"
  say "supervising: $*"

  local delay=1 started status=none uptime
  while ((stopping == 0)); do
    started=$SECONDS
    setpriv --reuid="$user" --regid="$user" --init-groups -- "$@" </dev/null &
    child=$!
    printf '%s\n' "$child" >"$run_dir/$name.child.pid"
    # A stop request that arrived between the fork and `child=` must still reach the service.
    if ((stopping)); then kill -s "$stop_signal" "$child" 2>/dev/null || true; fi
    # `wait` returns early when a trapped signal arrives: keep waiting until the child is gone.
    while :; do
      wait "$child"
      status=$?
      kill -0 "$child" 2>/dev/null || break
    done
    child=0
    rm -f "$run_dir/$name.child.pid"
    ((stopping)) && break
    uptime=$((SECONDS - started))
    if ((uptime >= 60)); then delay=1; fi
    say "exited with status $status after ${uptime}s; restarting in ${delay}s"
    sleep "$delay" &
    wait $! || kill $! 2>/dev/null || true
    delay=$((delay * 2 > 30 ? 30 : delay * 2))
  done
  say "stopped (service exit status $status)"
  rm -f "$run_dir/$name.pid"
  exit 0
}

main "$@"
