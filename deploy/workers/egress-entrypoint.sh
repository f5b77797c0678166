#!/bin/sh
# Runs LiveKit egress as a Tally media worker: PulseAudio for RoomComposite's sound (egress loads
# one null sink per job into it), then egress in the foreground. Same script on the host (native
# runtime) and in the image (docker runtime).
#   egress-entrypoint.sh EGRESS_BINARY CONFIG_FILE
set -eu
binary=$1
config=$2
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$TMPDIR"
chmod 700 "$XDG_RUNTIME_DIR"
if command -v pulseaudio >/dev/null 2>&1; then
  pulseaudio --daemonize=no --exit-idle-time=-1 --disallow-exit --disable-shm=true --realtime=false \
    --high-priority=false --log-level=error -n --load=module-native-protocol-unix &
else
  echo "pulseaudio is not installed: RoomComposite recordings will have no sound" >&2
fi
# GStreamer scans its plugins into a registry under $HOME the first time a process uses it. Done
# here, before egress says it is ready, rather than by the first recording's pipeline: on a busy
# host that scan delayed the pipeline by seconds, and a video egress that late could wait in
# STARTING for good (docs/recordings.md, A start that never comes).
if command -v gst-inspect-1.0 >/dev/null 2>&1; then
  gst-inspect-1.0 fakesink >/dev/null 2>&1 || echo "gst-inspect-1.0 failed: the first recording builds GStreamer's registry" >&2
fi
# Egress execs `egress run-handler` for every composite job, so its directory goes on PATH.
PATH="$(dirname "$binary"):$PATH"
export PATH
exec "$binary" --config "$config"
