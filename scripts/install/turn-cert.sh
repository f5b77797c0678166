#!/usr/bin/env bash
# Keeps the TURN/TLS server's (coturn's) copy of the certificate Caddy holds for the domain
# current (docs/adr/0042-turn-tls-beside-caddy.md). Caddy obtains and renews the certificate in
# its own storage (DIR/caddy/data, Caddy's user only); coturn reads a copy in DIR/turn/tls
# (root:turnserver). Every INTERVAL seconds this compares the two and, when Caddy's changed (a
# renewal), copies it and has coturn reload it (SIGUSR2: coturn swaps its certificate without
# dropping a relayed session).
#
# Usage (as root; the service turn-cert runs install.sh's copy of it, DIR/bin/tally-turn-cert):
#   turn-cert.sh HOME_DIR DOMAIN TURN_USER INTERVAL_S
# scripts/install/turn.sh sources this file for the first copy (turn_cert_sync).
#
# Everything runs from main(), so bash has parsed the whole file before anything runs.

# turn_caddy_cert HOME DOMAIN -> the newest certificate file Caddy stored for DOMAIN (ACME or its
# local CA: certificates/<issuer>/DOMAIN/DOMAIN.crt, with DOMAIN.key beside it), or nothing.
turn_caddy_cert() {
  find "$1/caddy/data/certificates" -mindepth 3 -maxdepth 3 -type f -path "*/$2/$2.crt" -printf '%T@ %p\n' 2>/dev/null |
    sort -rn | head -n1 | cut -d' ' -f2-
}

# turn_cert_sync HOME DOMAIN USER -> 0: copied (new or changed), 1: the copy is current,
# 2: Caddy has no certificate for DOMAIN (yet).
turn_cert_sync() {
  local home="$1" domain="$2" user="$3" crt key dir="$1/turn/tls"
  crt="$(turn_caddy_cert "$home" "$domain")"
  [[ -n "$crt" ]] || return 2
  key="${crt%.crt}.key"
  [[ -s "$crt" && -s "$key" ]] || return 2
  if cmp -s "$crt" "$dir/cert.pem" && cmp -s "$key" "$dir/key.pem"; then return 1; fi
  # Caddy writes the two files one after the other: copy only a certificate and key that belong
  # together (the next check takes the pair once both are written).
  [[ "$(openssl x509 -noout -pubkey -in "$crt" 2>/dev/null)" == "$(openssl pkey -pubout -in "$key" 2>/dev/null)" ]] || return 1
  install -m 644 -o root -g "$user" "$crt" "$dir/cert.pem.tmp" || return 2
  install -m 640 -o root -g "$user" "$key" "$dir/key.pem.tmp" || return 2
  mv -f "$dir/key.pem.tmp" "$dir/key.pem"
  mv -f "$dir/cert.pem.tmp" "$dir/cert.pem"
  return 0
}

# turn_cert_expiry FILE -> the certificate's notAfter date (or "?" without openssl).
turn_cert_expiry() {
  openssl x509 -noout -enddate -in "$1" 2>/dev/null | sed 's/^notAfter=//' || echo "?"
}

# turn_reload HOME: coturn re-reads its certificate and key (SIGUSR2), keeping its sessions.
turn_reload() {
  local home="$1" pid
  if [[ "$(cat "$home/run/mode" 2>/dev/null)" == systemd ]]; then
    systemctl reload tally-turn.service
  else
    pid="$(cat "$home/run/turn.child.pid" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -USR2 "$pid"
  fi
}

main() {
  set -uo pipefail
  if [[ $# -ne 4 || ! "$4" =~ ^[0-9]+$ || "$4" -lt 1 ]]; then
    echo "usage: turn-cert.sh HOME_DIR DOMAIN TURN_USER INTERVAL_S" >&2
    exit 2
  fi
  local home="$1" domain="$2" user="$3" interval="$4" status
  say() { printf '[turn-cert] %s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
  trap 'exit 0' TERM INT
  say "keeping $home/turn/tls current with Caddy's certificate for $domain (checked every ${interval}s)"
  while :; do
    turn_cert_sync "$home" "$domain" "$user"
    status=$?
    if ((status == 0)); then
      if turn_reload "$home"; then
        say "Caddy's certificate for $domain changed (valid until $(turn_cert_expiry "$home/turn/tls/cert.pem")): copied; coturn reloaded it"
      else
        say "Caddy's certificate for $domain changed: copied, but coturn could not be told (it reads the copy when it starts)"
      fi
    elif ((status == 2)); then
      say "Caddy holds no certificate for $domain yet"
    fi
    sleep "$interval" &
    wait $! || true
  done
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi
