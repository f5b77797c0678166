#!/usr/bin/env bash
# LiveKit egress (recordings) on the installed host. The agent runs it on demand, with its config
# derived from the capacity model (docs/workers.md); the host only needs the directory egress
# stages uploads in. Source it; do not execute it.

# egress v1.8.6 stages recordings bound for S3/GCS/Azure in this hard-coded directory.
EGRESS_UPLOAD_DIR=/home/egress/tmp

# ensure_egress_upload_dir: EGRESS_UPLOAD_DIR, writable by the agent's user (egress runs as it).
# Created when missing; one an operator made is only checked.
ensure_egress_upload_dir() {
  if [[ -d "$EGRESS_UPLOAD_DIR" ]]; then
    # Made by a previous layout's install.sh for another user: it is ours to hand over.
    if [[ "$(stat -c %U /home/egress)" == root && "$(stat -c %a "$EGRESS_UPLOAD_DIR")" == 700 ]]; then
      ensure_dir "$EGRESS_UPLOAD_DIR" 700 "$AGENT_USER"
    elif ! dry && ! as_user "$AGENT_USER" test -w "$EGRESS_UPLOAD_DIR"; then
      warn "$EGRESS_UPLOAD_DIR is not writable by $AGENT_USER: recordings uploaded to object storage will fail"
    fi
    return 0
  fi
  [[ -e /home/egress ]] || ensure_dir /home/egress 755 root
  ensure_dir "$EGRESS_UPLOAD_DIR" 700 "$AGENT_USER"
}
