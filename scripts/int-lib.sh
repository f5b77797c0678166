#!/usr/bin/env bash
# Helpers of the scripts/*.int.sh tests. Source it after setting INT_NAME (the tag of each line).

say() { printf '[%s] %s\n' "$INT_NAME" "$*"; }
fail() {
  printf '[%s] FAIL: %s\n' "$INT_NAME" "$*" >&2
  exit 1
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
