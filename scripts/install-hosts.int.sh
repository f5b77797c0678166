#!/usr/bin/env bash
# Integration test of ./install.sh on a host like the ones it meets in the wild: no route to the
# internet (hence no public STUN). Runs as root, in a network namespace of its own with loopback and
# a veth pair (a private media address, no default route), so nothing it starts can reach - or is
# reachable from - anything outside, and the default ports are free. Checks:
#   STUN: ./install.sh with no network flags finishes on a host where no STUN server answers
#     (livekit-server announces the node's own address); with a STUN server that answers (a tiny
#     responder on loopback, scripts/install-hosts/stun-responder.mjs) it writes use_external_ip;
#     a re-run after that server went away switches back.
#   Upgrades: a recording is active (a real publisher, @livekit/rtc-node) while install.sh runs
#     again; the egress process is handed over to the new agent, the recording completes and
#     plays (ffprobe).
#   Object storage: --object-store --cluster-bind on the origin; a worker node joins without the
#     origin's recordings directory; its recording lands in the origin's bucket (AWS SDK list, the
#     API's 302, sha256, ffprobe); its own key is refused once the node is removed.
#   TLS: --domain NAME --tls internal puts Caddy in front: curl --cacert reaches /healthz over
#     HTTPS, a real LiveKit client (@livekit/rtc-node) joins a stream over wss:// through it, the
#     API and LiveKit's HTTP port listen on loopback only, /metrics needs its token.
#   TURN over TLS: with --domain, LiveKit's join response names turns:NAME:5349; a client that
#     trusts only Caddy's CA allocates a relay there with the credentials LiveKit handed it (on the
#     node's media address, towards which alone it may relay); one trusting only the public roots is
#     refused; a renewed certificate in Caddy's storage reaches coturn without a restart; tally.env
#     hands joined media nodes the same server; coturn refuses TCP relays (442), and relays to the
#     addresses in TALLY_TURN_ALLOWED_PEERS once a re-run wrote them into its database, without a restart.
#   TURN over TLS on 443 (--turn-address, a second address): coturn holds 443 there and Caddy only
#     the host's other addresses; Chromium in a namespace whose firewall passes only TCP 443 (UDP
#     dropped) publishes and views through turns:turn.NAME:443 (relay candidates over TLS, printed)
#     and a recording of it completes. A WHIP publisher behind a firewall that drops UDP is handed the
#     same server in the WHIP answer's Link headers and publishes and records through it. With the
#     host's two addresses, ingress and livekit-server bind their UDP port on the media address only.
# Exits non-zero on the first failed check (logs of the home are printed).
#
# Usage: bash scripts/install-hosts.int.sh      (TALLY_KEEP_HOME=1 keeps the temp home)
# Side effects on the host, as install.sh itself: apt packages / LiveKit builds if missing, the
# system users tally, tally-media, tally-livekit, tally-postgres, tally-redis, /etc/sysctl.d/60-tally.conf, Debian's caddy and coturn packages; a network namespace,
# removed at exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

INT_NAME=install-hosts
# shellcheck source=scripts/int-lib.sh
source scripts/int-lib.sh
[[ "$(id -u)" -eq 0 ]] || fail "must run as root (install.sh does)"

# ------------------------------------------------------------------ the host without a route
if [[ -z "${TALLY_HOSTS_NS:-}" ]]; then
  # The hosts in question reach package registries and nothing else: fetch the services'
  # production dependencies (npm) here, before the namespace takes the network away.
  npm run --silent build >/dev/null
  (cd dist && npm install --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error)
  ns="tally-hosts-$$"
  ip netns add "$ns"
  trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
  ip -n "$ns" link set lo up
  ip -n "$ns" link add hosts0 type veth peer name hosts1
  ip -n "$ns" addr add 10.234.0.1/24 dev hosts0
  ip -n "$ns" link set hosts0 up
  ip -n "$ns" link set hosts1 up
  say "running in network namespace $ns (media address 10.234.0.1, no default route)"
  # nsenter, not `ip netns exec`, keeps the host's /sys (cgroups for the agent's workers).
  status=0
  # A mount namespace of its own too: the test's host name resolves through a private /etc/hosts.
  nsenter --net="/run/netns/$ns" unshare --mount --propagation private \
    env TALLY_HOSTS_NS="$ns" bash "${BASH_SOURCE[0]}" "$@" || status=$?
  exit "$status"
