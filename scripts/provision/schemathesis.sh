#!/usr/bin/env bash
# Provisions schemathesis (PyPI) into a virtualenv at $TALLY_TOOLS_DIR/schemathesis/venv, linked
# as $TALLY_BIN_DIR/schemathesis: the acceptance suite fuzzes the installed API from its own
# /openapi.json with it. Skipped when the stamp records the same version.
#
# Usage: bash scripts/provision/schemathesis.sh
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SCHEMATHESIS_VERSION="4.32.5"
venv="$TALLY_TOOLS_DIR/schemathesis/venv"

if stamp_matches schemathesis "$SCHEMATHESIS_VERSION"; then
  log "schemathesis $SCHEMATHESIS_VERSION: present"
  exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1; then
  apt_install_missing python3-venv
fi
log "schemathesis $SCHEMATHESIS_VERSION: installing into $venv ..."
rm -rf "$venv"
mkdir -p "$(dirname "$venv")" "$TALLY_STAMP_DIR"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
"$venv/bin/schemathesis" --version >/dev/null
mkdir -p "$TALLY_BIN_DIR"
ln -sfn "$venv/bin/schemathesis" "$TALLY_BIN_DIR/schemathesis"
stamp_write schemathesis "$SCHEMATHESIS_VERSION"
log "schemathesis: done"
