#!/usr/bin/env bash
# What each feature needs at run time on an installed node, and the check at the end of install.sh
# that it is all there: recordings and live HLS (directories the services write), RTMP / WHIP
# ingest (the ingress binary, its ports, livekit-server's `ingress:` section), recording
# finalisation and ladders (ffmpeg / ffprobe), room-composite recordings (Chromium, Xvfb).
# Source it after config.sh; do not execute it.
# shellcheck disable=SC2034 # globals read by the other scripts/install files

# LiveKit ingress, run by the agent on demand (apps/agent/src/runtime/worker-specs.ts).
PORT_DEFAULT+=([ingress-rtmp]=1935 [ingress-whip]=8085 [ingress-relay]=7892 [ingress-udp]=7885)
PORT_ENV_KEY+=([ingress-rtmp]=TALLY_INGRESS_RTMP_PORT [ingress-whip]=TALLY_INGRESS_WHIP_PORT
  [ingress-relay]=TALLY_INGRESS_RELAY_PORT [ingress-udp]=TALLY_INGRESS_UDP_PORT)
PORT_SERVICE+=([ingress-rtmp]=agent [ingress-whip]=agent [ingress-relay]=agent [ingress-udp]=agent)
INGRESS_PORT_KEYS=(ingress-rtmp ingress-whip ingress-relay ingress-udp)
PORT_KEYS+=("${INGRESS_PORT_KEYS[@]}")
MANAGED_KEYS+=(TALLY_INGRESS_BIN TALLY_RECORDINGS_DIR TALLY_HLS_DIR TALLY_INGRESS_RTMP_PORT TALLY_INGRESS_WHIP_PORT
  TALLY_INGRESS_RELAY_PORT TALLY_INGRESS_UDP_PORT)

FEATURE_PROBLEMS=() # "what is wrong|how to fix it", filled by verify_features

log_ingress_ports() {
  log "    ingress ports: rtmp ${PORT[ingress-rtmp]}, whip ${PORT[ingress-whip]}, relay ${PORT[ingress-relay]}, udp ${PORT[ingress-udp]}"
}

# The directories the API, the worker and the media workers write recordings and live HLS
# segments into: the ones recorded in tally.env (an operator's mount) or DIR/recordings and DIR/hls.
recordings_dir() { printf '%s' "${OLD[TALLY_RECORDINGS_DIR]:-$HOME_DIR/recordings}"; }
hls_dir() { printf '%s' "${OLD[TALLY_HLS_DIR]:-$HOME_DIR/hls}"; }

# prepare_feature_dirs: DIR/recordings and DIR/hls belong to the media user (egress writes them)
# and its group, which the tally user joins (the worker finalises recordings, the api tidies HLS):
# mode 2770, so what either creates stays the group's. A directory configured elsewhere is the
# operator's: it is only checked (verify_features).
prepare_feature_dirs() {
  local dir dirs=("$(recordings_dir)" "$(hls_dir)")
  if [[ "$ACTION" == join ]]; then
    # A joined node: media runs no workers; worker / gpu write recordings (resolve_recordings_dir).
    dirs=()
    [[ "$JOIN_ROLE" == media ]] || dirs=("$RECORDINGS_DIR")
  fi
  # Media workers of a previous layout still write there as another user (resolve_agent_user).
  ((MEDIA_SWITCH_DEFERRED == 0)) || dirs=()
  for dir in "${dirs[@]}"; do
    if [[ "$dir" == "$HOME_DIR/"* ]]; then
      own_shared_tree "$dir"
      ensure_dir "$dir" 2770 "$TALLY_MEDIA_USER"
    fi
  done
}

# feature_env_lines: the tally.env lines for the directories and the ingress worker (origin).
feature_env_lines() {
  cat <<EOF
# Recordings and live HLS segments (written by egress as $TALLY_MEDIA_USER, tidied by the api and the
# worker as $TALLY_USER, a member of the group $TALLY_MEDIA_USER).
TALLY_RECORDINGS_DIR=$(recordings_dir)
TALLY_HLS_DIR=$(hls_dir)
# RTMP / WHIP ingest: the agent starts ingress for the first ingress and stops it once idle.
TALLY_INGRESS_BIN=$HOME_DIR/bin/ingress
EOF
  ingress_port_env_lines
}

ingress_port_env_lines() {
  local key
  for key in "${INGRESS_PORT_KEYS[@]}"; do printf '%s=%s\n' "${PORT_ENV_KEY[$key]}" "${PORT[$key]}"; done
}

# livekit_ingress_yaml: without it livekit-server's CreateIngress hands out no URL to push to.
livekit_ingress_yaml() {
  cat <<EOF
ingress:
  rtmp_base_url: rtmp://$NODE_IP:${PORT[ingress-rtmp]}/x
  whip_base_url: http://$NODE_IP:${PORT[ingress-whip]}/w
EOF
}

# ---------------------------------------------------------------- the check at the end

problem() { FEATURE_PROBLEMS+=("$1|$2"); }

check_writable_dir() { # check_writable_dir WHAT DIR USER...
  local what="$1" dir="$2" user
  shift 2
  if [[ ! -d "$dir" ]]; then
    problem "$what: $dir does not exist" "re-run ./install.sh, or create it: install -d -o $TALLY_MEDIA_USER -g $TALLY_MEDIA_USER -m 2770 $dir"
    return 0
  fi
  for user in "$@"; do
    if ! as_user "$user" test -w "$dir" -a -x "$dir"; then
      problem "$what: $dir is not writable by $user" "chown $TALLY_MEDIA_USER:$TALLY_MEDIA_USER $dir && chmod 2770 $dir"
      return 0
    fi
  done
  log "    ok: $what writable by $* ($dir)"
}

