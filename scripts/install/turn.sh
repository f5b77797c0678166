#!/usr/bin/env bash
# TURN over TLS with `--domain NAME` (docs/adr/0042-turn-tls-beside-caddy.md): clients whose
# network drops UDP reach the media through a TURN relay they talk to over TLS, on TCP 5349 of the
# same host and name as the HTTPS API (Caddy keeps 443). The relay is coturn (Debian's package,
# run as its user `turnserver`, TLS only); livekit-server hands every participant
# `turns:NAME:5349?transport=tcp` with credentials minted per participant from a secret the two
# share (rtc.turn_servers). The certificate is the one Caddy obtained for NAME (ACME, or its local
# CA with --tls internal): copied into DIR/turn/tls, and kept current by the service turn-cert
# (scripts/install/turn-cert.sh), which copies a renewed one and has coturn reload it without
# dropping a session. Without --domain: no TURN over TLS (TURN over UDP stays; config.sh).
# Source it after tls.sh; do not execute it.
#
# DIR/turn: root:turnserver 0750 - turnserver.conf (0640, holds the shared secret), tls/ (the
# copies), run/ (coturn's pid file); DIR/turn/auth-secret (root only) keeps the secret across runs.

# shellcheck source=scripts/install/turn-cert.sh
source "$TALLY_INSTALL_LIB/turn-cert.sh"

TALLY_SERVICES+=(turn turn-cert)
MANAGED_KEYS+=(TALLY_CLUSTER_TURN_HOST TALLY_CLUSTER_TURN_PORT TALLY_CLUSTER_TURN_SECRET TALLY_TURN_ALLOWED_PEERS)
TURN_SECRET=""
TURN_ALLOWED_PEERS="" # joined media nodes' addresses the relay may reach too (comma-separated)
TURN_CERT_CHECK_S=600

turn_tls_on() { [[ -n "$DOMAIN" ]]; }

