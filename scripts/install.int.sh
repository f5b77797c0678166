#!/usr/bin/env bash
# Integration test of ./install.sh on this host (root; background mode, no systemd needed).
# Installs into a temp home on free non-default ports (never 5432/6379/7880/8080), then checks:
#   dry run changes nothing; /healthz 200; config files and modes; POST /v1/apps -> 201;
#   no egress runs until work asks for one; then the agent starts it with a config derived from
#   the capacity model and reports it; a re-run keeps secrets, data and unchanged services; the
#   supervisor restarts a killed api, and the agent an egress that exited by itself;
#   --stop leaves no process and frees every port; install after --stop brings back the
#   same data and keys; least privilege: each service runs as its own user, secrets are readable
#   by their service only, PostgreSQL wants the tally role's password (no trust), and a home from
#   the previous layout (one user for everything, local trust) is migrated keeping its data;
#   --cluster-bind on the address of a veth pair to a namespace standing in for a
#   node's host: Redis answers the node there (password required), join tokens are issued and the
#   join hands out a Redis URL that works from the node; a re-run remembers the address;
#   --control-nodes opens PostgreSQL on that address to the node's address (by password) and makes
#   control tokens available, and --control-nodes none closes it again.
#   --database-url-file: the data moved to an external PostgreSQL with pg_dump, kept on re-runs,
#   one that does not answer refused before anything is written.
# Exits non-zero on the first failed check (logs of the home are printed). Takes ~2-3 min.
#
# Usage: bash scripts/install.int.sh      (TALLY_KEEP_HOME=1 keeps the temp home)
# Side effects on the host, as install.sh itself: apt packages / LiveKit builds if missing,
# the system users tally, tally-media, tally-livekit, tally-postgres, tally-redis, net.core.{r,w}mem_max = 16 MB and /etc/sysctl.d/60-tally.conf; for the
# --cluster-bind check, a network namespace and veth pair (10.233.x.0/24), removed at exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The services run the checkout as an unprivileged user. A clone under a private directory
# (say /root) is unreadable to it, as install.sh would say; test from a readable copy instead.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -r "$PWD/apps/api/src/main.ts" 2>/dev/null; then
  copy="$(mktemp -d /tmp/tally-install-src.XXXXXX)"
  chmod 755 "$copy"
  echo "[install.int] $PWD is private; testing from a copy in $copy"
  cp -a "$PWD/." "$copy/"
  cd "$copy"
fi

INT_NAME=install.int
# shellcheck source=scripts/int-lib.sh
source scripts/int-lib.sh

[[ "$(id -u)" -eq 0 ]] || fail "must run as root (install.sh does)"

declare -A used_ports=()
# free_port VAR: sets VAR to a port with no TCP or UDP listener, not handed out before (20000-59999).
# It assigns rather than prints: in a $(...) subshell the record of ports handed out would be lost.
free_port() {
  local -n assigned="$1"
  local port tries=0
  while ((tries++ < 500)); do
    port=$((20000 + RANDOM % 40000))
    [[ -z "${used_ports[$port]:-}" ]] || continue
    [[ -z "$(ss -Htuln "sport = :$port")" ]] || continue
    used_ports[$port]=1
    assigned="$port"
    return 0
  done
  fail "no free port found"
}

home="$(mktemp -d /tmp/tally-install-int.XXXXXX)"
free_port api_port
free_port pg_port
free_port redis_port
free_port lk_port
free_port rtc_tcp_port
free_port rtc_udp_port
free_port turn_udp_port
free_port egress_template_port
free_port ingress_rtmp_port
free_port ingress_whip_port
free_port ingress_relay_port
free_port ingress_udp_port
ingress_ports=(--ingress-rtmp-port "$ingress_rtmp_port" --ingress-whip-port "$ingress_whip_port"
  --ingress-relay-port "$ingress_relay_port" --ingress-udp-port "$ingress_udp_port")
tcp_ports=("$api_port" "$pg_port" "$redis_port" "$lk_port" "$rtc_tcp_port")
install_args=(--home "$home" --port "$api_port" --pg-port "$pg_port" --redis-port "$redis_port"
  --livekit-port "$lk_port" --rtc-tcp-port "$rtc_tcp_port" --rtc-udp-port "$rtc_udp_port"
  --turn-udp-port "$turn_udp_port"
  --egress-template-port "$egress_template_port" "${ingress_ports[@]}" --offline --no-systemd)
base="http://127.0.0.1:$api_port"

cleanup() {
  local rc=$?
  if [[ -f "$home/run/mode" ]]; then
    ./install.sh --stop --home "$home" >/dev/null 2>&1 || say "cleanup: --stop failed"
  fi
  remove_node_net
  if [[ -n "${ext_dir:-}" ]]; then
    stop_external_pg
    rm -rf "$ext_dir"
  fi
  print_logs_on_failure "$rc" 30
  restore_dashboard_source
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then say "kept $home"; else rm -rf "$home"; fi
  if [[ -n "${copy:-}" ]]; then rm -rf "$copy"; fi
  say_outcome "$rc"
}
trap cleanup EXIT

# A stand-in for a node's host on a private network: the namespace $node_ns, reached from this host
# through a veth pair: $origin_if here has $bind_ip (the address --cluster-bind is given), the
# namespace's end has $node_ip. From there this host's 127.0.0.1 is out of reach.
node_ns="tally-bind-$$" origin_if="tbind$$" bind_ip="" node_ip=""
create_node_net() {
  local tries=0 net
  while ((tries++ < 100)); do
    net="10.233.$((RANDOM % 256))"
    # A /24 no interface and no route of this host (nor a concurrent run) uses yet.
    [[ -z "$(ip -4 -o addr show | grep -F " inet $net." || true)" && -z "$(ip -4 route show "$net.0/24")" ]] || continue
    ip netns add "$node_ns"
    ip link add "$origin_if" type veth peer name node0 netns "$node_ns"
    ip addr add "$net.1/24" dev "$origin_if"
    ip link set "$origin_if" up
    ip -n "$node_ns" link set lo up
    ip -n "$node_ns" addr add "$net.2/24" dev node0
    ip -n "$node_ns" link set node0 up
    bind_ip="$net.1" node_ip="$net.2"
    return 0
  done
  fail "no free 10.233.x.0/24 for the node network"
}
remove_node_net() {
  ip link del "$origin_if" 2>/dev/null || true
  ip netns del "$node_ns" 2>/dev/null || true
}
# on_node CMD...: runs CMD in the node's namespace.
on_node() { nsenter --net="/run/netns/$node_ns" "$@"; }

