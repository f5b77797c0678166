#!/usr/bin/env bash
# npm run bench:<name>: runs bench/<name>/main.ts inside a throwaway network namespace.
#
# WebRTC clients here ignore loopback ICE candidates, so media needs a non-loopback address; a
# namespace with a veth pair gives one that routes nowhere (as scripts/test.sh does for npm test).
# The api, worker and agent run from dist/ (built first) on the pinned Node.js. Extra arguments go to the benchmark. Needs root (ip netns) and the tools scripts/provision.sh builds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name="${1:?usage: bench/run.sh <name> [args]}"
shift
[[ -f "bench/$name/main.ts" ]] || { echo "no benchmark bench/$name/main.ts" >&2; exit 2; }

# shellcheck source=scripts/provision/lib.sh
source scripts/provision/lib.sh
# The pinned Node.js, as npm test uses: dist/*.js needs its APIs, whatever node the host has.
use_tools_node

ns="tally-bench-$$"
node_ip="10.232.0.1"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add tally0 type veth peer name tally1
ip -n "$ns" addr add "$node_ip/24" dev tally0
ip -n "$ns" link set tally0 up
ip -n "$ns" link set tally1 up

# The services run as production runs them: the bundles of npm run build (dist/*.js).
node scripts/build.mjs >&2

echo "[bench:$name] network namespace $ns (media address $node_ip)" >&2
# NODE_ENV=production keeps @livekit/rtc-node's debug log off stdout, where the result goes.
ip netns exec "$ns" env NODE_ENV=production TALLY_APP_RUNTIME=built TALLY_TEST_NODE_IP="$node_ip" TALLY_TOOLS_DIR="$TALLY_TOOLS_DIR" \
  PATH="$TALLY_BIN_DIR:$PATH" node --import @swc-node/register/esm-register "bench/$name/main.ts" "$@"
