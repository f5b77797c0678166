#!/usr/bin/env bash
# Shared helpers for install.sh. Source it; do not execute it.
# shellcheck disable=SC2034 # globals read by the other scripts/install files

TALLY_INSTALL_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TALLY_REPO="$(cd "$TALLY_INSTALL_LIB/../.." && pwd)"
# Each service runs as a system user of its own, none of which can read another's secrets
# (docs/adr/0017-one-system-user-per-service.md):
TALLY_USER="${TALLY_USER:-tally}"                   # api, worker: tally.env, admin.key
TALLY_MEDIA_USER="${TALLY_MEDIA_USER:-tally-media}" # the agent and the egress/ingress it runs
TALLY_LIVEKIT_USER="${TALLY_LIVEKIT_USER:-tally-livekit}"
TALLY_PG_USER="${TALLY_PG_USER:-tally-postgres}"    # Tally's own cluster (initdb refuses root)
TALLY_REDIS_USER="${TALLY_REDIS_USER:-tally-redis}"
TALLY_CADDY_USER="${TALLY_CADDY_USER:-caddy}"       # Debian's caddy package's user (--domain)
TALLY_TURN_USER="${TALLY_TURN_USER:-turnserver}"    # Debian's coturn package's user (--domain: TURN over TLS)
# Recordings and live HLS are shared: the media user's group, which the tally user joins; shared
# files are created group-writable (this umask) so either side can move or delete them.
TALLY_SHARED_UMASK=0007
# What a service's environment starts from (services never inherit the installer's environment).
TALLY_SERVICE_PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Services in start order; stop goes in reverse.
TALLY_SERVICES=(postgres redis sentinel object-store object-store-keys livekit agent api worker) # object-store(-keys): --object-store only; sentinel: --redis-sentinel, --redis-replica

DRY_RUN="${DRY_RUN:-0}"

log() { printf '[install] %s\n' "$*"; }
warn() { printf '[install] WARNING: %s\n' "$*" >&2; }
die() {
  printf '[install] ERROR: %s\n' "$*" >&2
  exit 1
}

# step TITLE: starts a phase (and ends the one before, printing how long it took); the final
# summary lists every phase's duration (print_step_times).
STEP_NO=0
STEP_TITLE=""
STEP_STARTED_US=0
STEP_TIMES=()
step() {
  end_step
  STEP_NO=$((STEP_NO + 1))
  STEP_TITLE="$*"
  STEP_STARTED_US="$(now_us)"
  printf '[install] (%d) %s\n' "$STEP_NO" "$*"
}

# now_us -> microseconds since the epoch (bash's EPOCHREALTIME, no subprocess).
now_us() {
  local t="$EPOCHREALTIME"
  printf '%s' "$((10#${t%.*} * 1000000 + 10#${t#*.}))"
}

# fmt_us MICROSECONDS -> "12.3s"
fmt_us() {
  local tenths=$((($1 + 50000) / 100000))
  printf '%d.%ds' $((tenths / 10)) $((tenths % 10))
}

# end_step: prints the running phase's duration and records it for the summary.
end_step() {
  [[ -n "$STEP_TITLE" ]] || return 0
  local took
  took="$(fmt_us $(($(now_us) - STEP_STARTED_US)))"
  printf '[install]     (%d) took %s\n' "$STEP_NO" "$took"
  STEP_TIMES+=("$(printf '%7s  (%d) %s' "$took" "$STEP_NO" "$STEP_TITLE")")
  STEP_TITLE=""
}

# print_step_times: the summary's table of phases and their durations.
print_step_times() {
  end_step
  local line
  printf '[install]   Phases:\n'
  for line in "${STEP_TIMES[@]}"; do printf '[install]     %s\n' "$line"; done
}

dry() { [[ "$DRY_RUN" == 1 ]]; }