fi
node_ip=10.234.0.1
domain=media.tally.test
hosts="$(mktemp /tmp/tally-hosts-etc.XXXXXX)"
{ cat /etc/hosts; echo "$node_ip $domain"; } >"$hosts"
chmod 644 "$hosts"
mount --bind "$hosts" /etc/hosts

# The services run the checkout as an unprivileged user. A clone under a private directory
# (say /root) is unreadable to it; test from a readable copy instead.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -r "$PWD/apps/api/src/main.ts" 2>/dev/null; then
  copy="$(mktemp -d /tmp/tally-install-src.XXXXXX)"
  chmod 755 "$copy"
  say "$PWD is private; testing from a copy in $copy"
  cp -a "$PWD/." "$copy/"
  cd "$copy"
fi

home="$(mktemp -d /tmp/tally-hosts-int.XXXXXX)"
chmod 755 "$home"
out="$home.out"
pids_to_kill=()
cleanup() {
  local rc=$? pid
  for pid in "${pids_to_kill[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [[ -n "${node_home:-}" && -f "$node_home/run/mode" ]]; then
    ./install.sh --stop --home "$node_home" >/dev/null 2>&1 || say "cleanup: --stop of the joined node failed"
  fi
  if [[ -f "$home/run/mode" ]]; then
    ./install.sh --stop --home "$home" >/dev/null 2>&1 || say "cleanup: --stop failed"
  fi
  print_logs_on_failure "$rc" 30
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then say "kept $home"; else rm -rf "$home" "$out" "$home.stun" "$home.rec" "$home.renew" "$hosts"; fi
  if [[ -n "${copy:-}" ]]; then rm -rf "$copy"; fi
  say_outcome "$rc"
}
trap cleanup EXIT

# install LABEL ARGS...: runs install.sh (output kept in $out for checks on what it said).
install() {
  local label="$1" start=$SECONDS
  shift
  if ! ./install.sh --home "$home" "$@" >"$out" 2>&1; then
    fail_after "$(cat "$out")" "install.sh ($label) exited non-zero"
  fi
  say "install.sh ($label) took $((SECONDS - start))s"
}
said() { grep -qE "$1" "$out"; }
http_code() { curl -s -o /dev/null -m 10 -w '%{http_code}' "$@" || true; }
healthz_is_200() { [[ "$(http_code http://127.0.0.1:8080/healthz)" == 200 ]]; }
yaml_has() { grep -qE "$1" "$home/livekit.yaml"; }
env_value() { sed -n "s/^$1=//p" "$home/tally.env"; }
free_udp_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    [[ -n "$(ss -Huln "sport = :$port")" ]] || break
  done
  printf '%s' "$port"
}

check "this host has no route to the internet" bash -c '! ip -4 route get 1.1.1.1 >/dev/null 2>&1'

# 1. No STUN: `./install.sh` with no network flags asks LiveKit's default STUN servers, which
# cannot be reached from here (no route: nothing leaves this namespace), and still finishes.
unset TALLY_STUN_SERVERS
install no-stun
check "it said no STUN server answered and which address it announces" said "STUN: no answer within 3s .*livekit-server announces $node_ip"
check "livekit.yaml: use_external_ip false" yaml_has '^  use_external_ip: false$'
check "livekit.yaml: the node's own address" yaml_has "^  node_ip: $node_ip\$"
check "livekit.yaml: no public STUN handed to clients" yaml_has '^    - 127\.0\.0\.1:3478$'
check "GET /healthz answers 200" healthz_is_200
check "without --domain the summary says TURN/TLS is off and how to turn it on" said "TURN/TLS: +off \(TURN over UDP only\).*re-run"
check "... and no TURN/TLS server runs" test ! -e "$home/run/turn.pid"