# resolve_turn_tls: after resolve_tls and resolve_ports, before write_config.
resolve_turn_tls() {
  local given="${TALLY_TURN_CERT_CHECK_S:-}" file="$HOME_DIR/turn/auth-secret"
  TURN_CERT_CHECK_S="${given:-${OLD[TALLY_TURN_CERT_CHECK_S]:-600}}"
  [[ "$TURN_CERT_CHECK_S" =~ ^[0-9]+$ && "$TURN_CERT_CHECK_S" -ge 1 ]] ||
    die "TALLY_TURN_CERT_CHECK_S must be a whole number of seconds >= 1, got: $TURN_CERT_CHECK_S"
  turn_tls_on || return 0
  [[ -z "$given" ]] || set_extra TALLY_TURN_CERT_CHECK_S "$given"
  TURN_ALLOWED_PEERS="${TALLY_TURN_ALLOWED_PEERS-${OLD[TALLY_TURN_ALLOWED_PEERS]:-}}"
  local peer
  for peer in ${TURN_ALLOWED_PEERS//,/ }; do
    is_ipv4 "$peer" || die "TALLY_TURN_ALLOWED_PEERS must list IPv4 addresses separated by commas, got: $peer"
  done
  TURN_SECRET="$(cat "$file" 2>/dev/null || true)"
  [[ "$TURN_SECRET" =~ ^[0-9a-f]{48}$ ]] || TURN_SECRET="$(random_secret 24)"
  log "    TURN/TLS: coturn on tcp ${PORT[turn-tls]} (turns:$DOMAIN:${PORT[turn-tls]}), with Caddy's certificate for $DOMAIN (copied; renewals checked every ${TURN_CERT_CHECK_S}s)"
}

# livekit_turn_servers_yaml: the rtc lines that hand clients the TURN/TLS server (indented for rtc:).
livekit_turn_servers_yaml() {
  turn_tls_on || return 0
  turn_servers_yaml "$DOMAIN" "${PORT[turn-tls]}" "$TURN_SECRET" coturn
}

# turn_servers_yaml HOST PORT SECRET WHAT: rtc.turn_servers naming one TURN/TLS server (a joined
# media node names the origin's: scripts/install/join.sh).
turn_servers_yaml() {
  cat <<EOF
  # TURN over TLS ($4, docs/adr/0042-turn-tls-beside-caddy.md): credentials per participant
  turn_servers:
    - host: $1
      port: $2
      protocol: tls
      secret: $3
EOF
}

# turn_cluster_env_lines: the tally.env lines that hand joined media nodes this TURN/TLS server.
turn_cluster_env_lines() {
  turn_tls_on || return 0
  cat <<EOF
# Joined media nodes hand their participants this TURN over TLS server too (docs/cluster.md).
TALLY_CLUSTER_TURN_HOST=$DOMAIN
TALLY_CLUSTER_TURN_PORT=${PORT[turn-tls]}
TALLY_CLUSTER_TURN_SECRET=$TURN_SECRET
# Media addresses of joined media nodes coturn may relay to, besides this host's (comma-separated;
# re-run install.sh after adding one: coturn reads its peers at start).
TALLY_TURN_ALLOWED_PEERS=$TURN_ALLOWED_PEERS
EOF
}

# turn_allowed_peers: the addresses a relay may send to - livekit-server's media address, and
# the address STUN saw when livekit-server announces that one instead.
turn_allowed_peers() {
  echo "$NODE_IP"
  local peer
  for peer in ${TURN_ALLOWED_PEERS//,/ }; do echo "$peer"; done
  if [[ "$STUN_OK" == 1 && -n "$STUN_MAPPED" && "$STUN_MAPPED" != "$NODE_IP" ]]; then echo "$STUN_MAPPED"; fi
}

turnserver_conf_content() {
  local peer
  cat <<EOF
# coturn: TURN over TLS for Tally, written by install.sh (--domain $DOMAIN; re-running it rewrites
# this file). livekit-server hands clients turns:$DOMAIN:${PORT[turn-tls]} (DIR/livekit.yaml, rtc.turn_servers).
tls-listening-port=${PORT[turn-tls]}
# TLS only: TURN over UDP is livekit-server's own (port ${PORT[turn-udp]}).
no-udp
no-tcp
no-dtls
no-tlsv1
no-tlsv1_1
cert=$HOME_DIR/turn/tls/cert.pem
pkey=$HOME_DIR/turn/tls/key.pem
# Credentials: livekit-server mints them per participant from this secret (TURN REST API).
use-auth-secret
static-auth-secret=$TURN_SECRET
realm=$DOMAIN
# Relays start on the media address and may reach livekit-server's media address only.
relay-ip=$NODE_IP
denied-peer-ip=0.0.0.0-255.255.255.255
denied-peer-ip=::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff
EOF
  while read -r peer; do echo "allowed-peer-ip=$peer"; done < <(turn_allowed_peers)
  cat <<EOF
no-multicast-peers
no-stun
no-rfc5780
no-cli
no-software-attribute
log-file=stdout
simple-log
pidfile=$HOME_DIR/turn/run/turnserver.pid
# coturn opens a user database even with use-auth-secret: its own, empty, not the package's.
userdb=$HOME_DIR/turn/run/turndb
EOF
}

# ensure_coturn: Debian's coturn package (scripts/provision/system.sh installs it too).
ensure_coturn() {
  if ! command -v turnserver >/dev/null 2>&1; then
    log "    apt-get install coturn"
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q coturn >/dev/null
  fi
  # The package's own coturn.service would listen on 3478, livekit-server's TURN port: Tally runs its own.
  if ! dry && systemd_is_init; then systemctl disable --now coturn.service >/dev/null 2>&1 || true; fi
  ensure_system_user "$TALLY_TURN_USER"
}

# turn_presents_copy: coturn answers a TLS handshake for DOMAIN with the certificate in DIR/turn/tls.
turn_presents_copy() {
  local presented expected
  expected="$(openssl x509 -noout -fingerprint -sha256 -in "$HOME_DIR/turn/tls/cert.pem" 2>/dev/null)" || return 1
  presented="$(openssl s_client -connect "127.0.0.1:${PORT[turn-tls]}" -servername "$DOMAIN" </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256 2>/dev/null)" || return 1
  [[ -n "$presented" && "$presented" == "$expected" ]]
}

turn_caddy_cert_present() { [[ -n "$(turn_caddy_cert "$HOME_DIR" "$DOMAIN")" ]]; }

# start_turn_tls: after start_tls_proxy (Caddy holds the certificate by then).
start_turn_tls() {
  if ! turn_tls_on; then
    service_stop turn-cert
    service_stop turn
    return 0
  fi
  ensure_coturn
  ensure_dir "$HOME_DIR/turn" 750 "root:$TALLY_TURN_USER"
  ensure_dir "$HOME_DIR/turn/tls" 750 "root:$TALLY_TURN_USER"
  ensure_dir "$HOME_DIR/turn/run" 700 "$TALLY_TURN_USER"
  write_file "$HOME_DIR/turn/auth-secret" 600 root <<<"$TURN_SECRET"
  write_file "$HOME_DIR/turn/turnserver.conf" 640 "root:$TALLY_TURN_USER" < <(turnserver_conf_content)
  write_file "$HOME_DIR/bin/tally-turn-cert" 755 root <"$TALLY_INSTALL_LIB/turn-cert.sh"
  if dry; then
    log "    would copy Caddy's certificate for $DOMAIN ($HOME_DIR/caddy/data/certificates/*/$DOMAIN/) to $HOME_DIR/turn/tls"
  else
    wait_until 60 "Caddy's certificate for $DOMAIN" turn_caddy_cert_present ||
      die "Caddy holds no certificate for $DOMAIN in $HOME_DIR/caddy/data/certificates (its log: $(log_file caddy) or journalctl -u tally-caddy)"
    local status=0
    turn_cert_sync "$HOME_DIR" "$DOMAIN" "$TALLY_TURN_USER" || status=$?
    ((status != 2)) || die "could not copy Caddy's certificate for $DOMAIN to $HOME_DIR/turn/tls"
    log "    $HOME_DIR/turn/tls: Caddy's certificate for $DOMAIN ($([[ $status == 0 ]] && echo copied || echo current), valid until $(turn_cert_expiry "$HOME_DIR/turn/tls/cert.pem"))"
    # A running coturn keeps an older copy until told.
    if ((status == 0)) && service_running turn; then turn_reload "$HOME_DIR" || true; fi
  fi
  service_start turn
  service_start turn-cert
  dry && return 0
  wait_until 30 "coturn on tcp ${PORT[turn-tls]}" turn_presents_copy || service_fail turn
  log "    turns:$DOMAIN:${PORT[turn-tls]}: coturn answers TLS with Caddy's certificate for $DOMAIN"
}

# print_turn_summary: the TURN line of the install summary.
print_turn_summary() {
  if turn_tls_on; then
    echo "[install]   TURN/TLS:   turns:$DOMAIN:${PORT[turn-tls]} (coturn, Caddy's certificate, renewals reach it within ${TURN_CERT_CHECK_S}s)"
  else
    cat <<EOF
[install]   TURN/TLS:   off (TURN over UDP only). Clients behind networks that drop UDP need it: re-run
[install]               with --domain NAME, which adds TURN over TLS on tcp ${PORT[turn-tls]} with NAME's certificate.
EOF
  fi
}