check_binary() { # check_binary WHAT PATH FIX
  if [[ ! -e "$2" ]]; then
    problem "$1: $2 is missing" "$3"
  elif ! as_user "$AGENT_USER" test -x "$2"; then
    problem "$1: $2 is not executable by $AGENT_USER" "chmod 755 $2 (and make its directory readable by $AGENT_USER)"
  else
    log "    ok: $1 present ($2)"
  fi
}

check_command() { # check_command WHAT NAME FIX
  local path
  # shellcheck disable=SC2016 # expanded by the inner shell
  if path="$(env -i PATH="$TALLY_SERVICE_PATH" sh -c 'command -v "$1"' _ "$2")"; then
    log "    ok: $1 ($path)"
  else
    problem "$1: $2 is not on the services' PATH ($TALLY_SERVICE_PATH)" "$3"
  fi
}

check_ingress_config() {
  if grep -q '^  rtmp_base_url: rtmp://' "$HOME_DIR/livekit.yaml" 2>/dev/null; then
    log "    ok: livekit-server hands out RTMP / WHIP URLs (livekit.yaml ingress:)"
  else
    problem "livekit.yaml has no ingress: section, so ingresses get no URL" "re-run ./install.sh"
  fi
}

# verify_features ROLE: origin, media, worker or gpu. Every run-time need of the role's features,
# checked as the services will meet it; lists each problem with its fix and fails if there is one.
verify_features() {
  local role="${1:-origin}" env_file="$HOME_DIR/tally.env" fix_provision="bash $TALLY_REPO/scripts/provision.sh, then re-run ./install.sh"
  if dry; then
    log "    would check: directories writable by $TALLY_MEDIA_USER and $TALLY_USER, binaries, ffmpeg/ffprobe, Chromium/Xvfb for the $role role"
    return 0
  fi
  FEATURE_PROBLEMS=()
  local recordings hls
  recordings="$(sed -n 's/^TALLY_RECORDINGS_DIR=//p' "$env_file" | tail -n1)"
  hls="$(sed -n 's/^TALLY_HLS_DIR=//p' "$env_file" | tail -n1)"
  [[ "$role" == control ]] || check_writable_dir "workers directory" "$HOME_DIR/workers" "$AGENT_USER"
  case "$role" in
    origin)
      check_writable_dir "recordings directory" "${recordings:-$HOME_DIR/recordings}" "$AGENT_USER" "$TALLY_USER"
      check_writable_dir "live HLS directory" "${hls:-$HOME_DIR/hls}" "$AGENT_USER" "$TALLY_USER"
      check_binary "livekit-server binary" "$HOME_DIR/bin/livekit-server" "$fix_provision"
      check_binary "egress binary (recordings, HLS)" "$HOME_DIR/bin/egress" "$fix_provision"
      check_binary "ingress binary (RTMP / WHIP)" "$HOME_DIR/bin/ingress" "$fix_provision"
      check_ingress_config
      ;;
    media)
      check_binary "livekit-server binary" "$HOME_DIR/bin/livekit-server" "$fix_provision"
      ;;
    worker | gpu)
      check_writable_dir "recordings directory" "${recordings:-$HOME_DIR/recordings}" "$AGENT_USER"
      check_binary "egress binary (recordings)" "$HOME_DIR/bin/egress" "bash $TALLY_REPO/scripts/provision/egress.sh, then re-run ./install.sh --join"
      if [[ "$role" == worker ]]; then
        check_binary "ingress binary (RTMP / WHIP)" "$HOME_DIR/bin/ingress" "bash $TALLY_REPO/scripts/provision/ingress.sh, then re-run ./install.sh --join"
      fi
      ;;
    control)
      check_command "ffprobe (recording finalisation)" ffprobe "apt-get install ffmpeg"
      check_command "ffmpeg (passthrough joins)" ffmpeg "apt-get install ffmpeg"
      ;;
  esac
  if [[ "$role" != media && "$role" != control ]]; then
    check_binary "egress entrypoint" "$TALLY_REPO/deploy/workers/egress-entrypoint.sh" "chmod 755 $TALLY_REPO/deploy/workers/egress-entrypoint.sh"
    check_command "ffprobe (recording finalisation)" ffprobe "apt-get install ffmpeg"
    check_command "ffmpeg (transcode ladders)" ffmpeg "apt-get install ffmpeg"
    check_command "Chromium (room-composite recordings)" chromium "apt-get install chromium (bash $TALLY_REPO/scripts/provision/egress.sh installs it)"
    check_command "Xvfb (room-composite recordings)" Xvfb "apt-get install xvfb"
  fi
  if ((${#FEATURE_PROBLEMS[@]} > 0)); then
    local entry
    for entry in "${FEATURE_PROBLEMS[@]}"; do
      printf '[install] FAILED: %s\n[install]   fix: %s\n' "${entry%%|*}" "${entry#*|}" >&2
    done
    die "${#FEATURE_PROBLEMS[@]} feature check(s) failed (above); the services are left running"
  fi
}