# timed_install LABEL ARGS...: runs install.sh, keeping its output in $home.out.LABEL.
# install.sh runs with the host's PATH without the tools' pinned Node.js (that of a host with its
# own node, or none): it brings and uses its own.
host_path="$(tr ':' '\n' <<<"$PATH" | grep -v '/runtimes/node-' | paste -sd:)"
pinned_node_version="$(bash -c 'source scripts/provision/lib.sh && printf %s "$TALLY_NODE_VERSION"')"
timed_install() {
  local label="$1" start=$SECONDS
  shift
  if ! PATH="$host_path" ./install.sh "$@" >"$home.out.$label" 2>&1; then
    local said
    said="$(cat "$home.out.$label")"
    rm -f "$home.out.$label"
    fail_after "$said" "install.sh ($label) exited non-zero"
  fi
  say "install.sh ($label) took $((SECONDS - start))s"
  rm -f "$home.out.$label"
}

http_code() { curl -s -o /dev/null -m 10 -w '%{http_code}' "$@" || true; }
admin() { curl -s -m 10 -H "Authorization: Bearer $(cat "$home/admin.key")" "$@"; }
healthz_is_200() { [[ "$(http_code "$base/healthz")" == 200 ]]; }
dashboard_is_200() { [[ "$(http_code "$base/dashboard/")" == 200 ]]; }
dashboard_serves() { curl -s -m 10 "$base/dashboard/" | grep -qF -- "$1"; }
# Step 8 changes the dashboard's page source as an upgrade would; undone on exit.
dashboard_source="apps/dashboard/index.html"
restore_dashboard_source() { [[ -z "${dashboard_source_kept:-}" ]] || cp -p "$dashboard_source_kept" "$dashboard_source"; }
egress_yaml="$home/workers/egress/egress.yaml"
egress_yaml_has() { grep -qE "$1" "$egress_yaml"; }
# egress_pid: the egress binary the agent started with this home's config.
egress_pid() { pgrep -f -- "egress --config $egress_yaml" | head -n1; }
# egress_listens_on_loopback_only: its template server, and no status port on any other address.
egress_listens_on_loopback_only() {
  local addrs
  addrs="$(ss -Hltnp | grep -F "pid=$(egress_pid)," | awk '{print $4}')"
  [[ -n "$addrs" ]] && ! grep -qvE '^(127\.0\.0\.1|\[::1\]):' <<<"$addrs"
}
node_id() { admin "$base/v1/nodes" | sed -n 's/.*"nodeId":"\([^"]*\)".*/\1/p'; }
workers_json() { admin "$base/v1/nodes/$(node_id)/workers"; }
workers_native() { [[ "$(workers_json)" == *'"runtime":"native"'* ]]; }
egress_exit_reported() { [[ "$(workers_json)" == *'"exits":{"egress":{"reason":"exit'* ]]; }
egress_reported_ready() { [[ "$(workers_json)" == *'"kind":"egress"'*'"state":"ready"'* ]]; }
# demand_egress: what the API does before it dispatches a recording (libs/nodes NodeWorkers.demand).
demand_egress() {
  local node password
  node="$(node_id)"
  password="$(sed -n 's|^REDIS_URL=redis://:\([^@]*\)@.*|\1|p' "$home/tally.env")"
  redis-cli -h 127.0.0.1 -p "$redis_port" -a "$password" --no-auth-warning SET "tally:{nodes}:demand:$node:egress" 1 EX 120 >/dev/null
  redis-cli -h 127.0.0.1 -p "$redis_port" -a "$password" --no-auth-warning PUBLISH "tally:{nodes}:wake:$node" egress >/dev/null
}
env_value() { sed -n "s/^$1=//p" "$home/tally.env"; }
file_mode() { [[ "$(stat -c %a "$1")" == "$2" ]]; }
listening() { [[ -n "$(ss -Htln "sport = :$1")" ]]; }
udp_listening() { [[ -n "$(ss -Huln "sport = :$1")" ]]; }
yaml_has() { grep -qE "$1" "$home/livekit.yaml"; }
app_listed() { [[ "$(admin "$base/v1/apps")" == *"\"id\":\"$app_id\""* ]]; }
fingerprint_of_config() { cat "$home/tally.env" "$home/admin.key" "$home/livekit.yaml" "$home/redis/redis.conf" "$home"/run/*.pid | sha256sum; }
pid_of() { cat "$home/run/$1.pid"; }
# home_pids: this home's supervisors and all their descendants (postgres backends included).
home_pids() {
  local -a queue=() table
  local f pid line
  for f in "$home"/run/*.pid; do
    [[ "$f" == *.child.pid ]] || queue+=("$(cat "$f")")
  done
  mapfile -t table < <(ps -eo pid=,ppid=)
  while [[ ${#queue[@]} -gt 0 ]]; do
    pid="${queue[0]}"
    queue=("${queue[@]:1}")
    printf '%s\n' "$pid"
    for line in "${table[@]}"; do
      read -r child parent <<<"$line"
      [[ "$parent" == "$pid" ]] && queue+=("$child")
    done
  done
}
# service_runs_pinned_node NAME: the process is DIR/bin/node, the pinned Node.js, told to keep
# Node's compile cache in DIR/cache/NAME.
service_runs_pinned_node() {
  local pid
  pid="$(cat "$home/run/$1.child.pid")"
  [[ "$(readlink "/proc/$pid/exe")" == "$home/bin/node" ]] || { say "$1 runs $(readlink "/proc/$pid/exe")"; return 1; }
  [[ "$("$home/bin/node" --version)" == "v$pinned_node_version" ]] || return 1
  grep -qxF "NODE_COMPILE_CACHE=$home/cache/$1" <<<"$(tr '\0' '\n' <"/proc/$pid/environ")"
}
compile_cache_written() { [[ -n "$(find "$home/cache/$1" -type f -print -quit)" ]]; }
# alive PID: running (zombies, which PID 1 here may reap late, do not count)
# service_runs_build NAME: the supervised process's command line is `node dist/NAME.js`, and no
# TypeScript compiler (SWC's native binding, esbuild) is mapped into it.
service_runs_build() {
  local pid argv
  pid="$(cat "$home/run/$1.child.pid")"
  argv="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
  [[ "$argv" =~ ^/[^\ ]*/node\ (--[^\ ]+\ )*dist/$1\.js\ $ ]] || { say "$1 command line: $argv"; return 1; }
  ! grep -qE 'swc|esbuild|typescript' "/proc/$pid/maps"
}
alive() { local state; state="$(ps -o stat= -p "$1" 2>/dev/null)" && [[ "$state" != Z* ]]; }
# shellcheck disable=SC2009 # ps, not pgrep: the process states are needed
no_process_mentions_home() { [[ "$(ps -eo stat=,args= | grep -v '^Z' | grep -F -- "$home" | grep -v grep || true)" == "" ]]; }

