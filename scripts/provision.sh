#!/usr/bin/env bash
# Provisions a Tally dev/CI host: the pinned runtimes (Node.js 24, Go; runtimes.sh), system
# packages (apt), the pinned LiveKit binaries (livekit-server, lk, egress, ingress), the object store
# (versitygw) and the test tools (schemathesis).
# Idempotent; a second run takes seconds.
#
# Usage: bash scripts/provision.sh [--skip-apt] [--force-rebuild] [--platform]
#   --skip-apt        do not check/install apt packages (hosts known to have them)
#   --force-rebuild   rebuild livekit-server, lk and egress even if their stamps match
#   --platform        only what an installed platform runs (install.sh): no lk, worker images
#                     or schemathesis, which are test tools
# Afterwards put the tools on PATH:  export PATH="$TALLY_TOOLS_DIR/bin:$TALLY_NODE_DIR/bin:$PATH"
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/provision/lib.sh"

skip_apt=0
platform_only=0
for arg in "$@"; do
  case "$arg" in
    --skip-apt) skip_apt=1 ;;
    --platform) platform_only=1 ;;
    --force-rebuild) export TALLY_FORCE_REBUILD=1 ;;
    -h | --help)
      sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument: $arg (see --help)" ;;
  esac
done

total_start=$SECONDS
bash "$TALLY_PROVISION_DIR/runtimes.sh"
skip_apt_arg=()
if [[ "$skip_apt" == 1 ]]; then
  skip_apt_arg=(--skip-apt)
  log "system packages: skipped (--skip-apt)"
else
  bash "$TALLY_PROVISION_DIR/system.sh"
fi
if [[ "$platform_only" == 1 ]]; then
  bash "$TALLY_PROVISION_DIR/livekit.sh" livekit-server
else
  bash "$TALLY_PROVISION_DIR/livekit.sh"
fi
bash "$TALLY_PROVISION_DIR/egress.sh" "${skip_apt_arg[@]}"
bash "$TALLY_PROVISION_DIR/ingress.sh" "${skip_apt_arg[@]}"
if [[ "$platform_only" == 0 ]]; then
  # The object store the tests run (./install.sh builds it only for --object-store: scripts/install/objects.sh).
  bash "$TALLY_PROVISION_DIR/object-store.sh"
  bash "$TALLY_PROVISION_DIR/images.sh"
  bash "$TALLY_PROVISION_DIR/schemathesis.sh"
fi

log "done in $(fmt_duration $((SECONDS - total_start)))"
echo "TALLY_TOOLS_DIR=$TALLY_TOOLS_DIR"
echo "node: $("$TALLY_NODE_DIR/bin/node" --version) at $TALLY_NODE_DIR/bin, go: $("$TALLY_GO_DIR/bin/go" env GOVERSION) at $TALLY_GO_DIR/bin"
echo "livekit-server: $("$TALLY_BIN_DIR/livekit-server" --version 2>&1)"
[[ "$platform_only" == 1 ]] || echo "lk: $("$TALLY_BIN_DIR/lk" --version 2>&1)"
echo "egress: $("$TALLY_BIN_DIR/egress" --version 2>&1)"
