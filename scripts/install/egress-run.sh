#!/usr/bin/env bash
# Runs Tally's LiveKit egress (the tally-egress service; started by supervise.sh or systemd as
# the service user) with what its recordings need:
#   - PATH with DIR/bin first: egress execs `egress run-handler` for every recording
#   - HOME, XDG_RUNTIME_DIR and TMPDIR under DIR/egress, working directory /
#   - a PulseAudio daemon of its own for RoomComposite (egress loads a null sink per recording
#     into it; Xvfb and Chromium are started by egress itself)
# SIGTERM (or SIGINT) stops the service: egress gets SIGINT, which stops its recordings (closing
# their files) and exits; its own SIGTERM would wait for every recording to end. (SIGTERM here,
# because a background job of a non-interactive shell, as supervise.sh starts this, ignores
# SIGINT and bash cannot trap a signal it started out ignoring.) When egress exits - v1.8.6
# does so by itself after a recording's internal error - this script stops PulseAudio and exits
# with egress's status, so the supervisor starts it again.
#
# Usage: egress-run.sh DIR
set -uo pipefail

home="${1:?usage: egress-run.sh DIR}"
base="$home/egress"
export HOME="$base" XDG_RUNTIME_DIR="$base/run" TMPDIR="$base/tmp" PATH="$home/bin:${PATH:-/usr/bin:/bin}"
export GST_DEBUG=1
mkdir -p "$XDG_RUNTIME_DIR" "$TMPDIR"
chmod 700 "$XDG_RUNTIME_DIR"
cd / || exit 1

egress=0 pulse=0
# shellcheck disable=SC2317 # invoked by trap
forward() {
  if ((egress > 0)); then kill -s "$1" "$egress" 2>/dev/null || true; fi
}
trap 'forward INT' TERM INT
trap '' HUP

if command -v pulseaudio >/dev/null 2>&1; then
  # -n: no default.pa (no hardware); the native protocol is all egress and Chromium use.
  pulseaudio --daemonize=no --exit-idle-time=-1 --disallow-exit --disable-shm=true \
    --realtime=false --high-priority=false --log-level=error -n \
    --load=module-native-protocol-unix </dev/null &
  pulse=$!
else
  echo "[egress-run] pulseaudio not found: RoomComposite recordings will fail (track recordings work)" >&2
fi

"$home/bin/egress" --config "$home/egress.yaml" </dev/null &
egress=$!
# `wait` returns early when a trapped signal arrives: keep waiting until egress is gone.
while :; do
  wait "$egress"
  status=$?
  kill -0 "$egress" 2>/dev/null || break
done
egress=0

if ((pulse > 0)); then
  kill -TERM "$pulse" 2>/dev/null || true
  wait "$pulse" 2>/dev/null || true
fi
exit "$status"