# ------------------------------------------------------------------ least privilege
user_of_pid() { ps -o user:32= -p "$1" | tr -d ' '; }
user_of() { user_of_pid "$(cat "$home/run/$1.child.pid")"; }
reads() { setpriv --reuid="$1" --regid="$1" --init-groups -- head -c1 "$2" >/dev/null 2>&1; }
cannot_read() { ! reads "$@"; }
lacks() { ! grep -qE "$1" "$2"; }
psql_bin="$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/psql' | sort -V | tail -n1)"
db_password() { sed -n 's|^DATABASE_URL=postgresql://tally:\([^@]*\)@.*|\1|p' "$home/tally.env"; }
# psql_as USER PASSWORD ARGS...: psql as a system user, with PASSWORD ("" = none), never prompting.
psql_as() {
  local user="$1" password="$2"
  shift 2
  (cd / && setpriv --reuid="$user" --regid="$user" --init-groups -- env PGPASSWORD="$password" PGCONNECT_TIMEOUT=5 \
    "$psql_bin" -X -w -qtA "$@" 2>&1)
}
least_privilege_checks() {
  local pair service user
  for pair in postgres:tally-postgres redis:tally-redis livekit:tally-livekit agent:tally-media api:tally worker:tally; do
    service="${pair%%:*}" user="${pair#*:}"
    check "ps: $service runs as $user" test "$(user_of "$service")" == "$user"
  done
  check "the tally user is in the group tally-media (recordings, live HLS)" grep -qE '^tally-media:[^:]*:[0-9]+:(.*,)?tally(,|$)' /etc/group
  check "recordings directory is tally-media:tally-media 2770" test "$(stat -c '%U:%G %a' "$home/recordings")" == "tally-media:tally-media 2770"
  for user in tally-media tally-livekit tally-redis tally-postgres; do
    check "tally.env is not readable by $user" cannot_read $user "$home/tally.env"
    check "admin.key is not readable by $user" cannot_read $user "$home/admin.key"
  done
  check "tally.env is readable by tally" reads tally "$home/tally.env"
  check "agent.env is readable by tally-media" reads tally-media "$home/agent.env"
  check "agent.env holds no database URL and no sealing key" lacks '^(DATABASE_URL|TALLY_SECRETS_KEY)=' "$home/agent.env"
  check "livekit.yaml is readable by tally-livekit" reads tally-livekit "$home/livekit.yaml"
  check "livekit.yaml is not readable by tally-media" cannot_read tally-media "$home/livekit.yaml"
  check "redis.conf is not readable by tally-media" cannot_read tally-media "$home/redis/redis.conf"
  check "the cluster's files are tally-postgres's only" test "$(stat -c '%U %a' "$home/postgres")" == "tally-postgres 700"
  check "pg_hba.conf trusts nobody" lacks '^[^#]*[[:space:]]trust([[:space:]]|$)' "$home/postgres/data/pg_hba.conf"
  local tcp=(-h 127.0.0.1 -p "$pg_port" -U tally -d tally -c 'SELECT 1')
  check "psql as tally without the password is refused" bash -c "[[ \"\$1\" == *'password'* ]]" _ "$(psql_as tally "" "${tcp[@]}")"
  check "psql as tally with a wrong password is refused" bash -c "[[ \"\$1\" == *'password authentication failed'* ]]" _ "$(psql_as tally wrong "${tcp[@]}")"
  check "psql as tally with the password from tally.env works" test "$(psql_as tally "$(db_password)" "${tcp[@]}")" == 1
  check "the superuser is not reachable over TCP" bash -c "[[ \"\$1\" == *'no pg_hba.conf entry'* ]]" _ \
    "$(psql_as tally "$(db_password)" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c 'SELECT 1')"
  check "the socket is out of the tally user's reach" bash -c "[[ \"\$1\" != 1 ]]" _ \
    "$(psql_as tally "" -h "$home/postgres" -p "$pg_port" -U postgres -d postgres -c 'SELECT 1')"
}

say "home $home; ports api $api_port pg $pg_port redis $redis_port livekit $lk_port rtc tcp $rtc_tcp_port udp $rtc_udp_port egress template $egress_template_port"

# 1. --dry-run on a new home changes nothing.
start=$SECONDS
./install.sh --dry-run "${install_args[@]}" --home "$home/dry" >/dev/null || fail "--dry-run exited non-zero"
check "--dry-run created nothing ($((SECONDS - start))s)" test ! -e "$home/dry"

# 2. Fresh install.
timed_install first "${install_args[@]}"
check "GET /healthz answers 200" healthz_is_200
check "GET /dashboard/ serves the built dashboard" dashboard_is_200
for service in api worker agent; do
  check "$service runs its build (node [flags] dist/$service.js), no TypeScript compiler" service_runs_build "$service"
  check "$service runs the pinned Node.js $pinned_node_version ($home/bin/node, compile cache kept), the host's node being $(PATH="$host_path" node --version 2>/dev/null || echo none)" \
    service_runs_pinned_node "$service"
  check "$service wrote its compile cache once booted" eventually 60 compile_cache_written "$service"
