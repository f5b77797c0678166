#!/usr/bin/env bash
# Whether livekit-server may discover its external address through STUN. With
# `use_external_ip: true` livekit-server asks STUN servers at every start and exits when none
# answers, so the installer asks first (a few seconds, scripts/install/stun-probe.mjs) and writes
# `use_external_ip: true` only when one does; otherwise livekit-server announces the node's own
# address (detected, remembered or --node-ip). Every run asks again, so a re-run after the
# network changed picks the right setting. --offline skips the question. Source it; do not
# execute it.
#
# TALLY_STUN_SERVERS (HOST:PORT, comma- or space-separated; remembered in tally.env) replaces
# LiveKit's default servers for both the question and livekit-server; empty = LiveKit's defaults.
# TALLY_STUN_TIMEOUT_S (default 3) bounds the question.

LIVEKIT_DEFAULT_STUN_SERVERS="global.stun.twilio.com:3478 stun.l.google.com:19302 stun1.l.google.com:19302"
STUN_SERVERS="" # what TALLY_STUN_SERVERS says ("" = LiveKit's defaults)
STUN_OK=0       # 1: a STUN server answered, livekit-server may use_external_ip
STUN_MAPPED=""  # the address that server saw

# resolve_stun: sets STUN_SERVERS, STUN_OK and STUN_MAPPED; needs OFFLINE and NODE_IP (config.sh).
resolve_stun() {
  if [[ -n "${TALLY_STUN_SERVERS+set}" ]]; then
    STUN_SERVERS="$TALLY_STUN_SERVERS"
  else
    STUN_SERVERS="${OLD[TALLY_STUN_SERVERS]:-}"
  fi
  STUN_SERVERS="$(tr ',' ' ' <<<"$STUN_SERVERS" | xargs)"
  local server
  for server in $STUN_SERVERS; do
    [[ "$server" =~ ^[A-Za-z0-9.-]+:[0-9]{1,5}$ ]] || die "TALLY_STUN_SERVERS: expected HOST:PORT entries, got: $server"
  done
  STUN_OK=0 STUN_MAPPED=""
  [[ "$OFFLINE" == 1 ]] && return 0
  local servers="${STUN_SERVERS:-$LIVEKIT_DEFAULT_STUN_SERVERS}" timeout="${TALLY_STUN_TIMEOUT_S:-3}" answer
  [[ "$timeout" =~ ^[0-9]+$ && "$timeout" -ge 1 ]] || die "TALLY_STUN_TIMEOUT_S must be a whole number of seconds >= 1"
  # shellcheck disable=SC2086 # one argument per server
  if answer="$(node "$TALLY_INSTALL_LIB/stun-probe.mjs" "$((timeout * 1000))" $servers 2>/dev/null)"; then
    STUN_OK=1 STUN_MAPPED="${answer%% *}"
    log "    STUN: ${answer#* } answered (this host is seen as $STUN_MAPPED): livekit-server discovers its external address (use_external_ip: true)"
  else
    log "    STUN: no answer within ${timeout}s from ${servers// /, }: livekit-server announces $NODE_IP ($NODE_IP_SOURCE; use_external_ip: false)."
    log "    Behind NAT, give the public address with --node-ip; once STUN is reachable, re-run install.sh and it switches back."
  fi
}

# livekit_no_stun: 0 when livekit.yaml must not rely on STUN.
livekit_no_stun() { [[ "$OFFLINE" == 1 || "$STUN_OK" != 1 ]]; }

# livekit_stun_yaml: the rtc lines about STUN (indented for the rtc: block).
livekit_stun_yaml() {
  if livekit_no_stun; then
    cat <<EOF
  use_external_ip: false
  # never hand clients public STUN servers
  stun_servers:
    - 127.0.0.1:3478
EOF
    livekit_bind_ips_yaml
    return 0
  fi
  echo "  use_external_ip: true"
  [[ -n "$STUN_SERVERS" ]] || return 0
  echo "  stun_servers:"
  local server
  for server in $STUN_SERVERS; do echo "    - $server"; done
}

# livekit_bind_ips_yaml: with use_external_ip false, the UDP port is bound on the node's own address
# only, when NODE_IP is one of this host's. LiveKit maps every local address to node_ip and backs
# the one candidate it announces with whichever address it lists first (in no fixed order); on a
# host with several addresses that is often another one, and no client's media arrives.
livekit_bind_ips_yaml() {
  own_address "$NODE_IP" || return 0
  cat <<EOF
  # the UDP port on the node's own address only (one candidate, backed by that address's socket)
  ips:
    includes:
      - $NODE_IP/32
EOF
}

# own_address IP: whether IP is an address of one of this host's interfaces other than loopback.
own_address() {
  [[ "$1" != 127.* ]] && command -v ip >/dev/null 2>&1 && ip -4 -o addr show 2>/dev/null | grep -qF " inet $1/"
}
