#!/usr/bin/env bash
# LiveKit egress (recordings) on the installed host. The agent runs it on demand, with its config
# derived from the capacity model (docs/workers.md); the host only needs the directory egress
# stages uploads in. Source it; do not execute it.

# egress v1.8.6 stages recordings bound for S3/GCS/Azure in this hard-coded directory.
EGRESS_UPLOAD_DIR=/home/egress/tmp

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
