#!/usr/bin/env bash
# The acceptance suite: installs Tally with ./install.sh exactly as the README tells a user to,
# drives the installed platform through its public surface only (test/acceptance: HTTP API, real
# LiveKit clients, ffmpeg, Chromium, schemathesis), then runs ./install.sh again on the same home
# (an upgrade) and the same suite again.
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

say() { printf '[acceptance] %s\n' "$*"; }
fail() {
  printf '[acceptance] FAIL: %s\n' "$*" >&2
  exit 1
}
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
  if [[ $rc -ne 0 && -d "$home/log" ]]; then
    local f
    for f in "$home"/log/*.log; do
      printf '[acceptance] ---- %s (last 40 lines)\n' "$f" >&2
      tail -n 40 "$f" >&2 || true
    done
  fi
  if [[ "${TALLY_KEEP_HOME:-0}" == 1 ]]; then say "kept $home"; else rm -rf "$home"; fi
  if [[ -n "${copy:-}" ]]; then rm -rf "$copy"; fi
  if [[ $rc -eq 0 ]]; then say "PASS"; else say "FAILED (exit $rc)"; fi
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
  local start=$SECONDS out="$home.install.$1.log"
  if ! in_ns ./install.sh --home "$home" --node-ip "$node_ip" --cluster-bind "$node_ip" --offline --no-systemd >"$out" 2>&1; then
    cat "$out" >&2
    fail "./install.sh ($1) exited non-zero"
  fi
  say "./install.sh ($1) took $((SECONDS - start))s"
  rm -f "$out"
}

suite() {
  local label="$1" start=$SECONDS
  shift
  in_ns env TALLY_ACCEPTANCE_HOME="$home" TALLY_TEST_NODE_IP="$node_ip" TALLY_TOOLS_DIR="$TALLY_TOOLS_DIR" \
    PATH="$TALLY_BIN_DIR:$PATH" npx vitest run --project acceptance "$@" || fail "the acceptance suite failed ($label install)"
  say "acceptance suite on the $label install passed in $((SECONDS - start))s"
}

# Settings an operator adds to tally.env (install.sh keeps them). The suite's webhook receiver (an
# app's endpoint) listens on this node's loopback, a range deliveries refuse unless the operator
# allows it (docs/webhooks.md).
# And the node's budget is the capacity model's reference origin (8 vCPU / 8 GB, as the operator
# override TALLY_NODE_* states it), not what the agent measures on a 2-core CI host: there an RTMP
# transcode does not fit, and the derived app.ingresses cap is 0.
# A stream nobody joins ends after TALLY_STREAM_JOIN_TIMEOUT_S, shortened so the suite can watch one end.
printf '%s\n' TALLY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8 TALLY_NODE_CPU_MILLICORES=8000 TALLY_NODE_RAM_MB=8192 \
  TALLY_NODE_NIC_MBPS=1000 TALLY_STREAM_JOIN_TIMEOUT_S=30 >"$home/tally.env"
chmod 600 "$home/tally.env"

say "home $home, namespace $ns, media address $node_ip"
run_install first
suite first "$@"
run_install upgrade
suite upgraded "$@"