# Least privilege: the systemd units this home would get (rendered as install.sh renders them)
# pass `systemd-analyze verify`, each with its own user, its hardening and exactly the paths it writes.
if command -v systemd-analyze >/dev/null 2>&1; then
  units="$home.units"
  mkdir -p "$units"
  declare -A unit_user=([postgres]=tally-postgres [redis]=tally-redis [livekit]=tally-livekit [agent]=tally-media
    [api]=tally [worker]=tally [caddy]=caddy [turn]=turnserver [turn-cert]=root
    [object-store-keys]=tally-objects)
  declare -A unit_writes=([postgres]="$home/postgres" [redis]="$home/redis" [livekit]=""
    [agent]="$home/workers $home/recordings $home/hls -/home/egress/tmp" [api]="$home/recordings $home/hls"
    [worker]="$home/recordings $home/hls" [caddy]="$home/caddy" [turn]="$home/turn/run" [turn-cert]="$home/turn/tls"
    [object-store-keys]="$home/object-store-keys")
  unit_has() { grep -qxF -- "$2" "$units/tally-$1.service" || fail "tally-$1.service lacks the line $2"; }
  for name in postgres redis livekit agent api worker caddy turn turn-cert object-store-keys; do
    # shellcheck disable=SC2016 # expanded by the inner shell
    bash -c 'source scripts/install/lib.sh && source scripts/install/objects.sh && source scripts/install/services.sh && HOME_DIR="$1" NODE_BIN="$(command -v node)" &&
      PG_BIN="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin | sort -V | tail -n1)" && declare -A PORT=([pg]=5432) &&
      render_unit "$2"' _ "$home" "$name" >"$units/tally-$name.service"
    for line in "User=${unit_user[$name]}" NoNewPrivileges=yes PrivateTmp=yes ProtectSystem=strict; do unit_has "$name" "$line"; done
    grep -qE '^ProtectHome=(yes|read-only)$' "$units/tally-$name.service" || fail "tally-$name.service does not protect /home"
    if [[ -n "${unit_writes[$name]}" ]]; then
      unit_has "$name" "ReadWritePaths=${unit_writes[$name]}"
    else
      ! grep -q '^ReadWritePaths=' "$units/tally-$name.service" || fail "tally-$name.service may write somewhere"
    fi
    if [[ "$name" == caddy ]]; then
      unit_has caddy CapabilityBoundingSet=CAP_NET_BIND_SERVICE
    elif [[ "$name" == turn-cert ]]; then
      unit_has turn-cert "CapabilityBoundingSet=CAP_CHOWN CAP_DAC_READ_SEARCH"
    else
      unit_has "$name" CapabilityBoundingSet=
    fi
  done
  verify="$(cd "$units" && systemd-analyze verify ./*.service 2>&1 || true)"
  [[ -z "$verify" ]] || fail "systemd-analyze verify: $verify"
  rm -rf "$units"
  say "ok: every unit passes systemd-analyze verify: its own user, NoNewPrivileges, ProtectSystem=strict with exactly its write paths, PrivateTmp, ProtectHome, minimal capabilities"
fi

# 2. A STUN server answers (a responder on loopback stands in for a public one): use_external_ip.
stun_port="$(free_udp_port)"
node scripts/install-hosts/stun-responder.mjs "$stun_port" >"$home.stun" 2>&1 &
pids_to_kill+=($!)
eventually 10 grep -q listening "$home.stun" || fail "the STUN responder did not start"
TALLY_STUN_SERVERS="127.0.0.1:$stun_port" install stun-answers
check "it said the STUN server answered" said "STUN: 127\.0\.0\.1:$stun_port answered"
check "livekit.yaml: use_external_ip true" yaml_has '^  use_external_ip: true$'
check "livekit.yaml: that STUN server" yaml_has "^    - 127\\.0\\.0\\.1:$stun_port\$"
check "tally.env remembers TALLY_STUN_SERVERS" test "$(env_value TALLY_STUN_SERVERS)" == "127.0.0.1:$stun_port"
check "livekit-server started with STUN (answers on its port)" eventually 30 test "$(http_code http://127.0.0.1:7880/)" == 200
check "GET /healthz answers 200" healthz_is_200

# 3. The network changes: the STUN server is gone. A re-run notices and switches back.
kill "${pids_to_kill[-1]}"
install stun-gone
check "the re-run said no STUN server answered" said "STUN: no answer within 3s from 127\.0\.0\.1:$stun_port"
check "livekit.yaml: use_external_ip false again" yaml_has '^  use_external_ip: false$'
check "GET /healthz answers 200" healthz_is_200