# redis_cli_url URL ARGS...: redis-cli against a redis:// URL. The password goes through
# REDISCLI_AUTH (out of the process list) and the user, if any (a joined node's own ACL user,
# redis://tally-node-NAME:PASSWORD@HOST:PORT), through --user.
redis_cli_url() {
  local url="$1"
  shift
  if [[ "$url" =~ ^(rediss?://)([^:@/]*):([^@]+)@(.*)$ ]]; then
    local user="${BASH_REMATCH[2]}"
    REDISCLI_AUTH="${BASH_REMATCH[3]}" redis-cli -u "${BASH_REMATCH[1]}${BASH_REMATCH[4]}" ${user:+--user "$user"} "$@"
  else
    redis-cli -u "$url" --no-auth-warning "$@"
  fi
}

# run CMD...: runs a state-changing command, or only prints it with --dry-run.
run() {
  if dry; then
    printf '[install]     would run: %s\n' "${*}"
  else
    "$@"
  fi
}

# write_file PATH MODE OWNER[:GROUP] < content
# Atomically writes PATH (temp file + rename) when its content, mode or owner differ.
# Prints whether it changed anything; with --dry-run only says what it would do.
write_file() {
  local path="$1" mode="$2" owner="$3" content
  content="$(cat)"
  if [[ -f "$path" ]] && [[ "$(cat "$path")" == "$content" ]] &&
    [[ "$(stat -c '%a %U:%G' "$path")" == "$mode $(owner_with_group "$owner")" ]]; then
    log "    $path: unchanged"
    return 0
  fi
  if dry; then
    log "    would write $path (mode $mode, owner $owner)"
    return 0
  fi
  local tmp
  tmp="$(mktemp "$path.XXXXXX")"
  printf '%s\n' "$content" >"$tmp"
  chmod "$mode" "$tmp"
  chown "$(owner_with_group "$owner")" "$tmp"
  mv -f "$tmp" "$path"
  log "    wrote $path (mode $mode)"
}

owner_with_group() {
  if [[ "$1" == *:* ]]; then printf '%s' "$1"; else printf '%s:%s' "$1" "$1"; fi
}

# ensure_dir PATH MODE OWNER[:GROUP]
ensure_dir() {
  local path="$1" mode="$2" owner="$3"
  if [[ -d "$path" ]] && [[ "$(stat -c '%a %U:%G' "$path")" == "$mode $(owner_with_group "$owner")" ]]; then
    return 0
  fi
  if dry; then
    log "    would create $path (mode $mode, owner $owner)"
    return 0
  fi
  mkdir -p "$path"
  chmod "$mode" "$path"
  chown "$(owner_with_group "$owner")" "$path"
}

# as_user USER CMD...: CMD as USER (with its supplementary groups), from /.
as_user() {
  local user="$1"
  shift
  (cd / && setpriv --reuid="$user" --regid="$user" --init-groups -- "$@")
}

# random_secret BYTES -> 2*BYTES hex characters from /dev/urandom.
random_secret() {
  od -An -v -tx1 -N"$1" /dev/urandom | tr -d ' \n'
}

sha() { sha256sum | cut -c1-16; }

# tcp_port_busy PORT / udp_port_busy PORT -> 0 when something listens on it (any address).
tcp_port_busy() {
  if command -v ss >/dev/null 2>&1; then
    [[ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
udp_port_busy() {
  command -v ss >/dev/null 2>&1 || return 1
  [[ -n "$(ss -Huln "sport = :$1" 2>/dev/null)" ]]
}

# http_status URL -> prints the HTTP status code (000 when nothing answers).
http_status() {
  curl -s -o /dev/null -m 5 -w '%{http_code}' "$1" 2>/dev/null || true
}

# wait_until SECONDS DESCRIPTION CMD...: polls CMD every 0.5 s; 1 on timeout.
wait_until() {
  local timeout="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + timeout))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      warn "$what: not ready after ${timeout}s"
      return 1
    fi
    sleep 0.5
  done
}

# tail_log FILE [LINES]: prints the end of a log for a failure report.
tail_log() {
  local file="$1" lines="${2:-40}"
  if [[ -f "$file" ]]; then
    printf '[install] ---- last %d lines of %s ----\n' "$lines" "$file" >&2
    tail -n "$lines" "$file" >&2
    printf '[install] ----\n' >&2
  else
    printf '[install] (no log at %s)\n' "$file" >&2
  fi
}