done
check "tally.env is root:tally, mode 640" test "$(stat -c '%U:%G %a' "$home/tally.env")" == "root:tally 640"
check "admin.key is root:tally, mode 640" test "$(stat -c '%U:%G %a' "$home/admin.key")" == "root:tally 640"
for key in TALLY_HOME TALLY_PORT TALLY_HOST DATABASE_URL REDIS_URL LIVEKIT_URL LIVEKIT_PUBLIC_URL LIVEKIT_API_KEY LIVEKIT_API_SECRET TALLY_SECRETS_KEY; do
  [[ -n "$(env_value "$key")" ]] || fail "tally.env lacks $key"
done
say "ok: tally.env has every required variable"
check "DATABASE_URL uses the chosen port" grep -q "@127.0.0.1:$pg_port/tally\$" "$home/tally.env"
check "LIVEKIT_API_SECRET has >= 32 characters" test "$(env_value LIVEKIT_API_SECRET | tr -d '\n' | wc -c)" -ge 32
check "TALLY_SECRETS_KEY is 64 hex characters" grep -qE '^TALLY_SECRETS_KEY=[0-9a-f]{64}$' "$home/tally.env"
check "livekit.yaml: one UDP mux port" yaml_has "^  udp_port: $rtc_udp_port\$"
check "livekit.yaml: rtc.tcp_port" yaml_has "^  tcp_port: $rtc_tcp_port\$"
check "livekit.yaml: TURN over UDP" yaml_has "^  udp_port: $turn_udp_port\$"
check "livekit.yaml: offline (use_external_ip false)" yaml_has '^  use_external_ip: false$'
check "livekit.yaml: local STUN only" yaml_has '^    - 127\.0\.0\.1:3478$'
check "livekit.yaml: webhook to the api" yaml_has "^    - http://127\.0\.0\.1:$api_port/webhooks/livekit\$"
check "livekit.yaml: redis address" yaml_has "^  address: 127\.0\.0\.1:$redis_port\$"
check "livekit.yaml: ingress URLs on the node's RTMP port" yaml_has "^  rtmp_base_url: rtmp://.*:${ingress_ports[1]}/x\$"
writes() { setpriv --reuid="$1" --regid="$1" --init-groups -- test -w "$2" -a -x "$2"; }
for user in tally-media tally; do
  check "recordings directory writable by $user" writes "$user" "$home/recordings"
  check "live HLS directory writable by $user" writes "$user" "$home/hls"
done
least_privilege_checks
check "ingress binary installed next to egress" test -x "$home/bin/ingress"
check "tally.env: TALLY_INGRESS_BIN" test "$(env_value TALLY_INGRESS_BIN)" == "$home/bin/ingress"
check "redis.conf: appendonly" grep -q '^appendonly yes$' "$home/redis/redis.conf"
check "postgres cluster under DIR/postgres" test -f "$home/postgres/data/PG_VERSION"
for port in "${tcp_ports[@]}"; do listening "$port" || fail "nothing listens on tcp $port"; done
check "livekit listens on its UDP mux port" udp_listening "$rtc_udp_port"
check "livekit's TURN server listens on its UDP port" udp_listening "$turn_udp_port"
check "no egress runs before something needs one" test -z "$(egress_pid)"
check "the agent reports its native worker runtime" eventually 15 workers_native
demand_egress
check "the agent starts egress on demand" eventually 60 egress_reported_ready
check "egress listens on loopback only" egress_listens_on_loopback_only
check "egress.yaml has mode 600" file_mode "$egress_yaml" 600
check "egress runs as tally-media" test "$(user_of_pid "$(egress_pid)")" == tally-media
check "egress.yaml: livekit-server through its Redis" egress_yaml_has "\"address\": \"127\\.0\\.0\\.1:$redis_port\""
check "egress.yaml: admission from the capacity model" egress_yaml_has '"track_composite_cpu_cost": [0-9.e-]+,'
check "egress.yaml: no status port" bash -c '! grep -q health_port "$1"' _ "$egress_yaml"

# The origin's agent, egress, ingress and livekit-server run on the media user, not the full one.
media_url="$(env_value TALLY_MEDIA_REDIS_URL)"
media_password="${media_url#redis://tally-origin-media:}" media_password="${media_password%@*}"
full_password="$(sed -n 's|^REDIS_URL=redis://:\([^@]*\)@.*|\1|p' "$home/tally.env")"
check "tally.env: TALLY_MEDIA_REDIS_URL on the tally-origin-media user" \
  bash -c '[[ "$1" =~ ^redis://tally-origin-media:[A-Za-z0-9]+@127\.0\.0\.1:$2$ ]]' _ "$media_url" "$redis_port"
check "agent.env: REDIS_URL is the media user's" grep -qxF "REDIS_URL=$media_url" "$home/agent.env"
check "livekit.yaml: redis user tally-origin-media" yaml_has '^  username: tally-origin-media$'
for file in agent.env livekit.yaml "$(realpath --relative-to="$home" "$egress_yaml")"; do
  check "$file does not hold the full Redis password" bash -c '! grep -qF "$1" "$2"' _ "$full_password" "$home/$file"
done
check "egress.yaml: the media user" egress_yaml_has '"username": "tally-origin-media"'

# 3. The admin key works.
response="$(admin -w '\n%{http_code}' -X POST "$base/v1/apps" -H 'Content-Type: application/json' -d '{"name":"x"}')"
[[ "${response##*$'\n'}" == 201 ]] || fail "POST /v1/apps answered: $response"
app_id="$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"${response%$'\n'*}")"
[[ -n "$app_id" ]] || fail "no app id in: $response"
say "ok: POST /v1/apps -> 201 ($app_id)"
# The agent reports this node, so a stream is admitted against its budget.
response="$(admin -w '\n%{http_code}' -X POST "$base/v1/apps/$app_id/streams" -H 'Content-Type: application/json' -d '{"name":"s"}')"
[[ "${response##*$'\n'}" == 201 ]] || fail "POST /v1/apps/$app_id/streams answered: $response"
say "ok: a stream is admitted on the agent's node"

# 4. --dry-run on the installed home changes nothing.
before="$(fingerprint_of_config)"
./install.sh --dry-run "${install_args[@]}" >/dev/null || fail "--dry-run on the installed home exited non-zero"
check "--dry-run left config and processes alone" test "$(fingerprint_of_config)" == "$before"

