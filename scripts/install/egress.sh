#!/usr/bin/env bash
# shellcheck disable=SC2034 # EGRESS_ENABLED is read by scripts/install/health.sh
# LiveKit egress (recordings) on the installed host: DIR/egress.yaml rendered from Tally's
# capacity model (scripts/render-egress-config.ts) once the agent reports this node's budget,
# then the egress service (scripts/install/egress-run.sh). Source it; do not execute it.

EGRESS_ENABLED=1
# Exit status of render-egress-config.ts when no egress mode fits this node.
EGRESS_NO_ROOM=3
# egress v1.8.6 stages recordings bound for S3/GCS/Azure in this hard-coded directory.
EGRESS_UPLOAD_DIR=/home/egress/tmp

egress_ready() {
  [[ "$(http_status "http://127.0.0.1:${PORT[egress]}/")" == 200 ]]
}

# render_egress_config: writes DIR/egress.yaml (tally, 600: it holds the LiveKit secret and the
# Redis password). Returns EGRESS_NO_ROOM when the node has no room for any egress mode.
render_egress_config() {
  local file="$HOME_DIR/egress.yaml" errors out status=0
  if dry; then
    log "    would render $file from the capacity model and this node's budget (scripts/render-egress-config.ts)"
    return 0
  fi
  errors="$(mktemp)"
  # Only tally.env as environment, as the services get it (HOME: the installer's, for caches).
  out="$(cd "$TALLY_REPO" && env -i PATH="$TALLY_SERVICE_PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 \
    "$NODE_BIN" --env-file="$HOME_DIR/tally.env" --import @swc-node/register/esm-register \
    scripts/render-egress-config.ts 2>"$errors")" || status=$?
  sed 's/^/[install]     /' "$errors"
  rm -f "$errors"
  if ((status != 0)); then return "$status"; fi
  write_file "$file" 600 "$TALLY_USER" <<<"$out"
}

# ensure_egress_upload_dir: EGRESS_UPLOAD_DIR, writable by the service user. Created only when
# missing; an existing /home/egress is left as it is.
ensure_egress_upload_dir() {
  if [[ -d "$EGRESS_UPLOAD_DIR" ]]; then
    if ! dry && ! setpriv --reuid="$TALLY_USER" --regid="$TALLY_USER" --init-groups -- test -w "$EGRESS_UPLOAD_DIR"; then
      warn "$EGRESS_UPLOAD_DIR is not writable by $TALLY_USER: recordings uploaded to object storage will fail"
    fi
    return 0
  fi
  [[ -e /home/egress ]] || ensure_dir /home/egress 755 root
  ensure_dir "$EGRESS_UPLOAD_DIR" 700 "$TALLY_USER"
}

# start_egress: renders the config and starts (or keeps, when nothing changed) the service.
start_egress() {
  local status=0
  ensure_egress_upload_dir
  render_egress_config || status=$?
  if ((status == EGRESS_NO_ROOM)); then
    EGRESS_ENABLED=0
    warn "this node has no room for any egress mode (see above): egress is not started and recordings will be refused"
    service_stop egress
    return 0
  fi
  ((status == 0)) || die "could not render $HOME_DIR/egress.yaml (see above)"
  service_start egress
  dry && return 0
  wait_until 30 egress egress_ready || service_fail egress
  log "    egress: answering on 127.0.0.1:${PORT[egress]} (config $HOME_DIR/egress.yaml)"
}
