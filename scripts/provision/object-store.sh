#!/usr/bin/env bash
# Builds the S3-compatible object store Tally records into when object storage is on:
#   versitygw v1.8.0 (Versity S3 Gateway, Apache-2.0; objects are plain files under its data
#   directory), `go install` from the Go module proxy unmodified, into $TALLY_TOOLS_DIR/bin/versitygw.
# docs/adr/0026-object-store-server.md says why this server. Cold build ~4 min on 2 cores; idle RSS ~58 MB.
# A build is skipped when the binary exists and its stamp records the same version + recipe.
# TALLY_FORCE_REBUILD=1 forces a rebuild.
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSITYGW_VERSION="v1.8.0"
VERSITYGW_MODULE="github.com/versity/versitygw"
# Bump when the build steps below change.
VERSITYGW_RECIPE=1

build_versitygw() {
  local name=versitygw stamp="versitygw $VERSITYGW_VERSION recipe=$VERSITYGW_RECIPE"
  if stamp_matches "$name" "$stamp"; then
    log "$name $VERSITYGW_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  log "building $name $VERSITYGW_VERSION ..."
  local start=$SECONDS out="$TALLY_TOOLS_DIR/src/versitygw-bin"
  rm -rf "$out"
  mkdir -p "$out" "$TALLY_BIN_DIR"
  GOBIN="$out" go install -trimpath "$VERSITYGW_MODULE/cmd/versitygw@$VERSITYGW_VERSION"
  mv -f "$out/$name" "$TALLY_BIN_DIR/$name"
  rm -rf "$out"
  # Its --version says "git" when built by go install: the module version is in the build info.
  grep -q "mod[[:space:]]*$VERSITYGW_MODULE[[:space:]]*$VERSITYGW_VERSION" <<<"$(go version -m "$TALLY_BIN_DIR/$name")" ||
    die "$TALLY_BIN_DIR/$name is not $VERSITYGW_MODULE $VERSITYGW_VERSION"
  stamp_write "$name" "$stamp"
  log "built $name $VERSITYGW_VERSION in $(fmt_duration $((SECONDS - start)))"
}

build_versitygw
