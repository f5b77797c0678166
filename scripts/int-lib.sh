#!/usr/bin/env bash
# Helpers of the scripts/*.int.sh tests. Source it after setting INT_NAME (the tag of each line).

say() { printf '[%s] %s\n' "$INT_NAME" "$*"; }
INT_FAILURE=""
fail() {
  INT_FAILURE="$*"
  printf '[%s] FAIL: %s\n' "$INT_NAME" "$*" >&2
  exit 1
}
# fail_after OUTPUT MESSAGE: what a check's program printed, then a failure naming the error it
# threw (or, without one, its last lines).
fail_after() {
  local said
  said="$(grep -m1 -E '^([A-Za-z]*Error|FAIL)\b' <<<"$1" || tail -n 4 <<<"$1")"
  printf '%s\n' "$1" >&2
  fail "$2 (it said: $(tr -s '\n' ' ' <<<"$said" | cut -c1-1500))"
}
# After a failure, the last LINES lines of every log of the home under test.
print_logs_on_failure() { # print_logs_on_failure RC LINES
  local rc="$1" lines="$2" f
  [[ $rc -ne 0 && -d "$home/log" ]] || return 0
  for f in "$home"/log/*.log "$home"/workers/*/*.log; do
    [[ -f "$f" ]] || continue
    printf '[%s] ---- %s (last %s lines)\n' "$INT_NAME" "$f" "$lines" >&2
    tail -n "$lines" "$f" >&2 || true
  done
}
# host_state: one line of what the machine went through (load, memory, the free space under /tmp,
# the share of the last 10 s and 60 s that tasks stalled on CPU, I/O and memory, and any process the
# kernel killed for memory), so a failure under a stalled or full host says so.
host_state() {
  local pressure="" kind avg10 avg60 oom
  for kind in cpu io memory; do
    [[ -r "/proc/pressure/$kind" ]] || continue
    read -r avg10 avg60 < <(awk '/^some/ { sub("avg10=", "", $2); sub("avg60=", "", $3); print $2, $3 }' "/proc/pressure/$kind")
    pressure+=" $kind ${avg10}%/${avg60}%"
  done
  oom="$(dmesg 2>/dev/null | grep -c 'Out of memory: Killed' || true)"
  printf 'load %s; memory available %s MB; /tmp free %s; stalled (10 s/60 s):%s; killed for memory since boot: %s' \
    "$(cut -d' ' -f1-3 /proc/loadavg)" "$(awk '/^MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)" \
    "$(df -h --output=avail /tmp | tail -n1 | tr -d ' ')" "${pressure:- unknown}" "${oom:-unknown}"
}
# The last line: PASS, or the failure again (the tail of a CI log is often all a reader gets).
say_outcome() { # say_outcome RC
  if [[ $1 -eq 0 ]]; then say "PASS"; else say "FAILED (exit $1)${INT_FAILURE:+: $INT_FAILURE} [host: $(host_state)]"; fi
}
check() { # check DESCRIPTION CMD...
  local what="$1"
  shift
  "$@" || fail "$what"
  say "ok: $what"
}
eventually() { # eventually SECONDS CMD...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
