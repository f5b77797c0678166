#!/usr/bin/env bash
# Integration test of scripts/provision/runtimes.sh (the pinned Node.js and Go):
#   every pin (amd64 and arm64) matches what the npm registry and the Go module proxy serve;
#   a registry from ~/.npmrc and a proxy from GOPROXY are the ones used; a download whose bytes
#   differ from the pin is refused, and nothing is installed; the installed Node.js and Go run.
# Takes ~10 s here (about 370 MB of downloads).
#
# Usage: bash scripts/runtimes.int.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/provision/lib.sh
source scripts/provision/lib.sh

INT_NAME=runtimes.int
# shellcheck source=scripts/int-lib.sh
source scripts/int-lib.sh

work="$(mktemp -d /tmp/tally-runtimes.XXXXXX)"
# The installed go's HOME: go leaves a telemetry process behind that writes under it after go exits,
# so it lives outside $work, and neither removal may fail the test.
gohome="$(mktemp -d /tmp/tally-runtimes-gohome.XXXXXX)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work" 2>/dev/null || true
  rm -rf "$gohome" 2>/dev/null || true
}
trap cleanup EXIT

start=$SECONDS
check "every pin matches the registry's and the proxy's files (amd64, arm64)" \
  bash scripts/provision/runtimes.sh --check-pins
say "pins checked in $((SECONDS - start))s"

# A registry and a proxy serving altered files, at the paths the real ones use.
served="$work/served"
mkdir -p "$served/node-linux-$TALLY_NODE_ARCH/-" "$served/npm/-" "$served/golang.org/toolchain/@v"
head -c 4096 /dev/urandom >"$served/node-linux-$TALLY_NODE_ARCH/-/node-linux-$TALLY_NODE_ARCH-$TALLY_NODE_VERSION.tgz"
head -c 4096 /dev/urandom >"$served/npm/-/npm-$TALLY_NPM_VERSION.tgz"
head -c 4096 /dev/urandom >"$served/golang.org/toolchain/@v/v0.0.1-go$TALLY_GO_VERSION.linux-$TALLY_GO_ARCH.zip"
use_tools_node
# shellcheck disable=SC2016 # JavaScript
node -e '
  const { createServer } = require("node:http");
  const { readFile } = require("node:fs/promises");
  const root = process.argv[1];
  const server = createServer(async (req, res) => {
    const body = await readFile(root + decodeURIComponent(new URL(req.url, "http://x").pathname)).catch(() => null);
    res.writeHead(body ? 200 : 404).end(body ?? "");
  });
  server.listen(0, "127.0.0.1", () => console.log(server.address().port));
' "$served" >"$work/port" &
server_pid=$!
for _ in $(seq 50); do [[ -s "$work/port" ]] && break; sleep 0.1; done
port="$(cat "$work/port")"
[[ -n "$port" ]] || fail "the fake registry did not start"

# The registry comes from ~/.npmrc (as npm's would), the proxy from GOPROXY.
mkdir -p "$work/home"
printf 'registry=http://127.0.0.1:%s/\n' "$port" >"$work/home/.npmrc"
tampered() {
  env -u NPM_CONFIG_REGISTRY -u npm_config_registry HOME="$work/home" TALLY_TOOLS_DIR="$work/tools" \
    GOPROXY="off,http://127.0.0.1:$port" bash scripts/provision/runtimes.sh "$1" >"$work/out" 2>&1
}
refused() { # refused RUNTIME MESSAGE
  ! tampered "$1" && grep -qF "$2" "$work/out" && grep -qF "127.0.0.1:$port" "$work/out"
}
nothing_installed() {
  [[ -z "$(find "$work/tools/runtimes" -mindepth 1 -maxdepth 1 2>/dev/null)" ]]
}
check "an altered Node.js download (from ~/.npmrc's registry) is refused" refused node "integrity mismatch for"
check "... and nothing is installed" nothing_installed
check "an altered Go toolchain download (from GOPROXY's proxy) is refused" refused go "sha256 mismatch for"
check "... and nothing is installed" nothing_installed

# The real ones, into an empty tools directory, timed.
start=$SECONDS
TALLY_TOOLS_DIR="$work/tools" bash scripts/provision/runtimes.sh
say "Node.js and Go fetched, verified and installed in $((SECONDS - start))s"
check "the installed node is $TALLY_NODE_VERSION" \
  test "$(env -i "$work/tools/runtimes/${TALLY_NODE_DIR##*/}/bin/node" --version)" == "v$TALLY_NODE_VERSION"
check "its npm is $TALLY_NPM_VERSION" \
  test "$(env -i PATH="$work/tools/runtimes/${TALLY_NODE_DIR##*/}/bin:/usr/bin:/bin" npm --version 2>/dev/null)" == "$TALLY_NPM_VERSION"
check "the installed go is $TALLY_GO_VERSION" \
  test "$(env -i HOME="$gohome" "$work/tools/runtimes/${TALLY_GO_DIR##*/}/bin/go" env GOVERSION)" == "go$TALLY_GO_VERSION"
