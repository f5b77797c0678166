#!/usr/bin/env bash
# Integration test of high availability on installed hosts (docs/adr/0040-redis-sentinel.md,
# docs/adr/0043-control-plane-replicas.md), with media running. Four hosts, each a network namespace
# of its own on one /24 (a bridge in the origin's), sharing a mount namespace where the origin's
# domain resolves (a private /etc/hosts) and Caddy's local CA is trusted (a private CA bundle, and
# NODE_EXTRA_CA_CERTS for Node):
#   origin  ./install.sh --cluster-bind IP --redis-sentinel --domain D --tls internal
#           --control-nodes IP4 (Redis primary, a Sentinel, API, worker, livekit-server, agent,
#           egress; Caddy balancing the API and dashboard over its API and the control node's)
#   two media nodes ./install.sh --join ... --redis-replica (a replica and a Sentinel each;
#           livekit-server, agent), each in a mount namespace where the origin's recordings
#           directory is an empty directory of its own (as install-hosts.int.sh's joined node)
#   a control node ./install.sh --join ... --role control (a second API and worker). Its own host:
#           the installer refuses --redis-replica with --role control and a host is one install, so
#           neither media node can be it without losing a Sentinel (three, quorum two) or taking a
#           media node (perhaps the room's) down with it. From a checkout of its own without
#           node_modules or builds: it takes the origin's services and dashboard (ADR 0031).
# Then a live stream with a real publisher (@livekit/rtc-node), a passthrough recording active and
# webhooks pending at a receiver that answers 503 (scripts/install-failover/media-workload.ts).
# First the control node's host goes away (its link down, then every process in its namespace
# SIGSTOPped): through Caddy, dashboard and API requests every 0.3 s (at most 20 streams starting or
# ending at once) all end 200/201, each asked as an app does (a 502/503/504 asked again with its
# Idempotency-Key: the control node may answer one it took as its link went down 503, naming the
# dependency it lost), a stream is admitted and one past its app's quota refused with 429 naming
# app.streams, every webhook of that moment is delivered with a
# valid signature (at least once: the frozen worker may send one the other took over, under the same
# webhook-id), the live stream and the recording go on;
# then it comes back (SIGCONT, link up) and its API is healthy again. Printed: what Caddy's health
# checks said of the origin's API meanwhile. Then the primary Redis is
# killed with SIGKILL (its supervisor too, so nothing restarts it: a power cut of that service).
# Printed: the seconds until the Sentinels name a replica primary, until the API's /healthz answers
# 200 "ok" again, until a stream is admitted again. Checked: the stream stays live with its
# publisher, also 90 s after the kill (past the 30 s departure timeout of a room copy the failover
# may leave on another node), no joined node's process is refused by the promoted replica
# (WRONGPASS: each replica holds the node users), the recording completes with audio and video
# (ffprobe), every webhook is delivered exactly once once the receiver answers 200, and the
# reconcile audit frees nothing.
# Exits non-zero on the first failed check, naming it (logs of the homes are printed).
#
# Usage: bash scripts/install-failover.int.sh      (TALLY_KEEP_HOME=1 keeps the temp homes)
# Part of npm test (scripts/test.sh runs it after install-hosts.int.sh). Takes 6-9 min (four
# installs). Side effects as install-hosts.int.sh: apt packages / LiveKit builds if missing, the
# system users; four network namespaces, removed at exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

INT_NAME=install-failover
# shellcheck source=scripts/int-lib.sh
source scripts/int-lib.sh
[[ "$(id -u)" -eq 0 ]] || fail "must run as root (install.sh does)"

# ------------------------------------------------------------------ three hosts on one /24
if [[ -z "${TALLY_FAILOVER_NET:-}" ]]; then
  # The hosts reach package registries only: build the services and fetch their production
  # dependencies here, before the namespaces take the network away.
  npm run --silent build >/dev/null
  (cd dist && npm install --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error)
  net="" tries=0
  while ((tries++ < 100)); do
    candidate="10.236.$((RANDOM % 250 + 1))"
    [[ -n "$(ip -4 -o addr show | grep -F " inet $candidate." || true)" || -n "$(ip -4 route show "$candidate.0/24")" ]] || {
      net="$candidate"
      break
    }
  done
  [[ -n "$net" ]] || fail "no free 10.236.x.0/24"
  origin_ns="tfo-origin-$$" a_ns="tfo-a-$$" b_ns="tfo-b-$$" c_ns="tfo-c-$$"
  remove_net() { for ns in "$origin_ns" "$a_ns" "$b_ns" "$c_ns"; do ip netns del "$ns" 2>/dev/null || true; done; }
  trap remove_net EXIT
  ip netns add "$origin_ns"
  ip -n "$origin_ns" link set lo up
  ip -n "$origin_ns" link add br0 type bridge
  ip -n "$origin_ns" addr add "$net.1/24" dev br0
  ip -n "$origin_ns" link set br0 up
  n=2
  for ns in "$a_ns" "$b_ns" "$c_ns"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$origin_ns" link add "port$n" type veth peer name eth0 netns "$ns"
    ip -n "$origin_ns" link set "port$n" master br0
    ip -n "$origin_ns" link set "port$n" up
    ip -n "$ns" addr add "$net.$n/24" dev eth0
    ip -n "$ns" link set eth0 up
    n=$((n + 1))
  done
  say "origin $net.1 ($origin_ns), media nodes $net.2 ($a_ns) and $net.3 ($b_ns), control node $net.4 ($c_ns), no default route"
  status=0
  # nsenter, not `ip netns exec`, keeps the host's /sys (cgroups for the agent's workers). A mount
  # namespace of its own too: the origin's domain and CA are known through private files.
  nsenter --net="/run/netns/$origin_ns" unshare --mount --propagation private \
    env TALLY_FAILOVER_NET="$net" TALLY_FAILOVER_NODES="$a_ns $b_ns $c_ns" bash "${BASH_SOURCE[0]}" "$@" || status=$?
  exit "$status"
