#!/usr/bin/env bash
# Builds the pinned LiveKit binaries into $TALLY_TOOLS_DIR/bin:
#   livekit-server  v1.13.5   (go install of the upstream module, unmodified)
#   lk              v2.18.2   (livekit-cli, via the wrapper module in go/lk, -tags portaudio_system)
# A build is skipped when the binary exists and its stamp records the same version + recipe.
# TALLY_FORCE_REBUILD=1 forces a rebuild (still fast with the warm Go cache).
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIVEKIT_SERVER_VERSION="v1.13.5"
LK_VERSION="v2.18.2"
LK_WRAPPER_DIR="$TALLY_PROVISION_DIR/go/lk"

mkdir -p "$TALLY_BIN_DIR" "$TALLY_STAMP_DIR" "$TALLY_TOOLS_DIR/src"

# check_binary_version BIN VERSION: `BIN --version` must mention VERSION (without the v).
check_binary_version() {
  local out
  out="$("$1" --version 2>&1 || true)"
  [[ "$out" == *"${2#v}"* ]] || die "$1 --version printed '$out', expected ${2#v}"
}

build_livekit_server() {
  local name=livekit-server stamp="livekit-server $LIVEKIT_SERVER_VERSION recipe=1"
  if stamp_matches "$name" "$stamp"; then
    log "$name $LIVEKIT_SERVER_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  log "building $name $LIVEKIT_SERVER_VERSION ..."
  local start=$SECONDS gobin="$TALLY_TOOLS_DIR/src/livekit-server-gobin"
  rm -rf "$gobin"
  mkdir -p "$gobin"
  # Run outside any module so `go install pkg@version` uses the module's own go.mod/go.sum.
  (cd "$TALLY_TOOLS_DIR/src" && GOBIN="$gobin" go install -trimpath \
    "github.com/livekit/livekit-server/cmd/server@$LIVEKIT_SERVER_VERSION")
  [[ -x "$gobin/server" ]] || die "go install produced no 'server' binary in $gobin"
  mv -f "$gobin/server" "$TALLY_BIN_DIR/$name"
  rm -rf "$gobin"
  check_binary_version "$TALLY_BIN_DIR/$name" "$LIVEKIT_SERVER_VERSION"
  stamp_write "$name" "$stamp"
  log "built $name $LIVEKIT_SERVER_VERSION in $(fmt_duration $((SECONDS - start)))"
}

build_lk() {
  local name=lk recipe
  recipe="$(hash_files "$LK_WRAPPER_DIR/go.mod" "$LK_WRAPPER_DIR/go.sum" "$LK_WRAPPER_DIR/tools.go")"
  local stamp="lk $LK_VERSION recipe=$recipe"
  if stamp_matches "$name" "$stamp"; then
    log "$name $LK_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  pkg-config --exists portaudio-2.0 ||
    die "pkg-config cannot find portaudio-2.0: run scripts/provision/system.sh (needs portaudio19-dev libasound2-dev pkg-config)"
  grep -q "github.com/livekit/livekit-cli/v2 $LK_VERSION\$" "$LK_WRAPPER_DIR/go.mod" ||
    die "$LK_WRAPPER_DIR/go.mod does not require livekit-cli $LK_VERSION"
  log "building $name (livekit-cli) $LK_VERSION ..."
  local start=$SECONDS work="$TALLY_TOOLS_DIR/src/lk"
  # Build from a scratch copy so the repo's wrapper files are never rewritten by the go tool.
  rm -rf "$work"
  mkdir -p "$work"
  cp "$LK_WRAPPER_DIR/go.mod" "$LK_WRAPPER_DIR/go.sum" "$LK_WRAPPER_DIR/tools.go" "$work/"
  (cd "$work" && go build -mod=readonly -trimpath -tags portaudio_system \
    -o "$TALLY_BIN_DIR/$name.tmp" github.com/livekit/livekit-cli/v2/cmd/lk)
  mv -f "$TALLY_BIN_DIR/$name.tmp" "$TALLY_BIN_DIR/$name"
  check_binary_version "$TALLY_BIN_DIR/$name" "$LK_VERSION"
  stamp_write "$name" "$stamp"
  log "built $name $LK_VERSION in $(fmt_duration $((SECONDS - start)))"
}

build_livekit_server
build_lk
log "livekit binaries: done ($TALLY_BIN_DIR)"