# 5. Re-run: same secrets, same data; unchanged services keep running, api is restarted.
admin_key="$(cat "$home/admin.key")"
lk_secret="$(env_value LIVEKIT_API_SECRET)"
secrets_key="$(env_value TALLY_SECRETS_KEY)"
db_url="$(env_value DATABASE_URL)"
pg_pid="$(pid_of postgres)" api_pid="$(pid_of api)"
timed_install rerun "${install_args[@]}"
check "healthz 200 after the re-run" healthz_is_200
check "admin key unchanged" test "$(cat "$home/admin.key")" == "$admin_key"
check "LiveKit secret unchanged" test "$(env_value LIVEKIT_API_SECRET)" == "$lk_secret"
check "TALLY_SECRETS_KEY unchanged" test "$(env_value TALLY_SECRETS_KEY)" == "$secrets_key"
check "DATABASE_URL unchanged" test "$(env_value DATABASE_URL)" == "$db_url"
check "TALLY_MEDIA_REDIS_URL unchanged" test "$(env_value TALLY_MEDIA_REDIS_URL)" == "$media_url"
check "the app is still there" app_listed
check "postgres kept running (unchanged config)" test "$(pid_of postgres)" == "$pg_pid"
check "api was restarted" test "$(pid_of api)" != "$api_pid"

# 6. The supervisor restarts a crashed api.
kill -KILL "$(cat "$home/run/api.child.pid")"
sleep 1
check "api restarted by its supervisor after kill -9" eventually 45 healthz_is_200
# egress v1.8.6 shuts itself down after a recording's internal error; SIGTERM makes it exit the same
# way. While work still asks for it, the agent starts another.
demand_egress
check "egress running again after the re-run" eventually 60 egress_reported_ready
egress_before="$(egress_pid)"
kill -TERM "$egress_before"
egress_replaced() { local pid; pid="$(egress_pid)" && [[ -n "$pid" && "$pid" != "$egress_before" ]] && egress_reported_ready; }
check "egress restarted by the agent after it exited by itself" eventually 45 egress_replaced
check "the agent reports the exit" eventually 15 egress_exit_reported

# The media user ran livekit-server, the agent and egress through all of the above without a
# refused command, key or channel; it can do nothing administrative.
media_cli() { REDISCLI_AUTH="$media_password" redis-cli -h 127.0.0.1 -p "$redis_port" --user tally-origin-media "$@" 2>&1; }
refused_for_media() { REDISCLI_AUTH="$full_password" redis-cli -h 127.0.0.1 -p "$redis_port" ACL LOG 128 | grep -cxF tally-origin-media || true; }
check "ACL LOG: nothing refused to tally-origin-media" test "$(refused_for_media)" == 0
check "the media user reaches Redis" test "$(media_cli PING)" == PONG
set -f # the commands' words are not globs
for command in FLUSHALL "CONFIG GET requirepass" "CONFIG SET appendonly no" "ACL LIST" "KEYS *" "GET tally:{cap}:policy:x" \
  "SREM tally:{nodes}:index x" "DEL tally:{nodes}:index" "HGETALL tally:{lk}:keys" "HSET tally:{lk}:keys x y"; do
  # shellcheck disable=SC2086 # the command's words
  check "the media user is refused $command (NOPERM)" bash -c '[[ "$1" == NOPERM* ]]' _ "$(media_cli $command)"
done
set +f
# livekit-server looks joined worker nodes' LiveKit keys up one at a time (docs/adr/0025).
check "the media user may HGET a key of tally:{lk}:keys" test -z "$(media_cli HGET 'tally:{lk}:keys' tally-node-none)"
check "the media user cannot add to the maintenance queue" bash -c '[[ "$1" == NOPERM* ]]' _ "$(media_cli LPUSH bull:tally-maintenance:wait x)"