# 4. An upgrade keeps recordings: a recording is active while install.sh runs again; the agent
# hands its egress over to the new agent instead of stopping it, and the recording completes.
state="$home.rec"
mkdir -p "$state"
egress_pid() { pgrep -f -- "egress --config $home/workers/egress/egress.yaml" | head -n1; }
node --import @swc-node/register/esm-register scripts/install-hosts/recording-across-upgrade.ts \
  http://127.0.0.1:8080 "$home/admin.key" "$state" >"$state/client.log" 2>&1 &
client=$!
pids_to_kill+=("$client")
client_waiting() { [[ -f "$state/active" ]] || { kill -0 "$client" 2>/dev/null || { cat "$state/client.log" >&2; fail "the recording client ended early"; }; false; }; }
check "a recording is active (published with @livekit/rtc-node)" eventually 240 client_waiting
egress_before="$(egress_pid)" agent_before="$(cat "$home/run/agent.child.pid")"
[[ -n "$egress_before" ]] || fail "no egress runs for the active recording"
check "the recording's egress runs as tally-media" test "$(ps -o user:32= -p "$egress_before" | tr -d ' ')" == tally-media
install upgrade
check "it said the agent hands its media workers over" said "hands its running media workers \([1-9][0-9]*\) over"
check "the agent was restarted (new code)" test "$(cat "$home/run/agent.child.pid")" != "$agent_before"
check "the same egress process still runs the recording" test "$(egress_pid)" == "$egress_before"
check "the new agent took the workers over (hand-over request consumed)" eventually 30 test ! -e "$home/workers/hand-over"
check "the new agent reports it adopted the egress" eventually 30 grep -q "egress worker $egress_before adopted" "$home/log/agent.log"
touch "$state/go"
if ! wait "$client"; then
  fail_after "$(cat "$state/client.log")" "the recording did not survive the upgrade"
fi
say "recording: $(tail -n1 "$state/client.log")"
say "ok: the recording completed after the upgrade and plays (ffprobe)"
rm -rf "$state"

