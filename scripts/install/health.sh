#!/usr/bin/env bash
# Waits for the API's /healthz and prints where things are. Source it; do not execute it.

HEALTH_TIMEOUT="${TALLY_HEALTH_TIMEOUT:-60}"

api_healthy() {
  [[ "$(http_status "http://127.0.0.1:${PORT[api]}/healthz")" == 200 ]]
}

# wait_healthy: GET /healthz must answer 200 within HEALTH_TIMEOUT seconds; otherwise prints
# what /healthz said and the logs of the services involved, and exits non-zero.
wait_healthy() {
  local url="http://127.0.0.1:${PORT[api]}/healthz" start=$SECONDS
  if dry; then
    log "    would wait up to ${HEALTH_TIMEOUT}s for GET $url -> 200"
    return 0
  fi
  log "    waiting for GET $url (up to ${HEALTH_TIMEOUT}s) ..."
  if ! wait_until "$HEALTH_TIMEOUT" "api /healthz" api_healthy; then
    local body name
    body="$(curl -s -m 5 "$url" 2>/dev/null || true)"
    warn "GET $url answered: ${body:-nothing (connection refused or timed out)}"
    for name in api livekit redis postgres; do
      # The api's log always; the others when /healthz names them as failing.
      if [[ "$name" == api || "$body" == *"\"$name\":{\"ok\":false"* ]]; then
        if [[ "$SERVICE_MODE" == systemd ]]; then
          journalctl -u "tally-$name.service" -n 40 --no-pager >&2 || true
        else
          tail_log "$(log_file "$name")"
        fi
      fi
    done
    die "the API did not become healthy; services are left running for inspection (stop: ./install.sh --stop --home $HOME_DIR)"
  fi
  log "    healthy after $((SECONDS - start))s"
  if ! wait_until 30 worker worker_ready; then
    service_fail worker
  fi
  log "    worker: running"
}

# print_ports_summary: every port this install listens on, what it is for, and which to open.
print_ports_summary() {
  local api_line lk_line store_line="" turn_tls_line=""
  if [[ "$OBJECT_STORE" == bundled ]]; then
    store_line=$'\n'"[install]     tcp ${PORT[object-store]}           object store: recording downloads follow signed links to it; nodes stage recordings in it"
  fi
  if [[ -n "$DOMAIN" ]]; then
    api_line="tcp $HTTPS_PORT, $HTTP_PORT      Caddy: HTTPS API, dashboard and LiveKit signalling; $HTTP_PORT for ACME and redirects"
    lk_line="(API ${PORT[api]} and LiveKit signalling ${PORT[livekit]} listen on 127.0.0.1 behind Caddy)"
    if [[ -n "$TURN_ADDRESS" ]]; then
      api_line="tcp $HTTPS_PORT, $HTTP_PORT      Caddy (every address but $TURN_ADDRESS): HTTPS API, dashboard and LiveKit signalling; $HTTP_PORT for ACME and redirects"
      turn_tls_line=$'\n'"[install]     tcp $TURN_PORT on $TURN_ADDRESS  TURN relay over TLS (turns:$TURN_HOST:$TURN_PORT), for clients whose network passes only TCP 443"
      turn_tls_line+=$'\n'"[install]     tcp $HTTP_PORT on $TURN_ADDRESS   Caddy: ACME challenge for $TURN_HOST"
    else
      turn_tls_line=$'\n'"[install]     tcp ${PORT[turn-tls]}           TURN relay over TLS (turns:$DOMAIN:${PORT[turn-tls]}), for clients whose network drops UDP"
    fi
  else
    api_line="tcp ${PORT[api]}           API and dashboard (plain HTTP)"
    lk_line="tcp ${PORT[livekit]}           LiveKit signalling (WebSocket)"
  fi
  cat <<EOF
[install]   Ports to open in the firewall:
[install]     $api_line
[install]     $lk_line
[install]     udp ${PORT[rtc-udp]}           media (WebRTC; every participant on this one port)
[install]     tcp ${PORT[rtc-tcp]}           media over TCP, for clients whose UDP cannot reach udp ${PORT[rtc-udp]}
[install]     udp ${PORT[turn-udp]}           TURN relay over UDP, for clients that may send UDP only to well-known ports$turn_tls_line
[install]     tcp ${PORT[ingress-rtmp]}, ${PORT[ingress-whip]}, udp ${PORT[ingress-udp]}  ingest: RTMP, WHIP and WHIP's media$store_line
[install]   Local only: $([[ "$DATABASE_MODE" == external ]] || echo "postgres ${PORT[pg]}, ")redis ${PORT[redis]}$([[ -z "$CLUSTER_BIND" ]] || echo " (also on $CLUSTER_BIND for joining nodes)"), egress template ${PORT[egress-template]}, ingress relay ${PORT[ingress-relay]}
$(print_turn_summary)
EOF
}

print_summary() {
  local local_url="http://127.0.0.1:${PORT[api]}" public_url
  public_url="$(sed -n 's/^TALLY_PUBLIC_URL=//p' "$HOME_DIR/tally.env" 2>/dev/null || true)"
  cat <<EOF
[install] Tally is running.
[install]   API:        $local_url   (public: ${public_url:-http://$NODE_IP:${PORT[api]}})
[install]   Admin key:  $HOME_DIR/admin.key
[install]   Config:     $HOME_DIR/tally.env, $HOME_DIR/livekit.yaml
[install]   Egress:     run by the agent on demand (GET /v1/nodes/{id}/workers; logs in $HOME_DIR/workers/egress)
[install]   Logs:       $(if [[ "$SERVICE_MODE" == systemd ]]; then echo "journalctl -u 'tally-*'"; else echo "$HOME_DIR/log/*.log"; fi)
[install]   Media:      livekit $(sed -n 's/^LIVEKIT_PUBLIC_URL=//p' "$HOME_DIR/tally.env" 2>/dev/null || true)
[install]   Files:      recordings in $(sed -n 's/^TALLY_RECORDINGS_DIR=//p' "$HOME_DIR/tally.env"), live HLS in $(sed -n 's/^TALLY_HLS_DIR=//p' "$HOME_DIR/tally.env")
[install]   Recordings: $(object_store_summary)
[install]   Database:   $(if [[ "$DATABASE_MODE" == external ]]; then echo "external PostgreSQL, $(redact_database_url "$EXTERNAL_DATABASE_URL")"; else echo "PostgreSQL in $HOME_DIR/postgres"; fi)
$(print_ports_summary)
$(runtimes_summary | sed 's/^/[install]   Runtime:    /')
[install]   Stop:       ./install.sh --stop --home $HOME_DIR
$(print_step_times)
[install] Try it:
  curl -X POST $local_url/v1/apps \\
    -H "Authorization: Bearer \$(cat $HOME_DIR/admin.key)" \\
    -H 'Content-Type: application/json' -d '{"name":"my-app"}'
EOF
}
