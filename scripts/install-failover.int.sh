#!/usr/bin/env bash
# Integration test of Redis failover on installed hosts (docs/adr/0040-redis-sentinel.md), with media
# running. Three hosts, each a network namespace of its own on one /24 (a bridge in the origin's):
#   origin  ./install.sh --cluster-bind IP --redis-sentinel (Redis primary, a Sentinel, API, worker,
#           livekit-server, agent, egress)
#   two media nodes ./install.sh --join ... --redis-replica (a replica and a Sentinel each;
#           livekit-server, agent), each in a mount namespace where the origin's recordings
#           directory is an empty directory of its own (as install-hosts.int.sh's joined node)
# Then a live stream with a real publisher (@livekit/rtc-node), a passthrough recording active and
# webhooks pending at a receiver that answers 503 (scripts/install-failover/media-workload.ts). The
# primary Redis is killed with SIGKILL (its supervisor too, so nothing restarts it: a power cut of
# that service). Printed: the seconds until the Sentinels name a replica primary, until the API's
# /healthz answers 200 "ok" again, until a stream is admitted again. Checked: the stream stayed live
# with its publisher, the recording completes with audio and video (ffprobe), every webhook is
# delivered exactly once once the receiver answers 200, and the reconcile audit frees nothing.
# Exits non-zero on the first failed check (logs of the homes are printed).
#
# Usage: bash scripts/install-failover.int.sh      (TALLY_KEEP_HOME=1 keeps the temp homes)
# Not part of npm test. Takes 4-8 min (three installs). Side effects as install-hosts.int.sh: apt
# packages / LiveKit builds if missing, the system users; three network namespaces, removed at exit.
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
  origin_ns="tfo-origin-$$" a_ns="tfo-a-$$" b_ns="tfo-b-$$"
  remove_net() { ip netns del "$origin_ns" 2>/dev/null || true; ip netns del "$a_ns" 2>/dev/null || true; ip netns del "$b_ns" 2>/dev/null || true; }
  trap remove_net EXIT
  ip netns add "$origin_ns"
  ip -n "$origin_ns" link set lo up
  ip -n "$origin_ns" link add br0 type bridge
  ip -n "$origin_ns" addr add "$net.1/24" dev br0
  ip -n "$origin_ns" link set br0 up
  n=2
  for ns in "$a_ns" "$b_ns"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$origin_ns" link add "port$n" type veth peer name eth0 netns "$ns"
    ip -n "$origin_ns" link set "port$n" master br0
    ip -n "$origin_ns" link set "port$n" up
    ip -n "$ns" addr add "$net.$n/24" dev eth0
    ip -n "$ns" link set eth0 up
    n=$((n + 1))
  done
  say "origin $net.1 ($origin_ns), nodes $net.2 ($a_ns) and $net.3 ($b_ns), no default route"
  status=0
  # nsenter, not `ip netns exec`, keeps the host's /sys (cgroups for the agent's workers).
  nsenter --net="/run/netns/$origin_ns" env TALLY_FAILOVER_NET="$net" TALLY_FAILOVER_NODES="$a_ns $b_ns" \
    bash "${BASH_SOURCE[0]}" "$@" || status=$?
  exit "$status"
