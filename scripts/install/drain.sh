#!/usr/bin/env bash
# Upgrades keep recordings (docs/adr, "upgrades hand media workers over"). Re-running install.sh
# restarts the agent to pick up new code; the agent runs this node's egress, whose recordings must
# not end with it. So before that restart the installer asks the agent to hand its workers over
# (DIR/workers/hand-over): the stopping agent leaves them running, and the new one adopts them
# (apps/agent/src/runtime/native-driver.ts) and removes the file. `--stop` withdraws the request
# first, so stopping still stops everything. The API and the worker shut down gracefully
# (in-flight requests finish, queued jobs stay in Redis). Source it; do not execute it.

hand_over_file() { printf '%s/workers/hand-over' "$HOME_DIR"; }

# The user the agent runs as this time: the media user, except while media workers a previous
# layout's agent started as another user still run (a recording in progress). A new agent could
# not adopt those (nor signal them), and they could not write into recordings directories handed
# to the media user's group, so until they end the agent - and the recordings and live HLS
# directories - stay as they were, and a later run finishes the switch.
AGENT_USER=""
MEDIA_SWITCH_DEFERRED=0

# resolve_agent_user: before write_config.
resolve_agent_user() {
  AGENT_USER="$TALLY_MEDIA_USER" MEDIA_SWITCH_DEFERRED=0
  local file pid owner
  for file in "$HOME_DIR"/workers/*.pid; do
    [[ -f "$file" ]] || continue
    pid="$(cat "$file" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ && -d "/proc/$pid" ]] || continue
    owner="$(stat -c %U "/proc/$pid" 2>/dev/null || true)"
    if [[ -n "$owner" && "$owner" != "$TALLY_MEDIA_USER" ]]; then
      AGENT_USER="$owner" MEDIA_SWITCH_DEFERRED=1
      warn "media workers started as $owner (a previous layout) are running (pid $pid): the agent stays $owner until they end, so their recordings go on; once nothing records, ./install.sh --stop then ./install.sh moves it to $TALLY_MEDIA_USER (an idle worker otherwise ends after TALLY_WORKER_IDLE_GRACE_S)"
      return 0
    fi
  done
}

# request_agent_hand_over: before start_app_services on a re-run, while the agent runs.
request_agent_hand_over() {
  service_running agent || return 0
  if dry; then
    log "    would ask the running agent to hand its media workers over to the new one"
    return 0
  fi
  local workers
  workers="$( (compgen -G "$HOME_DIR/workers/*.pid" || true) | wc -l)"
  install -m 600 -o "$AGENT_USER" -g "$AGENT_USER" /dev/null "$(hand_over_file)"
  log "    the agent hands its running media workers ($workers) over to the new agent: recordings go on"
}

# cancel_agent_hand_over: what stops the agent for good must stop its workers too.
cancel_agent_hand_over() {
  [[ -e "$(hand_over_file)" ]] || return 0
  run rm -f "$(hand_over_file)"
}

# agent_took_over: after the restart the new agent removes the file (once it adopted the
# workers); a file still there means the new agent did not come up.
agent_took_over() { [[ ! -e "$(hand_over_file)" ]]; }
