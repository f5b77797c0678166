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
# With --turn-address IP (networks that pass only TCP 443): coturn listens on TCP 443 of IP, a
# second address of the host that Caddy then leaves alone (tls.sh binds Caddy to the others), under
# the name turn.NAME, whose certificate Caddy obtains too; clients check that name.
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
TURN_ADDRESS="" # --turn-address: coturn on 443 of this address, under TURN_HOST
TURN_HOST=""    # the name in turns: URLs and in coturn's certificate
TURN_PORT=""    # the port in turns: URLs

turn_tls_on() { [[ -n "$DOMAIN" ]]; }

# resolve_turn_tls: after resolve_tls and resolve_ports, before write_config.
resolve_turn_tls() {
  local given="${TALLY_TURN_CERT_CHECK_S:-}" file="$HOME_DIR/turn/auth-secret"
  TURN_CERT_CHECK_S="${given:-${OLD[TALLY_TURN_CERT_CHECK_S]:-600}}"
  [[ "$TURN_CERT_CHECK_S" =~ ^[0-9]+$ && "$TURN_CERT_CHECK_S" -ge 1 ]] ||
    die "TALLY_TURN_CERT_CHECK_S must be a whole number of seconds >= 1, got: $TURN_CERT_CHECK_S"
  [[ -z "$TURN_ADDRESS_ARG" || "$TURN_ADDRESS_ARG" == off ]] || turn_tls_on || die "--turn-address needs --domain NAME (its certificate is Caddy's)"
  turn_tls_on || return 0
  [[ -z "$given" ]] || set_extra TALLY_TURN_CERT_CHECK_S "$given"
  TURN_ALLOWED_PEERS="${TALLY_TURN_ALLOWED_PEERS-${OLD[TALLY_TURN_ALLOWED_PEERS]:-}}"
  local peer
  for peer in ${TURN_ALLOWED_PEERS//,/ }; do
    is_ipv4 "$peer" || die "TALLY_TURN_ALLOWED_PEERS must list IPv4 addresses separated by commas, got: $peer"
  done
  resolve_turn_address
  TURN_SECRET="$(cat "$file" 2>/dev/null || true)"
  [[ "$TURN_SECRET" =~ ^[0-9a-f]{48}$ ]] || TURN_SECRET="$(random_secret 24)"
  log "    TURN/TLS: coturn on tcp $(turn_listen_description) (turns:$TURN_HOST:$TURN_PORT), with Caddy's certificate for $TURN_HOST (copied; renewals checked every ${TURN_CERT_CHECK_S}s)"
}

# resolve_turn_address: --turn-address IP puts TURN/TLS on 443 of IP under turn.DOMAIN; without
# it, on PORT[turn-tls] of every address under DOMAIN.
resolve_turn_address() {
  TURN_ADDRESS="${TURN_ADDRESS_ARG:-${OLD[TALLY_TURN_ADDRESS]:-}}"
  [[ "$TURN_ADDRESS" != off ]] || TURN_ADDRESS=""
  set_extra TALLY_TURN_ADDRESS "$TURN_ADDRESS"
  if [[ -z "$TURN_ADDRESS" ]]; then
    TURN_HOST="$DOMAIN" TURN_PORT="${PORT[turn-tls]}"
    return 0
  fi
  TURN_HOST="turn.$DOMAIN" TURN_PORT=443
  is_ipv4 "$TURN_ADDRESS" || die "--turn-address must be an IPv4 address of this host (or off), got: $TURN_ADDRESS"
  [[ "$TURN_ADDRESS" != 127.* ]] || die "--turn-address $TURN_ADDRESS: clients cannot reach a loopback address"
  [[ "$TURN_ADDRESS" != "$NODE_IP" ]] ||
    die "--turn-address $TURN_ADDRESS is the node's media address, where Caddy serves $DOMAIN: give a second address of this host"
  # Read whole before grep (see check_cluster_bind: grep -q and pipefail).
  local addresses=""
  command -v ip >/dev/null 2>&1 && addresses="$(ip -4 -o addr show 2>/dev/null || true)"
  if command -v ip >/dev/null 2>&1 && ! grep -qF " inet $TURN_ADDRESS/" <<<"$addresses"; then
    dry && warn "--turn-address $TURN_ADDRESS is not an address of this host: coturn could not listen there" && return 0
    die "--turn-address $TURN_ADDRESS is not an address of this host, so coturn could not listen there (ip -4 addr lists them); tally.env was left as it was"
  fi
}

# turn_listen_description: where coturn listens, for the log and the summary.
turn_listen_description() {
  if [[ -n "$TURN_ADDRESS" ]]; then echo "$TURN_PORT on $TURN_ADDRESS"; else echo "$TURN_PORT"; fi
}

# livekit_turn_servers_yaml: the rtc lines that hand clients the TURN/TLS server (indented for rtc:).
livekit_turn_servers_yaml() {
  turn_tls_on || return 0
  turn_servers_yaml "$TURN_HOST" "$TURN_PORT" "$TURN_SECRET" coturn
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
TALLY_CLUSTER_TURN_HOST=$TURN_HOST
TALLY_CLUSTER_TURN_PORT=$TURN_PORT
TALLY_CLUSTER_TURN_SECRET=$TURN_SECRET
# Media addresses of joined media nodes coturn may relay to, besides this host's (comma-separated;
# re-run install.sh after adding one: it writes them into coturn's database, without a restart).
TALLY_TURN_ALLOWED_PEERS=$TURN_ALLOWED_PEERS
EOF
}

# turn_allowed_peers: the addresses a relay may send to, in coturn's config - livekit-server's
# media address, and the address STUN saw when livekit-server announces that one instead. Joined
# media nodes' (TURN_ALLOWED_PEERS) go into coturn's database instead (turn_sync_allowed_peers).
turn_allowed_peers() {
  echo "$NODE_IP"
  if [[ "$STUN_OK" == 1 && -n "$STUN_MAPPED" && "$STUN_MAPPED" != "$NODE_IP" ]]; then echo "$STUN_MAPPED"; fi
}

# turn_sync_allowed_peers: TALLY_TURN_ALLOWED_PEERS into coturn's user database (table
# allowed_peer_ip), which coturn re-reads every few seconds while it runs: adding or removing a
# joined media node's address restarts nothing and keeps every relayed session. After coturn
# started (it creates the table); written as coturn's user, whose directory it is.
turn_sync_allowed_peers() {
  local db="$HOME_DIR/turn/run/turndb" sql="BEGIN; DELETE FROM allowed_peer_ip;" peer
  for peer in ${TURN_ALLOWED_PEERS//,/ }; do sql+=" INSERT OR IGNORE INTO allowed_peer_ip (realm, ip_range) VALUES ('', '$peer');"; done
  sql+=" COMMIT;"
  if dry; then
    log "    would write the joined media nodes' addresses (${TURN_ALLOWED_PEERS:-none}) into $db (allowed_peer_ip)"
    return 0
  fi
  wait_until 30 "coturn's database $db" turn_db_ready || service_fail turn
  turn_sqlite "$db" "$sql" >/dev/null || die "could not write TALLY_TURN_ALLOWED_PEERS into $db"
  log "    coturn may also relay to: ${TURN_ALLOWED_PEERS:-no joined media node} (its database; read while it runs)"
}

turn_sqlite() { setpriv --reuid="$TALLY_TURN_USER" --regid="$TALLY_TURN_USER" --init-groups -- sqlite3 -batch "$@"; }
turn_db_ready() { [[ "$(turn_sqlite "$HOME_DIR/turn/run/turndb" "SELECT count(*) FROM sqlite_master WHERE name = 'allowed_peer_ip';" 2>/dev/null)" == 1 ]]; }

turnserver_conf_content() {
  local peer
  cat <<EOF
# coturn: TURN over TLS for Tally, written by install.sh (--domain $DOMAIN; re-running it rewrites
# this file). livekit-server hands clients turns:$TURN_HOST:$TURN_PORT (DIR/livekit.yaml, rtc.turn_servers).
tls-listening-port=$TURN_PORT
EOF
  if [[ -n "$TURN_ADDRESS" ]]; then
    cat <<EOF
# Only this address: Caddy holds $TURN_PORT of the host's others.
listening-ip=$TURN_ADDRESS
EOF
  fi
  cat <<EOF
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
# Relays over UDP only, as WebRTC clients ask: no TCP relay (RFC 6062) towards the SFU's addresses.
no-tcp-relay
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
  if ! command -v sqlite3 >/dev/null 2>&1; then
    log "    apt-get install sqlite3 (writes the joined media nodes' addresses into coturn's database)"
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q sqlite3 >/dev/null
  fi
  # The package's own coturn.service would listen on 3478, livekit-server's TURN port: Tally runs its own.
  if ! dry && systemd_is_init; then systemctl disable --now coturn.service >/dev/null 2>&1 || true; fi
  ensure_system_user "$TALLY_TURN_USER"
}

# turn_presents_copy: coturn answers a TLS handshake for TURN_HOST with the certificate in DIR/turn/tls.
turn_presents_copy() {
  local presented expected
  expected="$(openssl x509 -noout -fingerprint -sha256 -in "$HOME_DIR/turn/tls/cert.pem" 2>/dev/null)" || return 1
  presented="$(openssl s_client -connect "${TURN_ADDRESS:-127.0.0.1}:$TURN_PORT" -servername "$TURN_HOST" </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256 2>/dev/null)" || return 1
  [[ -n "$presented" && "$presented" == "$expected" ]]
}

turn_caddy_cert_present() { [[ -n "$(turn_caddy_cert "$HOME_DIR" "$TURN_HOST")" ]]; }

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
    log "    would copy Caddy's certificate for $TURN_HOST ($HOME_DIR/caddy/data/certificates/*/$TURN_HOST/) to $HOME_DIR/turn/tls"
  else
    wait_until 60 "Caddy's certificate for $TURN_HOST" turn_caddy_cert_present ||
      die "Caddy holds no certificate for $TURN_HOST in $HOME_DIR/caddy/data/certificates (its log: $(log_file caddy) or journalctl -u tally-caddy)"
    local status=0
    turn_cert_sync "$HOME_DIR" "$TURN_HOST" "$TALLY_TURN_USER" || status=$?
    ((status != 2)) || die "could not copy Caddy's certificate for $TURN_HOST to $HOME_DIR/turn/tls"
    log "    $HOME_DIR/turn/tls: Caddy's certificate for $TURN_HOST ($([[ $status == 0 ]] && echo copied || echo current), valid until $(turn_cert_expiry "$HOME_DIR/turn/tls/cert.pem"))"
    # A running coturn keeps an older copy until told.
    if ((status == 0)) && service_running turn; then turn_reload "$HOME_DIR" || true; fi
  fi
  service_start turn
  service_start turn-cert
  turn_sync_allowed_peers
  dry && return 0
  wait_until 30 "coturn on tcp $(turn_listen_description)" turn_presents_copy || service_fail turn
  log "    turns:$TURN_HOST:$TURN_PORT: coturn answers TLS with Caddy's certificate for $TURN_HOST"
}

# print_turn_summary: the TURN line of the install summary.
print_turn_summary() {
  if turn_tls_on; then
    echo "[install]   TURN/TLS:   turns:$TURN_HOST:$TURN_PORT (coturn on tcp $(turn_listen_description), Caddy's certificate for $TURN_HOST, renewals reach it within ${TURN_CERT_CHECK_S}s)"
    if [[ -n "$TURN_ADDRESS" ]]; then
      echo "[install]               DNS: $TURN_HOST must resolve to $TURN_ADDRESS (clients check that name); Caddy keeps 443 of the host's other addresses"
    else
      echo "[install]               networks that pass only TCP 443 need it on 443 of a second address: re-run with --turn-address IP"
    fi
  else
    cat <<EOF
[install]   TURN/TLS:   off (TURN over UDP only). Clients behind networks that drop UDP need it: re-run
[install]               with --domain NAME, which adds TURN over TLS on tcp ${PORT[turn-tls]} with NAME's certificate.
EOF
  fi
}
