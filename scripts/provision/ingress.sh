#!/usr/bin/env bash
# Provisions LiveKit ingress v1.5.0 into $TALLY_TOOLS_DIR/bin/ingress (next to egress):
#   - the Debian GStreamer 1.22 set it links against and runs with (shared with egress),
#     installed only when missing
#   - the binary, built through the wrapper module in go/ingress (the module proxy here does not
#     serve `go install` for it; the wrapper repeats the module's own go-gst replace) from a patched
#     copy of the module (the patches in go/ingress/patches, applied in name order, see apply_patches)
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
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev libglib2.0-dev patch
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

# apply_patches MODULE_DIR: the module's own source changes, unified diffs made from the module's
# root (`a/` and `b/` prefixes) in go/ingress/patches. Each must apply exactly, without fuzz, or the
# module changed under us; they are part of the build's stamp.
#   whip-ice-servers.patch: the WHIP endpoint answers an offer with one `Link: <turns:...>;
#     rel="ice-server"` header per TURN server in `whip_turn_servers` (RFC 9725 section 4.6), with
#     short-lived TURN REST credentials minted from the secret shared with that server (username
#     `expiry:resource id`, HMAC-SHA1), as livekit-server does for participants
#     (docs/adr/0046-whip-turn-servers.md).
apply_patches() {
  local module_dir="$1" patch
  for patch in "$INGRESS_WRAPPER_DIR"/patches/*.patch; do
    [[ -f "$patch" ]] || continue
    patch --quiet --forward --fuzz=0 -p1 -d "$module_dir" <"$patch" || die "$patch did not apply to ingress $INGRESS_VERSION"
  done
}

build_ingress() {
  local name=ingress recipe
  recipe="$(hash_files "$INGRESS_WRAPPER_DIR/go.mod" "$INGRESS_WRAPPER_DIR/go.sum" "$INGRESS_WRAPPER_DIR/tools.go" "$INGRESS_WRAPPER_DIR"/patches/*.patch)"
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
  local start=$SECONDS work="$TALLY_TOOLS_DIR/src/ingress" module_dir
  module_dir="$(cd "$TALLY_TOOLS_DIR/src" && go mod download -json "$INGRESS_MODULE@$INGRESS_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$module_dir" && -f "$module_dir/go.mod" ]] || die "go mod download $INGRESS_MODULE@$INGRESS_VERSION failed"
  # Scratch copy of the wrapper and the patched module: the repo and the module cache are never written to.
  rm -rf "$work"
  mkdir -p "$work"
  cp "$INGRESS_WRAPPER_DIR/go.mod" "$INGRESS_WRAPPER_DIR/go.sum" "$INGRESS_WRAPPER_DIR/tools.go" "$work/"
  cp -r "$module_dir" "$work/ingress"
  chmod -R u+w "$work/ingress"
  apply_patches "$work/ingress"
  (cd "$work" && go mod edit -replace "$INGRESS_MODULE=./ingress" &&
    go build -mod=readonly -trimpath -o "$TALLY_BIN_DIR/$name.tmp" "$INGRESS_MODULE/cmd/server")
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