# 5. Object storage: the origin runs the bundled store (--object-store) and takes nodes
# (--cluster-bind); a worker node joins on this host without the origin's recordings directory (a
# mount namespace of its own where that path is an empty directory of the node's). A recording
# placed on it lands in the origin's bucket; the node held a key of its own, which removing the node
# revokes (docs/adr/0045-object-store-key-per-node.md).
object_store_start=$SECONDS
install object-store --object-store --cluster-bind "$node_ip"
check "the summary says recordings go to the bucket on this host" said "Recordings: +s3://tally-recordings on this host"
check "the key broker runs as tally-objects" test "$(ps -o user:32= -p "$(cat "$home/run/object-store-keys.child.pid")" | tr -d ' ')" == tally-objects
check "... on a socket only tally-objects and tally reach" test "$(stat -c '%a %U:%G' "$home/object-store-keys")" == "750 tally-objects:tally"
check "tally.env: the broker's socket, not the root key" sh -c "grep -qx 'TALLY_OBJECT_STORE_KEYS_SOCKET=$home/object-store-keys/keys.sock' '$home/tally.env' && ! grep -q ROOT_SECRET_KEY '$home/tally.env'"
node_home="$(mktemp -d /tmp/tally-hosts-node.XXXXXX)"
node_dir="$(mktemp -d /tmp/tally-hosts-node-rec.XXXXXX)"
node_name="w-$$"
recordings="$(env_value TALLY_RECORDINGS_DIR)"
join_token="$(curl -s -m 10 -H "Authorization: Bearer $(cat "$home/admin.key")" -H 'content-type: application/json' \
  -d "{\"role\":\"worker\",\"name\":\"$node_name\"}" http://127.0.0.1:8080/v1/nodes/join-tokens | node -e 'process.stdin.on("data", (d) => process.stdout.write(JSON.parse(d).token))')"
start=$SECONDS
if ! unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$node_dir" "$recordings" \
  ./install.sh --join "http://$node_ip:8080" --token "$join_token" --role worker --name "$node_name" --insecure-http \
  --home "$node_home" --no-provision --no-systemd --no-sysctl --offline --node-ip 127.0.0.1 >"$out" 2>&1; then
  fail_after "$(cat "$out")" "install.sh --join (worker, no shared mount) exited non-zero"
fi
say "install.sh --join (worker) took $((SECONDS - start))s"
node_env() { sed -n "s/^$1=//p" "$node_home/tally.env"; }
check "the node stages in the origin's bucket" said "recordings are staged in the origin's bucket tally-recordings"
check "the node holds a key of its own, not the origin's" test "$(node_env TALLY_S3_ACCESS_KEY)" == "tally-node-$node_name"
state="$home.rec"
mkdir -p "$state"
if ! recorded="$(env $(grep '^TALLY_S3_' "$home/tally.env") node --import @swc-node/register/esm-register \
  scripts/install-hosts/node-recording-in-store.ts http://127.0.0.1:8080 "$home/admin.key" "$node_name" "$state" 2>&1)"; then
  printf '%s\n' "$recorded" >&2
  tail -n 30 "$node_home/log/agent.log" >&2 || true
  fail "a recording on the joined worker node did not land in the origin's store"
fi
say "node recording: $(tail -n1 <<<"$recorded")"
say "ok: a recording on the worker node (no shared mount) is complete in s3://tally-recordings, listed with the AWS SDK, downloaded through the 302 (sha256) and probed"
check "nothing of it is left on the node" test -z "$(find "$node_dir" -type f)"
# The node's key against the store, with the probe install.sh uses for --s3-*.
node_probe() {
  env TALLY_S3_BUCKET=tally-recordings TALLY_S3_ENDPOINT="$(node_env TALLY_S3_ENDPOINT)" TALLY_S3_REGION=us-east-1 \
    TALLY_S3_ACCESS_KEY="$(node_env TALLY_S3_ACCESS_KEY)" TALLY_S3_SECRET_KEY="$(node_env TALLY_S3_SECRET_KEY)" \
    TALLY_S3_FORCE_PATH_STYLE=true NODE_NO_WARNINGS=1 node scripts/install/s3-probe.mjs 2>&1 || true
}
check "the node's key may not write outside incoming/ (AccessDenied)" bash -c "$(declare -f node_env node_probe); node_home='$node_home'; node_probe | grep -q 'PUT .* failed: AccessDenied (HTTP 403)'"
check "DELETE /v1/nodes/$node_name: 204" test "$(http_code -X DELETE -H "Authorization: Bearer $(cat "$home/admin.key")" "http://127.0.0.1:8080/v1/nodes/$node_name")" == 204
check "the removed node's key is refused by the store (InvalidAccessKeyId)" bash -c "$(declare -f node_env node_probe); node_home='$node_home'; node_probe | grep -q 'PUT .* failed: InvalidAccessKeyId (HTTP 403)'"
./install.sh --stop --home "$node_home" >/dev/null 2>&1 || fail "--stop on the node failed"
rm -rf "$state" "$node_home" "$node_dir"
node_home=""
say "object storage with a joined worker node took $((SECONDS - object_store_start))s"

# 6. TLS: --domain with Caddy's local CA. Clients trust that CA only. Renewals of the certificate
# are looked for every 2 s here (TALLY_TURN_CERT_CHECK_S; 600 by default).
TALLY_TURN_CERT_CHECK_S=2 install tls --domain "$domain" --tls internal
ca="$home/caddy/data/pki/authorities/local/root.crt"
check "it printed where the CA certificate is" said "CA cert: +$ca"
check "Caddy runs as caddy (Debian's user), not tally" test "$(ps -o user:32= -p "$(cat "$home/run/caddy.child.pid")" | tr -d ' ')" == caddy
check "the CA certificate exists" test -s "$ca"
https_code() { curl -s -o /dev/null -m 10 -w '%{http_code}' --cacert "$ca" "$@" || true; }
check "curl --cacert reaches /healthz over HTTPS" test "$(https_code "https://$domain/healthz")" == 200
check "... and the dashboard" test "$(https_code "https://$domain/dashboard/")" == 200
check "the certificate is not trusted without the CA" test "$(curl -s -o /dev/null -m 10 -w '%{http_code}' "https://$domain/healthz" || true)" == 000
check "tally.env: public URLs are https:// and wss://" \
  test "$(env_value TALLY_PUBLIC_URL) $(env_value LIVEKIT_PUBLIC_URL)" == "https://$domain wss://$domain"
listeners_of() { ss -Htln "sport = :$1" | awk '{print $4}' | sort -u | tr '\n' ' '; }
check "the API listens on 127.0.0.1 only" test "$(listeners_of 8080)" == "127.0.0.1:8080 "
check "livekit-server's HTTP port listens on 127.0.0.1 only" test "$(listeners_of 7880)" == "127.0.0.1:7880 "
check "the API is not reachable on the node's address" test "$(http_code "http://$node_ip:8080/healthz")" == 000
metrics_token="$(env_value TALLY_METRICS_TOKEN)"
check "tally.env has a TALLY_METRICS_TOKEN" test "${#metrics_token}" -ge 16
check "/metrics through the proxy without the token: 401" test "$(https_code "https://$domain/metrics")" == 401
check "/metrics with the token: 200" test "$(https_code -H "Authorization: Bearer $metrics_token" "https://$domain/metrics")" == 200
# Failed sign-ins are limited per client address (TALLY_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, 30):
# behind Caddy that is the client's address, not the proxy's loopback one.
bad_key=(-H "Authorization: Bearer tk_not_a_key")
for _ in $(seq 1 30); do https_code "${bad_key[@]}" "https://$domain/v1/apps" >/dev/null; done
check "30 failed sign-ins through the proxy, then the 31st: 429" test "$(https_code "${bad_key[@]}" "https://$domain/v1/apps")" == 429
check "... naming client.auth_failures, with Retry-After" sh -c \
  "curl -s -i -m 10 --cacert '$ca' -H 'Authorization: Bearer tk_not_a_key' 'https://$domain/v1/apps' | grep -qi '^retry-after: [1-9]' &&
   curl -s -m 10 --cacert '$ca' -H 'Authorization: Bearer tk_not_a_key' 'https://$domain/v1/apps' | grep -q '\"resource\":\"client.auth_failures\"'"
check "the admin key from that address still works" test "$(https_code -H "Authorization: Bearer $(cat "$home/admin.key")" "https://$domain/v1/apps")" == 200
check "another address (loopback, not through the proxy) still gets 401" \
  test "$(http_code "${bad_key[@]}" "http://127.0.0.1:8080/v1/apps")" == 401
# The LiveKit SDK (Rust) trusts the system bundle plus the CA; Node's fetch NODE_EXTRA_CA_CERTS.
bundle="$home.bundle.pem"
cat /etc/ssl/certs/ca-certificates.crt "$ca" >"$bundle"
if ! joined="$(SSL_CERT_FILE="$bundle" NODE_EXTRA_CA_CERTS="$ca" node --import @swc-node/register/esm-register \
  scripts/install-hosts/join-over-tls.ts "https://$domain" "$home/admin.key" 2>&1)"; then
  fail_after "$joined" "a LiveKit client could not join over wss:// through the proxy"
fi
rm -f "$bundle"
say "joined: $(tail -n1 <<<"$joined")"
say "ok: a real LiveKit client (@livekit/rtc-node) joined a stream over wss://$domain"

# TURN over TLS beside Caddy: coturn on 5349 with Caddy's certificate for the domain.
check "the summary lists TCP 5349 for TURN over TLS" said "tcp 5349 +TURN relay over TLS \(turns:$domain:5349\)"
check "coturn runs as turnserver (Debian's user)" test "$(ps -o user:32= -p "$(cat "$home/run/turn.child.pid")" | tr -d ' ')" == turnserver
check "livekit.yaml hands clients turns:$domain:5349" yaml_has "^    - host: $domain\$"
if ! relayed="$(NODE_EXTRA_CA_CERTS="$ca" node --import @swc-node/register/esm-register \
  scripts/install-hosts/turn-over-tls.ts "https://$domain" "$home/admin.key" "$ca" "$node_ip" 2>&1)"; then
  fail_after "$relayed" "a client trusting only Caddy's CA could not get a TURN relay over TLS on the announced port"
fi
say "turn: $(tail -n1 <<<"$relayed")"
say "ok: LiveKit announced turns:$domain:5349; a client trusting only the CA got a UDP relay there on $node_ip (towards it, nowhere else; no TCP relay); public roots alone were refused"
# A renewal: Caddy's certificate for the domain changes in its storage (here: replaced by hand).
presented_fingerprint() {
  openssl s_client -connect "$node_ip:5349" -servername "$domain" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256 2>/dev/null
}
presents() { [[ "$(presented_fingerprint)" == "$1" ]]; }
caddy_crt="$(find "$home/caddy/data/certificates" -path "*/$domain/$domain.crt" | head -n1)"
check "Caddy stored a certificate for $domain" test -s "$caddy_crt"
check "coturn presents that certificate" test "$(presented_fingerprint)" == "$(openssl x509 -noout -fingerprint -sha256 -in "$caddy_crt")"
renew="$home.renew"
mkdir -p "$renew"
cp -p "$caddy_crt" "${caddy_crt%.crt}.key" "$renew/"
turn_pid="$(cat "$home/run/turn.child.pid")"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$domain" \
  -addext "subjectAltName=DNS:$domain" -keyout "$renew/new.key" -out "$renew/new.crt" 2>/dev/null
cat "$renew/new.key" >"${caddy_crt%.crt}.key"
cat "$renew/new.crt" >"$caddy_crt"
renewed="$(openssl x509 -noout -fingerprint -sha256 -in "$renew/new.crt")"
check "a renewed certificate reaches coturn" eventually 60 presents "$renewed"
check "... without restarting it" test "$(cat "$home/run/turn.child.pid")" == "$turn_pid"
# The copier logs once coturn has been told, which may be just after coturn presents the new certificate.
check "... and the copier said so" eventually 10 grep -q "certificate for $domain changed .*coturn reloaded it" "$home/log/turn-cert.log"
cat "$renew/$(basename "${caddy_crt%.crt}.key")" >"${caddy_crt%.crt}.key"
cat "$renew/$(basename "$caddy_crt")" >"$caddy_crt"
check "Caddy's own certificate is back in coturn" eventually 60 presents "$(openssl x509 -noout -fingerprint -sha256 -in "$caddy_crt")"
rm -rf "$renew"
# The operator lists a joined media node's address (TALLY_TURN_ALLOWED_PEERS) and re-runs install.sh.
joined_ip=10.234.0.9
TALLY_TURN_ALLOWED_PEERS="$joined_ip" install tls-rerun
check "a re-run remembers the domain" test "$(https_code "https://$domain/healthz")" == 200
check "... and TURN over TLS, with its secret: coturn was left running" test "$(cat "$home/run/turn.child.pid")" == "$turn_pid"
relays_to_joined() {
  NODE_EXTRA_CA_CERTS="$ca" node --import @swc-node/register/esm-register \
    scripts/install-hosts/turn-over-tls.ts "https://$domain" "$home/admin.key" "$ca" "$node_ip" "$joined_ip" >"$home.relayed" 2>&1
}
check "... and relays to the joined node $joined_ip now, without a restart" eventually 60 relays_to_joined
say "turn: $(tail -n1 "$home.relayed")"
rm -f "$home.relayed"
check "... still the same coturn" test "$(cat "$home/run/turn.child.pid")" == "$turn_pid"
# Joined media nodes are handed the same TURN/TLS server (POST /v1/nodes/join reads these), and
# coturn relays to the addresses of those the operator lists.
check "tally.env hands joined media nodes turns:$domain:5349 with coturn's secret" test \
  "$(env_value TALLY_CLUSTER_TURN_HOST):$(env_value TALLY_CLUSTER_TURN_PORT):$(env_value TALLY_CLUSTER_TURN_SECRET)" == "$domain:5349:$(cat "$home/turn/auth-secret")"
check "... and a re-run remembers TALLY_TURN_ALLOWED_PEERS" test "$(env_value TALLY_TURN_ALLOWED_PEERS)" == "$joined_ip"

# 7. Networks that pass only TCP 443: --turn-address puts coturn on 443 of a second address of
# the host, under the name turn.DOMAIN (Caddy's certificate for it); Caddy keeps 443 of the others.
# A browser whose firewall passes only TCP 443 (UDP dropped) publishes, views and records through it.
turn_ip=10.234.0.2
turn_host="turn.$domain"
ip addr add "$turn_ip/24" dev hosts0
echo "$turn_ip $turn_host" >>"$hosts"
install turn-443 --turn-address "$turn_ip"
check "the summary lists tcp 443 on $turn_ip for TURN over TLS" said "tcp 443 on $turn_ip +TURN relay over TLS \(turns:$turn_host:443\)"
check "... and says $turn_host must resolve to $turn_ip" said "DNS: $turn_host must resolve to $turn_ip"
listener_users() { ss -Htlnp "sport = :$1" | awk '{print $4, $6}' | sed -E 's/users:\(\("([^"]+)".*/\1/' | sort -u | tr '\n' ' '; }
check "coturn alone listens on $turn_ip:443, Caddy on the other addresses only" \
  bash -c "ss -Htlnp 'sport = :443' | grep -q '$turn_ip:443 .*turnserver' && ! ss -Htlnp 'sport = :443' | grep -v '$turn_ip:443' | grep -q turnserver &&
    ! ss -Htln 'sport = :443' | awk '{print \$4}' | grep -qE '^(0\.0\.0\.0|\*|\[::\]):443$'"
say "listeners on 443: $(listener_users 443)"
check "coturn no longer listens on 5349" test -z "$(ss -Htln 'sport = :5349')"
check "HTTPS still answers on $domain" test "$(https_code "https://$domain/healthz")" == 200
check "livekit.yaml hands clients turns:$turn_host:443" bash -c "grep -qE '^    - host: $turn_host\$' '$home/livekit.yaml' && grep -qE '^      port: 443\$' '$home/livekit.yaml'"
check "tally.env hands joined media nodes turns:$turn_host:443" test "$(env_value TALLY_CLUSTER_TURN_HOST):$(env_value TALLY_CLUSTER_TURN_PORT)" == "$turn_host:443"
check "coturn presents Caddy's certificate for $turn_host on $turn_ip:443" bash -c \
  "openssl s_client -connect '$turn_ip:443' -servername '$turn_host' -CAfile '$ca' -verify_hostname '$turn_host' -verify_return_error </dev/null 2>&1 | grep -q 'Verify return code: 0'"
browse_start=$SECONDS
if ! browsed="$(NODE_EXTRA_CA_CERTS="$ca" node --import @swc-node/register/esm-register \
  scripts/install-hosts/turn-443-browser.ts "https://$domain" "$home/admin.key" "$ca" "$node_ip" "$turn_host" "$turn_ip" 2>&1)"; then
  fail_after "$browsed" "a browser whose network passes only TCP 443 could not publish, view and record through TURN over TLS on $turn_ip:443"
fi
grep '^\[turn-443\]' <<<"$browsed" | while read -r line; do say "$line"; done
say "turn-443: $(tail -n1 <<<"$browsed") (in $((SECONDS - browse_start))s)"
say "ok: behind a firewall passing only TCP 443, Chromium published and viewed through turns:$turn_host:443 (relay candidates over TLS) and the recording completed"
# WHIP publishers are handed the same TURN server, in the answer's Link headers (minted by ingress).
whip_start=$SECONDS
if ! whipped="$(NODE_EXTRA_CA_CERTS="$ca" node --import @swc-node/register/esm-register \
  scripts/install-hosts/whip-over-turn.ts "https://$domain" "$home/admin.key" "$ca" "$node_ip" "$turn_host" "$turn_ip" 2>&1)"; then
  fail_after "$whipped" "a WHIP publisher whose network drops UDP could not publish and record through TURN over TLS on $turn_ip:443"
fi
grep '^\[whip-turn\]' <<<"$whipped" | while read -r line; do say "$line"; done
say "whip-turn: $(tail -n1 <<<"$whipped") (in $((SECONDS - whip_start))s)"
say "ok: a WHIP publisher whose network drops UDP took turns:$turn_host:443 from the answer's Link headers, published through it and the recording completed"
# This host has two addresses now ($node_ip, $turn_ip). LiveKit maps each to node_ip and backs the one
# candidate it announces with whichever it lists first, in no fixed order: ingress (started for the
# WHIP publisher above, after $turn_ip was added) and livekit-server bind their UDP port on
# $node_ip alone, so that candidate is always the socket media reaches.
udp_bound() { ss -Hulnp "sport = :$1" | awk '{print $4}' | sort -u | tr '\n' ' '; }
check "livekit.yaml binds the UDP media port on $node_ip only" bash -c \
  "grep -qE '^  ips:\$' '$home/livekit.yaml' && grep -qE '^      - ${node_ip//./\\.}/32\$' '$home/livekit.yaml'"
check "ingress binds WHIP's UDP port on $node_ip only, not on $turn_ip (bound: $(udp_bound 7885))" test "$(udp_bound 7885)" == "$node_ip:7885 "
check "livekit-server binds its UDP port on $node_ip only (bound: $(udp_bound 7882))" test "$(udp_bound 7882)" == "$node_ip:7882 "
