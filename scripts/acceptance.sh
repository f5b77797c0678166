#!/usr/bin/env bash
# The acceptance suite: installs Tally with ./install.sh exactly as the README tells a user to,
# drives the installed platform through its public surface only (test/acceptance: HTTP API, real
# LiveKit clients, ffmpeg, Chromium, schemathesis), then runs ./install.sh again on the same home
# (an upgrade) and the same suite again. Then, on a new home, once more with --object-store
# (recordings go to the object store install.sh runs on the node) and the object-store spec, and a
# last time without the flag, which must keep the store's data and keys. Naming specs runs only
# those (the object-store run only when its spec is among them).
#
# The install lives in a network namespace this script creates, with one veth address as the
# node's media address (WebRTC clients ignore loopback candidates); nothing routes out of it, and
# every port inside it is free, so install.sh runs with its default ports. Needs root (as
# install.sh does) and the provisioned tools (scripts/provision.sh; npm test runs it first).
#
# Usage: bash scripts/acceptance.sh [vitest args]     (TALLY_KEEP_HOME=1 keeps the home)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/provision/lib.sh
source scripts/provision/lib.sh

INT_NAME=acceptance
# shellcheck source=scripts/int-lib.sh
source scripts/int-lib.sh
[[ "$(id -u)" -eq 0 ]] || fail "must run as root (install.sh does)"
bash scripts/provision/schemathesis.sh | sed 's/^/[acceptance] /'

# The services run the checkout as the unprivileged user tally; a private checkout is tested from a copy.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -r "$PWD/apps/api/src/main.ts" 2>/dev/null; then
  copy="$(mktemp -d /tmp/tally-accept-src.XXXXXX)"
  chmod 755 "$copy"
  say "$PWD is private; testing from a copy in $copy"
  cp -a "$PWD/." "$copy/"
  cd "$copy"
fi

ns="tally-accept-$$"
home="$(mktemp -d /tmp/tally-accept.XXXXXX)"
node_ip=""

cleanup() {
  local rc=$?
  if [[ -f "$home/run/mode" ]]; then
    ./install.sh --stop --home "$home" >/dev/null 2>&1 || say "cleanup: --stop failed"
  fi
  ip netns del "$ns" 2>/dev/null || true
  print_logs_on_failure "$rc" 40
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then say "kept $home"; else rm -rf "$home" "$home.suite.out"; fi
  if [[ -n "${copy:-}" ]]; then rm -rf "$copy"; fi
  say_outcome "$rc"
}
trap cleanup EXIT

# A namespace with loopback and one veth pair whose address is the node's media address.
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add tally0 type veth peer name tally1
node_ip="10.234.$((RANDOM % 250 + 1)).1"
ip -n "$ns" addr add "$node_ip/24" dev tally0
ip -n "$ns" link set tally0 up
ip -n "$ns" link set tally1 up
in_ns() { nsenter --net="/run/netns/$ns" "$@"; }

# install LABEL: the README's install command for an offline host, with this namespace's address
# (also the cluster address joined nodes reach).
run_install() {
  local label="$1" start=$SECONDS out="$home.install.$1.log"
  shift
  if ! in_ns ./install.sh --home "$home" --node-ip "$node_ip" --cluster-bind "$node_ip" --offline --no-systemd "$@" >"$out" 2>&1; then
    cat "$out" >&2
    fail "./install.sh ($label) exited non-zero"
  fi
  say "./install.sh ($label) took $((SECONDS - start))s"
  rm -f "$out"
}

# suite LABEL [vitest args]: the acceptance project (with TALLY_ACCEPTANCE_OBJECT_STORE=1, only the
# object-store spec; without, every other spec).
suite() {
  local label="$1" start=$SECONDS object_store=0
  shift
  [[ "$label" != object-store ]] || object_store=1
  # --passWithNoTests: a run filtered to the object-store spec leaves the first two with none.
  if ! in_ns env TALLY_ACCEPTANCE_OBJECT_STORE="$object_store" TALLY_ACCEPTANCE_HOME="$home" TALLY_TEST_NODE_IP="$node_ip" TALLY_TOOLS_DIR="$TALLY_TOOLS_DIR" \
    PATH="$TALLY_BIN_DIR:$PATH" npx vitest run --project acceptance --passWithNoTests "$@" 2>&1 | tee "$home.suite.out"; then
    local said
    said="$(sed 's/\x1b\[[0-9;]*m//g' "$home.suite.out")"
    # The failed tests, then what each threw: a CI log is read from its tail, where this line ends up.
    fail "the acceptance suite failed ($label install): $(grep -E '^ *(FAIL|×) ' <<<"$said" | sort -u | head -n 8 | tr -s '\n ' ' ')" \
      "-- it said: $(grep -E '^[A-Za-z]*Error: ' <<<"$said" | head -n 4 | cut -c1-1500 | tr -s '\n' ' ')"
  fi
  rm -f "$home.suite.out"
  say "acceptance suite on the $label install passed in $((SECONDS - start))s"
}