# 7. --stop stops exactly this home's processes and frees the ports.
mapfile -t pids < <(home_pids)
((${#pids[@]} >= 18)) || fail "expected >= 18 processes (6 supervisors, services, egress and PulseAudio under the agent, postgres helpers), found ${#pids[@]}: ${pids[*]}"
start=$SECONDS
./install.sh --stop --home "$home" >/dev/null || fail "--stop exited non-zero"
say "install.sh --stop took $((SECONDS - start))s"
for pid in "${pids[@]}"; do
  ! alive "$pid" || fail "process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)) survived --stop"
done
say "ok: all ${#pids[@]} processes are gone"
check "no process mentions $home" no_process_mentions_home
for port in "${tcp_ports[@]}"; do ! listening "$port" || fail "tcp $port still in use after --stop"; done
! udp_listening "$rtc_udp_port" || fail "udp $rtc_udp_port still in use after --stop"
say "ok: every port is free"
check "healthz no longer answers" test "$(http_code "$base/healthz")" == 000

# 7b. The feature checks at the end fail loudly, with the fix, when the installer cannot fix a need
# itself: an operator's recordings directory the service user cannot write.
private_dir="$home.private-recordings" # outside the home: the operator's, so only checked
mkdir -m 700 "$private_dir"
printf 'TALLY_RECORDINGS_DIR=%s\n' "$private_dir" >>"$home/tally.env"
if ./install.sh "${install_args[@]}" >"$home.out.private" 2>&1; then
  fail "install.sh succeeded with a recordings directory the service user cannot write"
fi
check "the feature check names the unwritable recordings directory and its fix" \
  grep -q "FAILED: recordings directory: $private_dir is not writable by tally-media" "$home.out.private"
check "... with the fix" grep -q "fix: chown tally-media:tally-media $private_dir && chmod 2770 $private_dir" "$home.out.private"
rm -f "$home.out.private"
sed -i "s|^TALLY_RECORDINGS_DIR=.*|TALLY_RECORDINGS_DIR=$home/recordings|" "$home/tally.env"
rmdir "$private_dir"

# 8. Install after --stop: same data and keys; the dashboard's sources changed meanwhile (an
# upgrade), so it serves their new build.
dashboard_source_kept="$home.dashboard-index.html"
cp -p "$dashboard_source" "$dashboard_source_kept"
upgrade_marker="tally-install-int-$RANDOM$RANDOM"
sed -i "s|</head>|<meta name=\"$upgrade_marker\" content=\"\" /></head>|" "$dashboard_source"
grep -qF "$upgrade_marker" "$dashboard_source" || fail "could not change $dashboard_source"
timed_install after-stop "${install_args[@]}"
check "GET /dashboard/ serves the build of the changed sources" dashboard_serves "$upgrade_marker"
restore_dashboard_source
dashboard_source_kept=""
check "healthz 200 after restart" healthz_is_200
check "the agent reports its workers after restart" eventually 15 workers_native
check "admin key unchanged after stop/start" test "$(cat "$home/admin.key")" == "$admin_key"
check "the app survived stop/start" app_listed

# 8b. A home from the previous layout (every service as tally, PostgreSQL trusting local
# connections, tally.env root-only, no agent.env) is migrated by a re-run: each tree goes to its
# service's user, the cluster gets password authentication (the tally role's password set again
# where it had none), and data and recordings stay; while a media worker of that layout still
# records, the agent stays on the old user (a later run finishes the switch).
tally_role_password_null() { psql_as tally-postgres "" -h "$home/postgres" -p "$pg_port" -U postgres -d postgres -c 'ALTER ROLE tally PASSWORD NULL'; }
tally_role_password_null >/dev/null
./install.sh --stop --home "$home" >/dev/null || fail "--stop before the layout migration exited non-zero"
chown -R tally:tally "$home/postgres" "$home/redis" "$home/workers" "$home/recordings" "$home/hls"
chmod 750 "$home/recordings" "$home/hls"
chmod 700 "$home/postgres" "$home/redis" "$home/workers"
chown root:root "$home/tally.env" && chmod 600 "$home/tally.env"
chown tally:tally "$home/admin.key" "$home/livekit.yaml" "$home/redis/redis.conf" && chmod 600 "$home/admin.key" "$home/livekit.yaml"
rm -f "$home/agent.env"
printf 'local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n' >"$home/postgres/data/pg_hba.conf"
rm -f "$home/postgres/data/pg_ident.conf"
chown tally:tally "$home/postgres/data/pg_hba.conf"
mkdir -p "$home/recordings/$app_id" && echo finished >"$home/recordings/$app_id/old.mp4"
chown -R tally:tally "$home/recordings/$app_id" && chmod 750 "$home/recordings/$app_id" && chmod 640 "$home/recordings/$app_id/old.mp4"
db_url="$(env_value DATABASE_URL)"
# A media worker that agent started is still recording (a process as tally, its pid file in the
# workers directory): the agent and the shared directories stay on tally until it ends.
setsid setpriv --reuid=tally --regid=tally --init-groups -- sleep 600 </dev/null >/dev/null 2>&1 &
previous_worker=$!
echo "$previous_worker" >"$home/workers/previous-layout-egress.pid"
chown tally:tally "$home/workers/previous-layout-egress.pid"
./install.sh "${install_args[@]}" >"$home.out.deferred" 2>&1 || { cat "$home.out.deferred" >&2; fail "install.sh (deferred) exited non-zero"; }
check "it said the agent stays tally while that worker runs" grep -q "media workers started as tally .* are running (pid $previous_worker): the agent stays tally" "$home.out.deferred"
rm -f "$home.out.deferred"
check "healthz 200 with the switch deferred" healthz_is_200
check "ps: the agent still runs as tally" test "$(user_of agent)" == tally
check "... the worker still writes its recordings directory as before" test "$(stat -c '%U:%G' "$home/recordings")" == tally:tally
check "... and it still runs" alive "$previous_worker"
check "ps: postgres already runs as tally-postgres" test "$(user_of postgres)" == tally-postgres
check "the role's password works again" test "$(psql_as tally "$(db_password)" -h 127.0.0.1 -p "$pg_port" -U tally -d tally -c 'SELECT 1')" == 1
kill "$previous_worker"
rm -f "$home/workers/previous-layout-egress.pid"
# The agent that stayed tally started an egress worker of its own as tally, idle: as the installer
# says, stopping the node with nothing recording lets the next run finish the switch at once.
./install.sh --stop --home "$home" >/dev/null || fail "--stop before finishing the layout switch exited non-zero"
timed_install migrate "${install_args[@]}"
check "healthz 200 after the layout migration" healthz_is_200
check "the app survived the migration" app_listed
check "DATABASE_URL kept (same password)" test "$(env_value DATABASE_URL)" == "$db_url"
check "the admin key still works" test "$(admin -o /dev/null -w '%{http_code}' "$base/v1/apps")" == 200
least_privilege_checks
check "a recording from before the migration: readable by tally" reads tally "$home/recordings/$app_id/old.mp4"
check "... its directory writable by tally" writes tally "$home/recordings/$app_id"
check "... and by tally-media" writes tally-media "$home/recordings/$app_id"
check "... new files there stay the group's (setgid)" test "$(stat -c %G "$home/recordings/$app_id")" == tally-media

# 9. --cluster-bind: Redis also listens on a private address the nodes reach, and joins work.
redis_password="$(sed -n 's|^REDIS_URL=redis://:\([^@]*\)@.*|\1|p' "$home/tally.env")"
join_token_body='{"name":"bind-check","role":"media"}'
join_token_code() { admin -o /dev/null -w '%{http_code}' -X POST "$base/v1/nodes/join-tokens" -H 'Content-Type: application/json' -d "$join_token_body"; }
check "POST /v1/nodes/join-tokens answers 409 without --cluster-bind" test "$(join_token_code)" == 409
create_node_net
say "node network: this host $bind_ip ($origin_if), node $node_ip (namespace $node_ns)"
node_ping() { on_node redis-cli -h "$bind_ip" -p "$redis_port" "$@" PING 2>&1 || true; }
node_ping_ok() { [[ "$(node_ping -a "$redis_password" --no-auth-warning)" == PONG ]]; }
node_ping_noauth() { [[ "$(node_ping)" == *NOAUTH* ]]; }
check "before --cluster-bind the node does not reach Redis" test "$(node_ping -a "$redis_password" --no-auth-warning)" != PONG

fingerprint="$(sha256sum "$home/tally.env")"
if ./install.sh "${install_args[@]}" --cluster-bind "${bind_ip%.1}.3" >"$home.out.bad-bind" 2>&1; then
  fail "--cluster-bind with an address this host lacks succeeded"
fi
check "--cluster-bind refuses an address this host lacks" grep -q "is not an address of this host" "$home.out.bad-bind"
rm -f "$home.out.bad-bind"
check "... and leaves tally.env as it was" test "$(sha256sum "$home/tally.env")" == "$fingerprint"

timed_install cluster-bind "${install_args[@]}" --cluster-bind "$bind_ip"
check "healthz 200 after --cluster-bind" healthz_is_200
check "tally.env records TALLY_CLUSTER_BIND" test "$(env_value TALLY_CLUSTER_BIND)" == "$bind_ip"
check "tally.env: TALLY_CLUSTER_REDIS_URL on the bind address, same password" \
  test "$(env_value TALLY_CLUSTER_REDIS_URL)" == "redis://:$redis_password@$bind_ip:$redis_port"
check "tally.env still has mode 640" file_mode "$home/tally.env" 640
check "the node reaches Redis on $bind_ip with the password" node_ping_ok
check "... and is refused without it (NOAUTH)" node_ping_noauth
redis_on() { [[ "$(redis-cli -h "$1" -p "$redis_port" -a "$redis_password" --no-auth-warning PING 2>&1)" == PONG ]]; }
check "Redis still answers on 127.0.0.1" redis_on 127.0.0.1
check "Redis listens on exactly 127.0.0.1 and $bind_ip" \
  test "$(ss -Htln "sport = :$redis_port" | awk '{print $4}' | sort | tr '\n' ' ')" == "$bind_ip:$redis_port 127.0.0.1:$redis_port "
check "the agent reports its workers after --cluster-bind" eventually 30 workers_native

response="$(admin -w '\n%{http_code}' -X POST "$base/v1/nodes/join-tokens" -H 'Content-Type: application/json' -d "$join_token_body")"
[[ "${response##*$'\n'}" == 201 && "$response" == *'"command":"./install.sh --join '* ]] || fail "POST /v1/nodes/join-tokens answered: $response"
join_token="$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' <<<"${response%$'\n'*}")"
say "ok: POST /v1/nodes/join-tokens -> 201 with a --join command"
# The exchange install.sh --join makes, from the node, through the API on the bind address.
join_body="{\"token\":\"$join_token\",\"name\":\"bind-check\",\"role\":\"media\"}"
response="$(on_node curl -s -m 10 -w '\n%{http_code}' -X POST "http://$bind_ip:$api_port/v1/nodes/join" -H 'Content-Type: application/json' -d "$join_body")"
[[ "${response##*$'\n'}" == 200 ]] || fail "POST /v1/nodes/join answered: $response"
handed_url="$(sed -n 's/.*"redisUrl":"\([^"]*\)".*/\1/p' <<<"${response%$'\n'*}")"
check "the join hands out the Redis URL on $bind_ip, with the node's own user" \
  bash -c '[[ "$1" =~ ^redis://tally-node-bind-check:[A-Za-z0-9_-]{43}@$2$ && "$1" != *"$3"* ]]' _ "$handed_url" "$bind_ip:$redis_port" "$redis_password"
# The node uses that URL twice: its services (ioredis) and install.sh --join, which waits for the
# node's heartbeat in that Redis (redis_cli_url).
ioredis_ping() {
  on_node node -e 'const { Redis } = require("ioredis");
    const r = new Redis(process.argv[1], { maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on("error", () => {});
    r.ping().then((p) => { console.log(p); r.disconnect(); }, (e) => { console.log(e.message); process.exit(1); });' "$1" 2>&1 || true
}
# shellcheck disable=SC2016 # expanded by the inner shell
installer_ping() { on_node bash -c 'source scripts/install/lib.sh && redis_cli_url "$1" PING' _ "$1" 2>&1 || true; }
check "the node's services (ioredis) reach Redis through the handed-out URL" test "$(ioredis_ping "$handed_url")" == PONG
check "the node's install.sh --join reaches Redis through it" test "$(installer_ping "$handed_url")" == PONG
check "the token is spent" test "$(on_node curl -s -o /dev/null -m 10 -w '%{http_code}' -X POST "http://$bind_ip:$api_port/v1/nodes/join" -H 'Content-Type: application/json' -d "$join_body")" == 401

timed_install cluster-bind-kept "${install_args[@]}"
check "a re-run without the flag keeps TALLY_CLUSTER_BIND" test "$(env_value TALLY_CLUSTER_BIND)" == "$bind_ip"
check "... and the node still reaches Redis on $bind_ip" node_ping_ok
check "... and Redis on 127.0.0.1" redis_on 127.0.0.1
check "... and join tokens are still issued" test "$(join_token_code)" == 201

# 10. --control-nodes: PostgreSQL also listens on the bind address, for the listed address only.
control_token_code() { admin -o /dev/null -w '%{http_code}' -X POST "$base/v1/nodes/join-tokens" -H 'Content-Type: application/json' -d '{"name":"cp-check","role":"control"}'; }
node_psql() { on_node env PGPASSWORD="$(db_password)" PGCONNECT_TIMEOUT=5 "$psql_bin" -X -w -qtA -h "$bind_ip" -p "$pg_port" -U tally -d tally -c 'SELECT 1' 2>&1 || true; }
check "no control token without --control-nodes (409)" test "$(control_token_code)" == 409
check "... and the node does not reach PostgreSQL" test "$(node_psql)" != 1
timed_install control-nodes "${install_args[@]}" --control-nodes "$node_ip"
check "healthz 200 after --control-nodes" healthz_is_200
check "tally.env: TALLY_CLUSTER_DATABASE_URL on the bind address" \
  test "$(env_value TALLY_CLUSTER_DATABASE_URL)" == "postgresql://tally:$(db_password)@$bind_ip:$pg_port/tally"
check "tally.env records TALLY_CONTROL_NODES" test "$(env_value TALLY_CONTROL_NODES)" == "$node_ip:8080"
check "PostgreSQL listens on exactly 127.0.0.1 and $bind_ip" \
  test "$(ss -Htln "sport = :$pg_port" | awk '{print $4}' | sort | tr '\n' ' ')" == "$bind_ip:$pg_port 127.0.0.1:$pg_port "
check "the control node reaches PostgreSQL on $bind_ip as tally, by password" test "$(node_psql)" == 1
check "a control token is issued" test "$(control_token_code)" == 201
timed_install control-nodes-none "${install_args[@]}" --control-nodes none
check "--control-nodes none: PostgreSQL is loopback-only again" test "$(node_psql)" != 1
check "... and no control token is issued" test "$(control_token_code)" == 409

# 11. An external PostgreSQL (--database-url-file), the app's data moved there with pg_dump as
# docs/cluster.md says; a re-run remembers it; one that does not answer is refused before
# anything is written.
free_port ext_pg_port
ext_dir="$home.external-pg"
pg_bin_dir="${psql_bin%/psql}"
as_pg() { (cd / && setpriv --reuid=tally-postgres --regid=tally-postgres --init-groups -- "$@"); }
stop_external_pg() { [[ ! -d "$ext_dir/data" ]] || as_pg "$pg_bin_dir/pg_ctl" -D "$ext_dir/data" -m fast -w stop >/dev/null 2>&1 || true; }
mkdir -p "$ext_dir" && chown tally-postgres:tally-postgres "$ext_dir" && chmod 700 "$ext_dir"
as_pg "$pg_bin_dir/initdb" -D "$ext_dir/data" -U postgres -E UTF8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null ||
  fail "initdb of the external PostgreSQL failed"
as_pg "$pg_bin_dir/pg_ctl" -D "$ext_dir/data" -o "-p $ext_pg_port -k $ext_dir -c listen_addresses=127.0.0.1" \
  -l "$ext_dir/postgres.log" -w start >/dev/null || fail "the external PostgreSQL did not start"
ext_password="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
as_pg "$psql_bin" -X -q -h "$ext_dir" -p "$ext_pg_port" -U postgres -d postgres \
  -c "CREATE ROLE tally_ext LOGIN PASSWORD '$ext_password'" -c 'CREATE DATABASE tally_ext OWNER tally_ext' >/dev/null ||
  fail "creating the external role and database failed"
ext_url="postgresql://tally_ext:$ext_password@127.0.0.1:$ext_pg_port/tally_ext"
./install.sh --stop --home "$home" >/dev/null || fail "--stop before moving the data exited non-zero"
# The home's cluster alone, for the dump (install.sh --stop stopped it with the rest).
as_pg "$pg_bin_dir/pg_ctl" -D "$home/postgres/data" -o "-p $pg_port -k $home/postgres" -w start >/dev/null ||
  fail "starting the home's cluster for pg_dump failed"
as_pg "$pg_bin_dir/pg_dump" -h "$home/postgres" -p "$pg_port" -U postgres --no-owner --no-privileges tally >"$ext_dir/tally.sql" ||
  fail "pg_dump of the home's database failed"
as_pg "$pg_bin_dir/pg_ctl" -D "$home/postgres/data" -m fast -w stop >/dev/null
(cd / && PGPASSWORD="$ext_password" "$psql_bin" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$ext_pg_port" -U tally_ext -d tally_ext \
  -f "$ext_dir/tally.sql" >/dev/null) || fail "restoring the dump into the external PostgreSQL failed"
printf '%s\n' "$ext_url" >"$home.database-url" && chmod 600 "$home.database-url"
PATH="$host_path" ./install.sh "${install_args[@]}" --database-url-file "$home.database-url" >"$home.out.external-db" 2>&1 ||
  { cat "$home.out.external-db" >&2; fail "install.sh (external-db) exited non-zero"; }
rm -f "$home.database-url"
check "healthz 200 on the external PostgreSQL" healthz_is_200
check "tally.env: DATABASE_URL is the external one" test "$(env_value DATABASE_URL)" == "$ext_url"
check "tally.env: TALLY_DATABASE=external" test "$(env_value TALLY_DATABASE)" == external
check "the summary names the external PostgreSQL without its password" \
  grep -qF "Database:   external PostgreSQL, postgresql://tally_ext:***@127.0.0.1:$ext_pg_port/tally_ext" "$home.out.external-db"
check "... and the install's output never shows the password" lacks "$ext_password" "$home.out.external-db"
rm -f "$home.out.external-db"
check "the app moved with the dump" app_listed
# ([a]: the pattern does not match its own command line)
home_cluster_stopped() { ! pgrep -f -- "-D $home/postgres/dat[a]" >/dev/null; }
check "the home's own cluster is not running" home_cluster_stopped
ext_app="$(admin -X POST "$base/v1/apps" -H 'Content-Type: application/json' -d '{"name":"external-db"}')"
ext_app_id="$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"$ext_app")"
ext_psql() { (cd / && PGPASSWORD="$ext_password" "$psql_bin" -X -w -qtA -h 127.0.0.1 -p "$ext_pg_port" -U tally_ext -d tally_ext -c "$1" 2>&1); }
check "a new app is written to the external PostgreSQL" test "$(ext_psql "SELECT count(*) FROM \"App\" WHERE id = '$ext_app_id'")" == 1
timed_install external-db-kept "${install_args[@]}"
check "a re-run without the flag keeps the external PostgreSQL" test "$(env_value DATABASE_URL)" == "$ext_url"
check "... healthz 200" healthz_is_200
check "... and still no cluster of its own" home_cluster_stopped
fingerprint="$(sha256sum "$home/tally.env")"
printf 'postgresql://tally_ext:%s@127.0.0.1:1/tally_ext\n' "$ext_password" >"$home.database-url"
if ./install.sh "${install_args[@]}" --database-url-file "$home.database-url" >"$home.out.bad-db" 2>&1; then
  fail "install.sh succeeded with a PostgreSQL that does not answer"
fi
rm -f "$home.database-url"
check "a PostgreSQL that does not answer is refused, named without its password" \
  grep -q "the external PostgreSQL postgresql://tally_ext:\*\*\*@127.0.0.1:1/tally_ext does not answer" "$home.out.bad-db"
check "... and tally.env is left as it was" test "$(sha256sum "$home/tally.env")" == "$fingerprint"
rm -f "$home.out.bad-db"
stop_external_pg

start=$SECONDS
./install.sh --stop --home "$home" >/dev/null || fail "second --stop exited non-zero"
check "second --stop ($((SECONDS - start))s) left nothing running" no_process_mentions_home
for port in "${tcp_ports[@]}"; do ! listening "$port" || fail "tcp $port still in use after the second --stop"; done