fi
net="$TALLY_FAILOVER_NET"
read -r a_ns b_ns <<<"$TALLY_FAILOVER_NODES"
origin_ip="$net.1"
declare -A node_ns=([a]="$a_ns" [b]="$b_ns") node_ip=([a]="$net.2" [b]="$net.3") node_home=() node_dir=()

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
on_node() { # on_node a|b CMD...: CMD on that node's host (its network namespace)
  local ns="${node_ns[$1]}"
  shift
  nsenter --net="/run/netns/$ns" "$@"
}
cleanup() {
  local rc=$? pid n
  for pid in "${pids_to_kill[@]}"; do kill "$pid" 2>/dev/null || true; done
  # The origin first: stopping its agent needs a Redis primary, which after the failover is a node's.
  if [[ -f "$home/run/mode" ]]; then
    ./install.sh --stop --home "$home" >/dev/null 2>&1 || say "cleanup: --stop failed"
  fi
  for n in a b; do
    if [[ -n "${node_home[$n]:-}" && -f "${node_home[$n]}/run/mode" ]]; then
      on_node "$n" ./install.sh --stop --home "${node_home[$n]}" >/dev/null 2>&1 || say "cleanup: --stop of node $n failed"
    fi
  done
  print_logs_on_failure "$rc" 30
  if [[ $rc -ne 0 ]]; then
    for n in a b; do
      [[ -d "${node_home[$n]:-}/log" ]] || continue
      for f in "${node_home[$n]}"/log/*.log; do
        printf '[%s] ---- node %s: %s (last 20 lines)\n' "$INT_NAME" "$n" "$f" >&2
        tail -n 20 "$f" >&2 || true
      done
    done
    [[ ! -f "$state/client.log" ]] || { say "---- media workload"; tail -n 30 "$state/client.log" >&2; }
  fi
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then
    say "kept $home ${node_home[*]}"
  else
    rm -rf "$home" "$out" "$state" "${node_home[@]}" "${node_dir[@]}"
  fi
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

# 1. The origin. Webhooks may reach the receiver on this host's loopback, and retry every few
# seconds (lines tally.env keeps as found; the installer writes the rest).
cat >"$home/tally.env" <<EOF
TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8
TALLY_WEBHOOK_RETRY_SCHEDULE=$(printf '1s,%.0s' {1..20})$(printf '5s,%.0s' {1..27})5s
EOF
start=$SECONDS
if ! ./install.sh --home "$home" --offline --no-systemd --no-sysctl --node-ip "$origin_ip" \
  --cluster-bind "$origin_ip" --redis-sentinel >"$out" 2>&1; then
  fail_after "$(cat "$out")" "install.sh --cluster-bind --redis-sentinel (origin) exited non-zero"
fi
say "install.sh (origin, --redis-sentinel) took $((SECONDS - start))s"
check "GET /healthz answers 200" test "$(http_code http://127.0.0.1:8080/healthz)" == 200
check "the origin's Sentinel names the origin's Redis primary" test "$(sentinel_primary_of "$origin_ip")" == "$origin_ip:6379"
check "tally.env kept the webhook lines" grep -q '^TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8$' "$home/tally.env"

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
    ./install.sh --join "http://$origin_ip:8080" --token "$token" --role media --name "$name" --redis-replica --insecure-http \
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

# 3. Media, a recording and a webhook backlog.
# It reads the origin's REDIS_URL and REDIS_SENTINELS for the reconcile audit at its end.
env REDIS_URL="$(env_value REDIS_URL)" REDIS_SENTINELS="$(env_value REDIS_SENTINELS)" \
  node --import @swc-node/register/esm-register scripts/install-failover/media-workload.ts \
  http://127.0.0.1:8080 "$home/admin.key" "$state" >"$state/client.log" 2>&1 &
client=$!
pids_to_kill+=("$client")
client_waiting() { [[ -f "$state/active" ]] || { kill -0 "$client" 2>/dev/null || fail_after "$(cat "$state/client.log")" "the media workload ended early"; false; }; }
check "a stream is live with a publisher, a passthrough recording active, webhooks pending (503)" eventually 300 client_waiting
app_id="$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).appId)' "$state/app.json")"
app_key="$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).key)' "$state/app.json")"
room="$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).room)' "$state/app.json")"
room_host() { # the host whose livekit-server runs the room (it logs the room with its roomID)
  local h
  grep -q "\"room\": \"$room\", \"roomID\"" "$home/log/livekit.log" && h+="origin "
  for n in a b; do grep -q "\"room\": \"$room\", \"roomID\"" "${node_home[$n]}/log/livekit.log" && h+="node-$n(${node_ip[$n]}) "; done
  printf '%s' "${h:-unknown}"
}
say "the room runs on: $(room_host)"
check "the egress recording it runs on the origin" test -n "$(pgrep -f -- "egress --config $home/workers/egress/egress.yaml" | head -n1)"

# 4. kill -9 of the primary (the supervisor first, so nothing restarts it).
primary="$origin_ip:6379"
redis_child="$(cat "$home/run/redis.child.pid")"
redis_supervisor="$(cat "$home/run/redis.pid")"
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

# 5. The recording completes, the webhooks are delivered once each, the audit frees nothing.
touch "$state/go"
if ! wait "$client"; then
  fail_after "$(cat "$state/client.log")" "the media workload failed after the failover"
fi
say "media: $(tail -n1 "$state/client.log")"
say "ok: stream live and publisher connected through the failover; the recording completed (audio + video); every webhook delivered once; the reconcile audit freed nothing"