# Settings an operator adds to tally.env (install.sh keeps them). The suite's webhook receiver (an
# app's endpoint) listens on this node's loopback, a range deliveries refuse unless the operator
# allows it (docs/webhooks.md).
# And the node's budget is the capacity model's reference origin (8 vCPU / 8 GB, as the operator
# override TALLY_NODE_* states it), not what the agent measures on a 2-core CI host: there an RTMP
# transcode does not fit, and the derived app.ingresses cap is 0.
# A stream nobody joins ends after TALLY_STREAM_JOIN_TIMEOUT_S, shortened so the suite can watch one end.
operator_settings() {
  printf '%s\n' TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8 TALLY_NODE_CPU_MILLICORES=8000 TALLY_NODE_RAM_MB=8192 \
    TALLY_NODE_NIC_MBPS=1000 TALLY_STREAM_JOIN_TIMEOUT_S=30 >"$home/tally.env"
  chmod 600 "$home/tally.env"
}
operator_settings

# new_home: stops the install in $home and starts over in a new, empty home (same namespace and address).
new_home() {
  ./install.sh --stop --home "$home" >/dev/null 2>&1 || say "--stop of $home failed"
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then say "kept $home"; else rm -rf "$home"; fi
  home="$(mktemp -d /tmp/tally-accept.XXXXXX)"
  operator_settings
  say "new home $home"
}

say "home $home, namespace $ns, media address $node_ip"
# What --object-store keeps across re-runs: the keys (tally.env's and the root key) and the objects.
object_store_keys() {
  grep -E '^TALLY_(S3_[A-Z_]+|OBJECT_STORE[A-Z_]*)=' "$home/tally.env"
  cat "$home/object-store.env"
}
stored_objects() { (cd "$home/object-store/data" && find tally-recordings -type f | sort); }

run_install first
suite first "$@"
run_install upgrade
suite upgraded "$@"
# The object-store run installs on a home of its own: --object-store from the first install, as an
# operator who wants recordings in a bucket runs it.
if [[ $# -eq 0 || "$*" == *object-store* ]]; then
  new_home
  run_install object-store --object-store
  suite object-store
  keys="$(object_store_keys)" objects="$(stored_objects)"
  [[ -n "$objects" ]] || fail "the bucket on disk holds no recordings"
  # An existing bucket given with a key it refuses: install.sh stops before writing tally.env,
  # naming the call that failed and the server's answer.
  env_before="$(cat "$home/tally.env")"
  if refused="$(in_ns env TALLY_S3_ACCESS_KEY=tally-origin TALLY_S3_SECRET_KEY=not-the-key ./install.sh --home "$home" \
    --node-ip "$node_ip" --cluster-bind "$node_ip" --offline --no-systemd --s3-bucket tally-recordings \
    --s3-endpoint "http://$node_ip:$(sed -n 's/^TALLY_OBJECT_STORE_PORT=//p' "$home/tally.env")" 2>&1)"; then
    fail "./install.sh --s3-* with a wrong key exited 0"
  fi
  [[ "$refused" == *"ERROR: recordings cannot be stored in s3://tally-recordings"*"PUT s3://tally-recordings/"*"SignatureDoesNotMatch (HTTP 403)"* ]] ||
    fail "./install.sh --s3-* with a wrong key did not say what failed: $(tail -n 3 <<<"$refused")"
  [[ "$(cat "$home/tally.env")" == "$env_before" ]] || fail "./install.sh --s3-* with a wrong key changed tally.env"
  say "./install.sh --s3-* with a wrong key stopped, naming the refused PUT"
  run_install object-store-rerun
  [[ "$(object_store_keys)" == "$keys" ]] || fail "a re-run of ./install.sh changed the object store's keys"
  lost="$(comm -23 <(printf '%s\n' "$objects") <(stored_objects))"
  [[ -z "$lost" ]] || fail "a re-run of ./install.sh lost objects: $lost"
  say "a re-run kept the object store's keys and its $(wc -l <<<"$objects") objects"
fi
