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
# The last line: PASS, or the failure again (the tail of a CI log is often all a reader gets).
say_outcome() { # say_outcome RC
  if [[ $1 -eq 0 ]]; then say "PASS"; else say "FAILED (exit $1)${INT_FAILURE:+: $INT_FAILURE}"; fi
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