fi
net="$TALLY_FAILOVER_NET"
read -r a_ns b_ns c_ns <<<"$TALLY_FAILOVER_NODES"
origin_ip="$net.1"
declare -A node_ns=([a]="$a_ns" [b]="$b_ns" [c]="$c_ns") node_ip=([a]="$net.2" [b]="$net.3" [c]="$net.4") node_home=() node_dir=()
domain=failover.tally.test
base="https://$domain" # the origin's public entry: Caddy
hosts_file="$(mktemp /tmp/tally-failover-hosts.XXXXXX)"
{ cat /etc/hosts; echo "$origin_ip $domain"; } >"$hosts_file"
chmod 644 "$hosts_file"
mount --bind "$hosts_file" /etc/hosts

# The services run the checkout as an unprivileged user. A clone under a private directory
# (say /root) is unreadable to it; test from a readable copy instead.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -r "$PWD/apps/api/src/main.ts" 2>/dev/null; then
  copy="$(mktemp -d /tmp/tally-install-src.XXXXXX)"
  chmod 755 "$copy"
  say "$PWD is private; testing from a copy in $copy"
  cp -a "$PWD/." "$copy/"
  cd "$copy"
fi

home="$(mktemp -d /tmp/tally-failover-int.XXXXXX)"
chmod 755 "$home"
out="$home.out"
state="$home.state"
mkdir -p "$state"
pids_to_kill=()
frozen=() # the control node's processes while SIGSTOPped
on_node() { # on_node a|b CMD...: CMD on that node's host (its network namespace)
  local ns="${node_ns[$1]}"
  shift
  nsenter --net="/run/netns/$ns" "$@"
}
cleanup() {
  local rc=$? pid n
  for pid in "${pids_to_kill[@]}"; do kill "$pid" 2>/dev/null || true; done
  if ((${#frozen[@]} > 0)); then
    kill -CONT "${frozen[@]}" 2>/dev/null || true
    ip -n "$c_ns" link set eth0 up 2>/dev/null || true
  fi
  # The origin first: stopping its agent needs a Redis primary, which after the failover is a node's.
  if [[ -f "$home/run/mode" ]]; then
    ./install.sh --stop --home "$home" >/dev/null 2>&1 || say "cleanup: --stop failed"
  fi
  for n in c a b; do
    if [[ -n "${node_home[$n]:-}" && -f "${node_home[$n]}/run/mode" ]]; then
      on_node "$n" ./install.sh --stop --home "${node_home[$n]}" >/dev/null 2>&1 || say "cleanup: --stop of node $n failed"
    fi
  done
  # The joined nodes' logs first, the origin's last: the tail of a CI log is often all a reader gets.
  if [[ $rc -ne 0 ]]; then
    for n in a b c; do
      [[ -d "${node_home[$n]:-}/log" ]] || continue
      for f in "${node_home[$n]}"/log/*.log; do
        printf '[%s] ---- node %s: %s (last 12 lines)\n' "$INT_NAME" "$n" "$f" >&2
        tail -n 12 "$f" >&2 || true
      done
    done
    [[ ! -f "$state/client.log" ]] || { say "---- media workload"; tail -n 20 "$state/client.log" >&2; }
  fi
  print_logs_on_failure "$rc" 25
  if [[ $rc -ne 0 && -f "$home/log/api.log" ]]; then
    say "---- the origin API's failed requests and warnings (last 15)"
    grep -E '"level":(40|50)|request .* failed' "$home/log/api.log" | tail -n 15 | cut -c1-600 >&2 || true
  fi
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then
    say "kept $home ${node_home[*]}"
  else
    rm -rf "$home" "$out" "$state" "${node_home[@]}" "${node_dir[@]}" "${node_repo_c:-}"
  fi
  rm -f "$hosts_file" "$home.ca.crt" "$home.bundle.crt" 
  if [[ -n "${copy:-}" ]]; then rm -rf "$copy"; fi
  say_outcome "$rc"
}
trap cleanup EXIT

http_code() { curl -s -o /dev/null -m 10 -w '%{http_code}' "$@" || true; }
env_value() { sed -n "s/^$1=//p" "$home/tally.env" | tail -n1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
admin() { curl -s -m 10 -H "Authorization: Bearer $(cat "$home/admin.key")" -H 'content-type: application/json' "$@"; }
sentinel_primary_of() { # sentinel_primary_of IP: host:port of the primary as the Sentinel on IP names it
  redis-cli -h "$1" -p 26379 --no-auth-warning SENTINEL get-master-addr-by-name tally 2>/dev/null | paste -sd: || true
}

# 1. The origin. Webhooks may reach the receivers on this host (loopback or its cluster address),
# and retry every few seconds for about 5 min, longer than the backlog waits (lines tally.env keeps as
# found; the installer writes the rest). The control node's worker needs the same schedule (section 2b).
retry_schedule="$(printf '1s,%.0s' {1..10})$(printf '8s,%.0s' {1..39})8s"
cat >"$home/tally.env" <<EOF
TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,$net.0/24
TALLY_WEBHOOK_RETRY_SCHEDULE=$retry_schedule
EOF
start=$SECONDS
if ! ./install.sh --home "$home" --offline --no-systemd --no-sysctl --node-ip "$origin_ip" \
  --cluster-bind "$origin_ip" --redis-sentinel --domain "$domain" --tls internal --control-nodes "${node_ip[c]}" >"$out" 2>&1; then
  fail_after "$(cat "$out")" "install.sh --cluster-bind --redis-sentinel --domain --control-nodes (origin) exited non-zero"
fi
say "install.sh (origin, --redis-sentinel --domain --control-nodes) took $((SECONDS - start))s"
# Caddy's local CA, trusted from here on by everything in this mount namespace: curl and Go through
# the CA bundle, Node through NODE_EXTRA_CA_CERTS (exported to the installs, and in the control
# node's tally.env for its API and worker).
check "Caddy's local CA exists" eventually 60 test -s "$home/caddy/data/pki/authorities/local/root.crt"
ca="$home.ca.crt"
cp "$home/caddy/data/pki/authorities/local/root.crt" "$ca"
cat /etc/ssl/certs/ca-certificates.crt "$ca" >"$home.bundle.crt"
chmod 644 "$ca" "$home.bundle.crt"
mount --bind "$home.bundle.crt" /etc/ssl/certs/ca-certificates.crt
export NODE_EXTRA_CA_CERTS="$ca"
check "GET /healthz answers 200" test "$(http_code http://127.0.0.1:8080/healthz)" == 200
check "GET $base/healthz answers 200 through Caddy" test "$(http_code "$base/healthz")" == 200
check "the origin's Sentinel names the origin's Redis primary" test "$(sentinel_primary_of "$origin_ip")" == "$origin_ip:6379"
check "tally.env kept the webhook lines" grep -q "^TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,$net.0/24\$" "$home/tally.env"

# 2. Two media nodes join with a replica and a Sentinel each.
recordings="$(env_value TALLY_RECORDINGS_DIR)"
recordings="${recordings:-$home/recordings}"
for n in a b; do
  node_home[$n]="$(mktemp -d /tmp/tally-failover-node-$n.XXXXXX)"
  node_dir[$n]="$(mktemp -d /tmp/tally-failover-node-rec-$n.XXXXXX)"
  name="media-$n-$$"
  token="$(admin -d "{\"role\":\"media\",\"name\":\"$name\",\"redisReplica\":true}" http://127.0.0.1:8080/v1/nodes/join-tokens |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).token ?? ""))')"
  [[ -n "$token" ]] || fail "no join token for $name"
  start=$SECONDS
  if ! on_node "$n" unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
    "${node_dir[$n]}" "$recordings" \
    ./install.sh --join "$base" --token "$token" --role media --name "$name" --redis-replica \
    --home "${node_home[$n]}" --no-provision --no-systemd --no-sysctl --offline --node-ip "${node_ip[$n]}" >"$out" 2>&1; then
    fail_after "$(cat "$out")" "install.sh --join --redis-replica (node $n) exited non-zero"
  fi
  say "install.sh --join --redis-replica (node $n, ${node_ip[$n]}) took $((SECONDS - start))s"
  check "node $n: its replica is in sync" grep -q 'in sync' "$out"
done
sentinels_agree() {
  local ip
  for ip in "$origin_ip" "${node_ip[a]}" "${node_ip[b]}"; do
    [[ "$(sentinel_primary_of "$ip")" == "$origin_ip:6379" ]] || return 1
    [[ "$(redis-cli -h "$ip" -p 26379 SENTINEL master tally 2>/dev/null | sed -n '/^num-other-sentinels$/{n;p}')" == 2 ]] || return 1
  done
}
check "three Sentinels name the origin's Redis primary and see each other" eventually 60 sentinels_agree
check "the origin's Sentinel sees two replicas" eventually 60 \
  bash -c "[[ \"\$(redis-cli -h '$origin_ip' -p 26379 SENTINEL master tally | sed -n '/^num-slaves\$/{n;p}')\" == 2 ]]"

# 2b. The control node: a second API and worker, on the origin's PostgreSQL and Redis (Sentinels).
node_home[c]="$(mktemp -d /tmp/tally-failover-node-c.XXXXXX)"
# Settings added to the origin's tally.env by hand belong in the node's too (docs/cluster.md,
# section 7): a worker on the default schedule would give up on the backlog's deliveries.
printf 'NODE_EXTRA_CA_CERTS=%s\nTALLY_WEBHOOK_RETRY_SCHEDULE=%s\n' "$ca" "$retry_schedule" >"${node_home[c]}/tally.env"
name="control-c-$$"
token="$(admin -d "{\"role\":\"control\",\"name\":\"$name\"}" http://127.0.0.1:8080/v1/nodes/join-tokens |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).token ?? ""))')"
[[ -n "$token" ]] || fail "no join token for $name"
# Its own checkout, as on a host of its own: the sources only (no node_modules, no build), so the
# API, the worker and the dashboard it serves can only be the origin's builds. Provisioned as a
# fresh host is (the origin's built files, then the system packages, present here).
node_repo_c="$(mktemp -d /tmp/tally-failover-node-c-src.XXXXXX)"
chmod 755 "$node_repo_c"
git ls-files -z --cached --others --exclude-standard | grep -zv '^apps/dashboard/dist/' | tar --null --ignore-failed-read -T - -cf - | tar -C "$node_repo_c" -xf -
start=$SECONDS
if ! (cd "$node_repo_c" && on_node c ./install.sh --join "$base" --token "$token" --role control --name "$name" \
  --home "${node_home[c]}" --no-systemd --no-sysctl --offline --node-ip "${node_ip[c]}") >"$out" 2>&1; then
  fail_after "$(cat "$out")" "install.sh --join --role control (node c) exited non-zero"
fi
say "install.sh --join --role control (node c, ${node_ip[c]}) took $((SECONDS - start))s"
took_origin_builds() {
  grep -q "dist.tar.gz: fetched from the origin" "$out" && grep -q "dashboard.tar.gz: fetched from the origin" "$out" &&
    ! grep -q "node_modules missing or stale\|npm run build" "$out" && [[ ! -e "$node_repo_c/node_modules" ]]
}
took_origin_builds || fail_after "$(grep -F '[install]' "$out" | sed -n '/built files from the origin/,/service users/p')" \
  "the control node did not take the origin's builds of the services and the dashboard"
say "ok: the control node took the origin's builds of the services and the dashboard (no npm install, no build)"
check "the control node's tally.env kept the CA and retry schedule lines" \
  bash -c 'grep -qx "NODE_EXTRA_CA_CERTS=$1" "$3" && grep -qx "TALLY_WEBHOOK_RETRY_SCHEDULE=$2" "$3"' sh "$ca" "$retry_schedule" "${node_home[c]}/tally.env"
check "the control node's API answers /healthz with 200 (PostgreSQL, Redis and LiveKit reached)" \
  eventually 60 test "$(http_code "http://${node_ip[c]}:8080/healthz")" == 200
dashboard_page() { curl -fsS -m 10 "$1/dashboard/" | grep -o 'assets/[^"]*\.js' | sort; }
check "the control node serves the origin's dashboard (the same page and scripts)" \
  bash -c '[[ -n "$1" && "$1" == "$2" ]]' sh "$(dashboard_page "http://127.0.0.1:8080")" "$(dashboard_page "http://${node_ip[c]}:8080")"

# 3. Media, a recording and a webhook backlog.
# It reads the origin's REDIS_URL and REDIS_SENTINELS for the reconcile audit at its end.
# Its receivers listen on the origin's cluster address, which the control node's worker reaches too;
# its publisher signals to the origin's livekit-server (the token names the domain, whose CA the
# publisher's native client does not read).
env REDIS_URL="$(env_value REDIS_URL)" REDIS_SENTINELS="$(env_value REDIS_SENTINELS)" \
  TALLY_FAILOVER_RECEIVER_HOST="$origin_ip" TALLY_FAILOVER_LIVEKIT_URL="ws://127.0.0.1:$(env_value TALLY_LIVEKIT_PORT | grep . || echo 7880)" \
  node --import @swc-node/register/esm-register scripts/install-failover/media-workload.ts \
  http://127.0.0.1:8080 "$home/admin.key" "$state" >"$state/client.log" 2>&1 &
client=$!
pids_to_kill+=("$client")
client_waiting() { [[ -f "$state/active" ]] || { kill -0 "$client" 2>/dev/null || fail_after "$(cat "$state/client.log")" "the media workload ended early"; false; }; }
check "a stream is live with a publisher, a passthrough recording active, webhooks pending (503)" eventually 300 client_waiting
app_field() { node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[process.argv[2]] ?? ""))' "$state/app.json" "$1"; }
app_id="$(app_field appId)" app_key="$(app_field key)" room="$(app_field room)" on_air_id="$(app_field streamId)"
host_app="$(app_field hostAppId)" host_key="$(app_field hostKey)" quota_app="$(app_field quotaAppId)" quota_key="$(app_field quotaKey)"
recording_path="$(head -n1 "$state/active")"
room_host() { # the host whose livekit-server runs the room (it logs the room with its roomID)
  local h
  grep -q "\"room\": \"$room\", \"roomID\"" "$home/log/livekit.log" && h+="origin "
  for n in a b; do grep -q "\"room\": \"$room\", \"roomID\"" "${node_home[$n]}/log/livekit.log" && h+="node-$n(${node_ip[$n]}) "; done
  printf '%s' "${h:-unknown}"
}
say "the room runs on: $(room_host)"
check "the egress recording it runs on the origin" test -n "$(pgrep -f -- "egress --config $home/workers/egress/egress.yaml" | head -n1)"
# The on-air stream live with its publisher and its recording active, as the API (through Caddy) says.
on_air_going() {
  local stream recording
  stream="$(curl -s -m 30 -H "Authorization: Bearer $app_key" "$base/v1/apps/$app_id/streams/$on_air_id" || true)"
  recording="$(curl -s -m 30 -H "Authorization: Bearer $app_key" "$base$recording_path" || true)"
  [[ "$stream" == *'"status":"live"'* && "$stream" == *'"publishers":1'* && "$recording" == *'"status":"active"'* ]] || {
    say "stream: $stream; recording: $recording"
    false
  }
}

# 4. The control node's host goes away (link down, then every process in its namespace frozen) while
# the dashboard and apps keep calling through Caddy; then it comes back.
via_caddy() { curl -s -m 100 "$@"; }
# caddy_on_origin: what Caddy's health checks said of the origin's API since the host went (a
# failed check leaves it out; with the control node gone too, Caddy has no API to send requests to).
caddy_on_origin() {
  local said
  said="$(node -e '
    const [log, since] = [process.argv[1], Number(process.argv[2])];
    const lines = require("fs").readFileSync(log, "utf8").split("\n").filter(Boolean).flatMap((line) => {
      try { return [JSON.parse(line)]; } catch { return []; } });
    const said = lines.filter((l) => String(l.logger).includes("health_checker") && l.host === "127.0.0.1:8080" && l.ts >= since)
      .map((l) => `${(l.ts - since).toFixed(1)} s: ${l.msg}${l.error ? ` (${l.error})` : ""}${l.status_code ? ` ${l.status_code}` : ""}`);
    process.stdout.write(said.join("; "));' "$home/log/caddy.log" "${host_gone:-0}" 2>&1 || true)"
  [[ -z "$said" ]] || printf "; Caddy's health checks of the origin's API: %s" "$said"
}
json=(-H 'content-type: application/json') # only with a body: Fastify refuses an empty JSON body (400)
answer_id() { sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"$1" | head -n1; }
# ask WHAT CURL-ARGS...: one request through Caddy as an app makes it (the README's errors): a
# 502/503/504, or a 409 for an Idempotency-Key whose first request is still in progress, is asked
# again with the same key every second, for up to 60 s. It sets asked_status and asked_body (the last
# answer) and appends a line to $asked_log: WHAT (with what a first answer that failed said, and a
# refusal's code and resource), the first and last statuses, the attempts, when the first began
# (epoch s) and the slowest attempt's seconds.
asked_log="$state/asked"
ask() {
  local what="$1" began answer status first="" attempts=0 slowest=0 seconds body said
  shift
  began="$(now)"
  while :; do
    attempts=$((attempts + 1))
    answer="$(via_caddy -w '\n%{http_code} %{time_total}' "$@" || true)"
    body="${answer%$'\n'*}" status="${answer##*$'\n'}"
    seconds="${status#* }" status="${status%% *}"
    if [[ -z "$first" ]]; then
      first="$status"
      said="$(sed -n 's/.*"message": *"\([^"]*\)".*/\1/p' <<<"$body" | head -n1 | tr ' ' '_')"
      [[ "$status" == 20? ]] || what+=" (${said:-empty body})"
    fi
    slowest="$(awk -v a="$slowest" -v b="$seconds" 'BEGIN { print (b + 0 > a + 0) ? b : a }')"
    case "$status" in
      502 | 503 | 504) ;;
      409) [[ "$body" == *'still in progress'* ]] || break ;;
      *) break ;;
    esac
    (($(since "$began" | cut -d. -f1) < 60)) || break
    sleep 1
  done
  printf '%s%s %s %s %s %s %s\n' "$what" "$(grep -o '"\(code\|resource\)":"[^"]*"' <<<"$body" | tr '\n' ' ' | sed 's/^./ &/;s/ $//' || true)" \
    "$first" "$status" "$attempts" "$began" "$slowest" >>"$asked_log"
  asked_status="$status" asked_body="$body"
}
as_app() { # as_app WHAT CURL-ARGS...: ask, printing the last answer's body
  ask "$@"
  printf '%s' "$asked_body"
}
# An app keeps at most this many of its streams starting or ending at once, well within its quota
# (50): however slow the answers, a refusal naming app.streams would mean a stream was not ended.
streams_in_flight_max=20
in_flight="$state/in-flight"
mkdir -p "$in_flight"
start_and_end() { # a stream of the host app started and ended through Caddy, as an app does
  local id
  id="$(answer_id "$(as_app "POST stream" "${json[@]}" -H "Authorization: Bearer $host_key" -H "Idempotency-Key: failover-$1" \
    -d "{\"name\":\"round $1\"}" "$base/v1/apps/$host_app/streams")")"
  [[ -z "$id" ]] || as_app "DELETE stream" -X DELETE -H "Authorization: Bearer $host_key" "$base/v1/apps/$host_app/streams/$id" >/dev/null
  rm -f "$in_flight/$1"
}
request_stream() { # a round of dashboard and app requests every 0.3 s, without waiting for answers, until $state/host-back
  local round=0 busy
  while [[ ! -f "$state/host-back" ]]; do
    as_app "GET /dashboard/" "$base/dashboard/" >/dev/null &
    as_app "GET streams" -H "Authorization: Bearer $host_key" "$base/v1/apps/$host_app/streams" >/dev/null &
    busy="$(find "$in_flight" -type f | wc -l)"
    if ((busy < streams_in_flight_max)); then
      : >"$in_flight/$round" # before the job starts, so the next round counts it
      start_and_end "$round" &
    else
      printf '%s\n' "$round" >>"$state/streams-held-back"
    fi
    round=$((round + 1))
    sleep 0.3
  done
  wait
}
check "before the control node's host goes: the stream live with its publisher, the recording active" eventually 30 on_air_going
: >"$state/asked"
request_stream &
requests=$!
pids_to_kill+=("$requests")
sleep 2
host_gone="$(now)"
ip -n "$c_ns" link set eth0 down
say "the control node's host ${node_ip[c]}: link down"
sleep 3
read -ra frozen <<<"$(ip netns pids "$c_ns" | tr '\n' ' ')"
((${#frozen[@]} > 0)) || fail "no process runs in the control node's namespace"
kill -STOP "${frozen[@]}"
say "... and its ${#frozen[@]} processes frozen (SIGSTOP) $(since "$host_gone") s in"
# Admission answers through Caddy, asked as an app asks: a stream within the app's quota, a refusal
# naming it past it. These requests are logged apart ($state/asked-direct): a 429 is their answer.
asked_log="$state/asked-direct"
ask "POST stream within the quota" "${json[@]}" -H "Authorization: Bearer $quota_key" -H "Idempotency-Key: quota-one" \
  -d '{"name":"one"}' "$base/v1/apps/$quota_app/streams"
[[ "$asked_status" == 201 ]] || fail "with the API host gone, a stream within its app's quota was not admitted through Caddy: $asked_status $asked_body$(caddy_on_origin)"
quota_stream="$(answer_id "$asked_body")"
ask "POST stream past the quota" "${json[@]}" -H "Authorization: Bearer $quota_key" -H "Idempotency-Key: quota-two" \
  -d '{"name":"two"}' "$base/v1/apps/$quota_app/streams"
[[ "$asked_status" == 429 && "$asked_body" == *'"resource":"app.streams"'* ]] ||
  fail "with the API host gone, a stream past its app's quota (1) was not refused with 429 naming app.streams: $asked_status $asked_body$(caddy_on_origin)"
admission_s="$(since "$host_gone")"
ask "DELETE stream within the quota" -X DELETE -H "Authorization: Bearer $quota_key" "$base/v1/apps/$quota_app/streams/$quota_stream"
[[ "$asked_status" == 200 ]] || fail "with the API host gone, ending the admitted stream through Caddy did not answer 200: $asked_status $asked_body$(caddy_on_origin)"
say "ok: with the API host gone, a stream admitted and one past the quota refused (429, app.streams) through Caddy"
# A webhook of this moment: a stream of the host app started and ended; the workload's receiver for
# that app answers 200 and says whether each event came once with a valid signature.
ask "POST stream hooked" "${json[@]}" -H "Authorization: Bearer $host_key" -H "Idempotency-Key: hooked-while-gone" \
  -d '{"name":"hooked while gone"}' "$base/v1/apps/$host_app/streams"
[[ "$asked_status" == 201 ]] || fail "with the API host gone, starting a stream through Caddy: $asked_status $asked_body$(caddy_on_origin)"
hooked_id="$(answer_id "$asked_body")"
ask "DELETE stream hooked" -X DELETE -H "Authorization: Bearer $host_key" "$base/v1/apps/$host_app/streams/$hooked_id"
[[ "$asked_status" == 200 ]] || fail "with the API host gone, ending a stream through Caddy did not answer 200: $asked_status $asked_body$(caddy_on_origin)"
asked_log="$state/asked"
printf '%s\n' "$hooked_id" >"$state/hooked.tmp" && mv "$state/hooked.tmp" "$state/hooked"
check "with the API host gone, the webhook of a stream ended then arrives (the workload's verdict)" eventually 240 test -s "$state/hooked.json"
hook_verdict="$(node -e 'const v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.stdout.write(v.problems.join("; "))' "$state/hooked.json")"
[[ -z "$hook_verdict" ]] || fail "with the API host gone, webhooks of that moment: $hook_verdict"
webhook_s="$(since "$host_gone")"
say "ok: with the API host gone, every webhook of that moment delivered with a valid signature (duplicates: sent again by the thawed worker under the same webhook-id): $(cat "$state/hooked.json")"
check "with the API host gone, the stream is live with its publisher and the recording active" eventually 30 on_air_going
# Long enough for Caddy's health checks (every 2 s) and passive ones (10 s) to have acted.
while (($(since "$host_gone" | cut -d. -f1) < 20)); do sleep 1; done
touch "$state/host-back"
host_back="$(now)"
kill -CONT "${frozen[@]}"
frozen=()
ip -n "$c_ns" link set eth0 up
gone_s="$(since "$host_gone")"
wait "$requests" || true
check "the control node's API is healthy again (SIGCONT, link up)" eventually 180 test "$(http_code "http://${node_ip[c]}:8080/healthz")" == 200
healthy_again_s="$(since "$host_back")"
asked_n="$(wc -l <"$state/asked")"
# Fields from the end of each line: the slowest attempt's seconds, began, attempts, last status, first status.
unanswered="$(awk '$(NF-3) != 200 && $(NF-3) != 201 { NF -= 3; print }' "$state/asked" | sort | uniq -c | tr -s ' \n' ' ')"
retried="$(awk -v gone="$host_gone" '$(NF-2) > 1 { n++; if ($(NF-1) + 0 > gone + 0) late++ } END { printf "%d (%d begun after the link went down)", n, late }' "$state/asked")"
retried_what="$(awk '$(NF-2) > 1 { NF -= 3; print }' "$state/asked" | sort | uniq -c | tr -s ' \n' ' ')"
slowest="$(awk '$NF + 0 >= max { max = $NF + 0; what = $0 } END { sub(/ [^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+$/, "", what); printf "%.1f s (%s)", max, what }' "$state/asked")"
direct_retried="$(awk '$(NF-2) > 1 { NF -= 3; print }' "$state/asked-direct" | tr '\n' ';')"
origin_left_out="$(caddy_on_origin)"
origin_kept="; Caddy left the origin's API out: never"
held_back=0
[[ ! -f "$state/streams-held-back" ]] || held_back="$(wc -l <"$state/streams-held-back")"
say "API host gone: link down at 0 s, frozen at 3 s, back at ${gone_s} s; ${asked_n} requests through Caddy (dashboard page, streams list, stream start + end, every 0.3 s; a round's stream left out while ${streams_in_flight_max} were in flight: ${held_back}), slowest attempt ${slowest}; asked again: ${retried}${retried_what:+: $retried_what}; admission (201, then 429 app.streams) after ${admission_s} s${direct_retried:+ (asked again: $direct_retried)}${origin_left_out:-$origin_kept}; webhook of that moment delivered once after ${webhook_s} s; its API healthy ${healthy_again_s} s after it came back; host: $(host_state)"
((asked_n > 20)) || fail "only $asked_n requests were made while the API host was gone"
[[ -z "$unanswered" ]] || fail "with the API host gone, requests through Caddy were not answered 200/201, even when asked again for 60 s: $unanswered$origin_left_out"
check "after the API host phase, the stream is live with its publisher and the recording active" eventually 30 on_air_going

# 5. kill -9 of the primary (the supervisor first, so nothing restarts it).
primary="$origin_ip:6379"
redis_child="$(cat "$home/run/redis.child.pid")"
redis_supervisor="$(cat "$home/run/redis.pid")"
# The joined nodes' processes refused by a Redis server (WRONGPASS): each replica holds the node
# users, so the promoted one lets every node in at once.
refused_logins() {
  local n
  for n in a b c; do cat "${node_home[$n]}"/log/*.log "${node_home[$n]}"/workers/*/*.log 2>/dev/null; done | grep -c WRONGPASS || true
}
refused_before="$(refused_logins)"
kill -9 "$redis_supervisor" "$redis_child"
killed="$(now)"
printf '%s' "$killed" >"$state/killed"
say "killed the primary Redis $primary (pid $redis_child, SIGKILL)"
promoted="" healthy="" admitted="" new_primary="" refusals=()
while [[ -z "$promoted" || -z "$healthy" || -z "$admitted" ]]; do
  (($(since "$killed" | cut -d. -f1) < 240)) || break
  if [[ -z "$promoted" ]]; then
    for ip in "$origin_ip" "${node_ip[a]}" "${node_ip[b]}"; do
      named="$(sentinel_primary_of "$ip")"
      if [[ -n "$named" && "$named" != "$primary" ]]; then promoted="$(since "$killed")" new_primary="$named" && break; fi
    done
  fi
  if [[ -n "$promoted" && -z "$healthy" ]]; then
    body="$(curl -s -m 10 http://127.0.0.1:8080/healthz || true)"
    [[ "$body" != *'"status":"ok"'* ]] || healthy="$(since "$killed")"
  fi
  if [[ -n "$promoted" && -z "$admitted" ]]; then
    answer="$(curl -s -m 10 -w '\n%{http_code}' -H "Authorization: Bearer $app_key" -H 'content-type: application/json' \
      -d '{"name":"after the failover"}' "http://127.0.0.1:8080/v1/apps/$app_id/streams" || true)"
    if [[ "${answer##*$'\n'}" == 201 ]]; then
      admitted="$(since "$killed")"
      stream_id="$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"${answer%$'\n'*}" | head -n1)"
      curl -s -o /dev/null -m 10 -X DELETE -H "Authorization: Bearer $app_key" "http://127.0.0.1:8080/v1/apps/$app_id/streams/$stream_id" || true
    else
      refusals+=("${answer##*$'\n'} $(grep -o '"code":"[^"]*"' <<<"$answer" | head -n1)")
    fi
  fi
  sleep 0.3
done
say "primary $primary killed; replica $new_primary promoted after ${promoted:-never} s; /healthz ok after ${healthy:-never} s; stream admitted after ${admitted:-never} s"
say "refused meanwhile: $( ((${#refusals[@]} == 0)) && echo none || printf '%s\n' "${refusals[@]}" | sort | uniq -c | tr -s ' \n' ' ')"
[[ -n "$promoted" ]] || fail "no Sentinel named another primary within 240 s of the kill"
[[ -n "$healthy" ]] || fail "/healthz did not answer \"ok\" within 240 s of the kill"
[[ -n "$admitted" ]] || fail "no stream was admitted within 240 s of the kill"
# Every host's agent follows: the heartbeats written before the kill (replicated, with their TTL)
# have expired 30 s after it, so three nodes in the pool then are three agents beating on the new primary.
pool_size() { admin http://127.0.0.1:8080/v1/capacity | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(String(JSON.parse(s).nodes.length)))'; }
while (($(since "$killed" | cut -d. -f1) < 30)); do sleep 1; done
check "30 s after the kill the pool holds all three nodes (each agent beats on the new primary)" eventually 30 test "$(pool_size)" == 3
failovers="$(curl -s -m 10 -H "Authorization: Bearer $(env_value TALLY_METRICS_TOKEN)" http://127.0.0.1:8080/metrics | sed -n 's/^tally_redis_failovers_total //p')"
say "tally_redis_failovers_total: ${failovers:-not exported}"
# The failover may leave a copy of the room on another node, emptied when its participants' peer
# connections time out (about 30 s after the kill) as they rejoin the room's new copy: LiveKit closes
# it 30 s after that (the departure timeout Tally gives rooms) and sends room_finished for the room's
# name. The stream must outlive that.
while (($(since "$killed" | cut -d. -f1) < 90)); do sleep 1; done
say "90 s after the kill the room runs on: $(room_host)"
check "90 s after the kill the stream is live with its publisher and the recording active" eventually 30 on_air_going
check "no joined node's process was refused by the promoted replica (WRONGPASS): it held the node users" test "$(refused_logins)" == "$refused_before"

# 6. The recording completes, the webhooks are delivered once each, the audit frees nothing.
touch "$state/go"
if ! wait "$client"; then
  fail_after "$(cat "$state/client.log")" "the media workload failed after the failover"
fi
say "media: $(tail -n1 "$state/client.log")"
say "ok: stream live and publisher connected through the failover; the recording completed (audio + video); every webhook delivered once; the reconcile audit freed nothing"
