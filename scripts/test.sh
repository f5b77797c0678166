#!/usr/bin/env bash
# npm test: provisions what the tests need (the pinned Node.js and Go, system packages,
# livekit-server, lk), then runs every vitest project inside a throwaway network namespace, on the
# pinned Node.js (the tools' runtimes/node-*/bin first on PATH), whatever node the host has.
#
# WebRTC clients here ignore loopback ICE candidates, so media needs a
# non-loopback address; a namespace with a veth pair gives one that never
# routes anywhere. Postgres, Redis and the API all live on 127.0.0.1 inside it.
#
# Environment: TALLY_SKIP_PROVISION=1 skips provisioning, TALLY_SKIP_INSTALL_TEST=1 the install.sh
# test, TALLY_SKIP_ACCEPTANCE=1 the acceptance suite on the installed platform (also skipped when
# arguments are given); extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=scripts/provision/lib.sh
source scripts/provision/lib.sh
use_tools_node
# Nx (the dashboard's build, ESLint's project graph): no background daemon, no Nx Cloud.
export NX_DAEMON=false NX_NO_CLOUD=true
echo "[test] node $(node --version) at $(command -v node)"
if [[ "${TALLY_SKIP_PROVISION:-0}" != 1 ]]; then
  bash scripts/provision.sh
fi

[[ -d node_modules ]] || npm install --no-audit --no-fund
bash scripts/db-generate.sh
# The join tests run install.sh on hosts without a route out, where its `npm install --omit=dev` in
# dist/ can only keep what is there: dist/'s production install is made here, with the registry in
# reach, when no install made it yet (the install tests below do; a run that skips them may not).
if [[ ! -d dist/node_modules ]]; then
  node scripts/build.mjs
  (cd dist && npm install --omit=dev --no-audit --no-fund --loglevel=error)
fi

# install.sh, the main way Tally is installed, end to end on this host (loopback only).
if [[ "${TALLY_SKIP_INSTALL_TEST:-0}" != 1 ]]; then
  # Its runtimes: the pins for both architectures, a tampered download refused.
  bash scripts/runtimes.int.sh
  bash scripts/install.int.sh
  # ... and on a host without a route to the internet (no STUN): scripts/install-hosts.int.sh
  bash scripts/install-hosts.int.sh
  # ... and as three hosts whose primary Redis is killed with media running (Sentinel failover).
  bash scripts/install-failover.int.sh
fi
# What install.sh installs, proven feature by feature through its public surface, before and after an upgrade.
if [[ "${TALLY_SKIP_ACCEPTANCE:-0}" != 1 && $# -eq 0 ]]; then
  bash scripts/acceptance.sh
fi

ns="tally-test-$$"
node_ip="10.231.0.1"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add tally0 type veth peer name tally1
ip -n "$ns" addr add "$node_ip/24" dev tally0
ip -n "$ns" link set tally0 up
ip -n "$ns" link set tally1 up

echo "[test] running vitest in network namespace $ns (media address $node_ip)"
# nsenter, not `ip netns exec`: the latter mounts a fresh /sys for the namespace, which hides the
# host's cgroup mounts that dockerd and the native worker runtime's limits need.
nsenter --net="/run/netns/$ns" env TALLY_TEST_NODE_IP="$node_ip" TALLY_TOOLS_DIR="$TALLY_TOOLS_DIR" \
  PATH="$TALLY_BIN_DIR:$PATH" npx vitest run --project unit --project integration "$@"
