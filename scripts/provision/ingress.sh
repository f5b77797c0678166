#!/usr/bin/env bash
# Provisions LiveKit ingress v1.5.0 into $TALLY_TOOLS_DIR/bin/ingress (next to egress):
#   - the Debian GStreamer 1.22 set it links against and runs with (shared with egress),
#     installed only when missing
#   - the binary, built through the wrapper module in go/ingress (the module proxy here does not
#     serve `go install` for it; the wrapper repeats the module's own go-gst replace)
# A build is skipped when the binary exists and its stamp records the same version + recipe.
# TALLY_FORCE_REBUILD=1 forces a rebuild (seconds with the warm Go cache).
#
# Usage: bash scripts/provision/ingress.sh [--skip-apt]
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INGRESS_VERSION="v1.5.0"
INGRESS_MODULE="github.com/livekit/ingress"
INGRESS_WRAPPER_DIR="$TALLY_PROVISION_DIR/go/ingress"
# Bump when the build steps below change in a way the wrapper files do not show.
INGRESS_RECIPE=1

INGRESS_APT_PACKAGES=(
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev libglib2.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
  gstreamer1.0-libav gstreamer1.0-tools gstreamer1.0-x
)

skip_apt=0
for arg in "$@"; do
  case "$arg" in
    --skip-apt) skip_apt=1 ;;
    *) die "ingress.sh: unknown argument: $arg" ;;
  esac
done

mkdir -p "$TALLY_BIN_DIR" "$TALLY_STAMP_DIR" "$TALLY_TOOLS_DIR/src"

build_ingress() {
  local name=ingress recipe
  recipe="$(hash_files "$INGRESS_WRAPPER_DIR/go.mod" "$INGRESS_WRAPPER_DIR/go.sum" "$INGRESS_WRAPPER_DIR/tools.go")"
  local stamp="ingress $INGRESS_VERSION recipe=$recipe.$INGRESS_RECIPE"
  if stamp_matches "$name" "$stamp"; then
    log "$name $INGRESS_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  pkg-config --exists gstreamer-1.0 gstreamer-app-1.0 ||
    die "pkg-config cannot find GStreamer 1.x development files: run this script without --skip-apt"
  grep -q "$INGRESS_MODULE $INGRESS_VERSION\$" "$INGRESS_WRAPPER_DIR/go.mod" ||
    die "$INGRESS_WRAPPER_DIR/go.mod does not require ingress $INGRESS_VERSION"
  log "building $name $INGRESS_VERSION ..."
  local start=$SECONDS work="$TALLY_TOOLS_DIR/src/ingress"
  # Scratch copy of the wrapper: the repo is never written to.
  rm -rf "$work"
  mkdir -p "$work"
  cp "$INGRESS_WRAPPER_DIR/go.mod" "$INGRESS_WRAPPER_DIR/go.sum" "$INGRESS_WRAPPER_DIR/tools.go" "$work/"
  (cd "$work" && go build -mod=readonly -trimpath -o "$TALLY_BIN_DIR/$name.tmp" "$INGRESS_MODULE/cmd/server")
  mv -f "$TALLY_BIN_DIR/$name.tmp" "$TALLY_BIN_DIR/$name"
  rm -rf "$work"
  local out
  out="$("$TALLY_BIN_DIR/$name" --version 2>&1 || true)"
  [[ "$out" == *"${INGRESS_VERSION#v}"* ]] || die "$TALLY_BIN_DIR/$name --version printed '$out', expected ${INGRESS_VERSION#v}"
  stamp_write "$name" "$stamp"
  log "built $name $INGRESS_VERSION in $(fmt_duration $((SECONDS - start)))"
}

ensure_apt_packages ingress "$skip_apt" "${INGRESS_APT_PACKAGES[@]}"
build_ingress
log "ingress: done ($TALLY_BIN_DIR/ingress)"
