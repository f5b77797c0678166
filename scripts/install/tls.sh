#!/usr/bin/env bash
# TLS in front of Tally: `--domain NAME` puts Caddy (Debian's package) before the API, the
# dashboard and LiveKit's signalling, with automatic HTTPS - a public certificate (ACME) by
# default, or Caddy's own local CA with `--tls internal` for hosts without public DNS. The API
# and livekit-server's HTTP port then listen on 127.0.0.1 only, public URLs become https:// and
# wss://, and /metrics needs TALLY_METRICS_TOKEN (every proxied request comes from loopback, which
# /metrics would otherwise trust). Without --domain nothing changes and the summary says how to
# enable TLS. Source it; do not execute it.
#
# Caddy: DIR/caddy/Caddyfile, its certificates, keys and CA in DIR/caddy/data (owned by the user
# Debian's caddy package creates, which reads none of Tally's secrets), ports 443 and 80
# (TALLY_HTTPS_PORT / TALLY_HTTP_PORT override them), bound with CAP_NET_BIND_SERVICE only.

TALLY_SERVICES+=(caddy)
DOMAIN=""   # "" = no TLS proxy
TLS_MODE="" # acme | internal
HTTPS_PORT="${TALLY_HTTPS_PORT:-443}"
HTTP_PORT="${TALLY_HTTP_PORT:-80}"

# set_extra KEY VALUE: a tally.env line install.sh keeps but does not otherwise manage.
set_extra() {
  local i
  for i in "${!OLD_EXTRA[@]}"; do
    if [[ "${OLD_EXTRA[$i]}" == "$1="* ]]; then
      OLD_EXTRA[i]="$1=$2"
      return 0
    fi
  done
  OLD_EXTRA+=("$1=$2")
}

https_origin() {
  if [[ "$HTTPS_PORT" == 443 ]]; then printf '%s' "$DOMAIN"; else printf '%s:%s' "$DOMAIN" "$HTTPS_PORT"; fi
}

# resolve_tls: after load_existing_env, before write_config.
resolve_tls() {
  DOMAIN="${DOMAIN_ARG:-${OLD[TALLY_DOMAIN]:-}}"
  TLS_MODE="${TLS_ARG:-${OLD[TALLY_TLS]:-acme}}"
  [[ "$TLS_MODE" =~ ^(acme|internal)$ ]] || die "--tls must be internal (Caddy's local CA) or acme (a public certificate), got: $TLS_MODE"
  if [[ -z "$DOMAIN" ]]; then
    [[ -z "$TLS_ARG" ]] || die "--tls needs --domain NAME"
    return 0
  fi
  [[ "$DOMAIN" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]] || die "--domain must be a host name, got: $DOMAIN"
  [[ "$HTTPS_PORT" =~ ^[0-9]+$ && "$HTTP_PORT" =~ ^[0-9]+$ ]] || die "TALLY_HTTPS_PORT / TALLY_HTTP_PORT must be port numbers"
  set_extra TALLY_DOMAIN "$DOMAIN"
  set_extra TALLY_TLS "$TLS_MODE"
  # Only Caddy faces the network: the API and livekit-server's HTTP port stay on loopback.
  OLD[TALLY_HOST]=127.0.0.1
  export TALLY_PUBLIC_URL="https://$(https_origin)" LIVEKIT_PUBLIC_URL="wss://$(https_origin)"
  if [[ -z "${OLD[TALLY_METRICS_TOKEN]:-}" ]]; then
    set_extra TALLY_METRICS_TOKEN "$(random_secret 24)"
    log "    /metrics: behind the proxy every client is loopback, so it now needs TALLY_METRICS_TOKEN (generated in tally.env)"
  fi
  log "    TLS: Caddy serves https://$(https_origin) ($(tls_description)); API and LiveKit HTTP on 127.0.0.1 only"
}

tls_description() {
  if [[ "$TLS_MODE" == internal ]]; then echo "certificate from Caddy's local CA"; else echo "public certificate via ACME; DNS must point here, ports $HTTPS_PORT and $HTTP_PORT reachable"; fi
}

# livekit_bind_yaml: livekit-server's HTTP/WebSocket port on loopback when Caddy fronts it.
livekit_bind_yaml() {
  [[ -z "$DOMAIN" ]] || printf 'bind_addresses:\n  - 127.0.0.1\n'
}

caddy_ca_cert() { printf '%s/caddy/data/pki/authorities/local/root.crt' "$HOME_DIR"; }

# caddy_bind_addresses: with --turn-address, every address of this host but that one (coturn holds
# 443 there; Linux refuses a wildcard listener beside it), IPv6 in brackets, link-local left out.
# Caddy listens on all addresses otherwise. An address added to the host later needs a re-run.
caddy_bind_addresses() {
  [[ -n "${TURN_ADDRESS:-}" ]] || return 0
  ip -o addr show 2>/dev/null | awk '$3 == "inet" || ($3 == "inet6" && $0 !~ / scope link/) { sub(/\/.*/, "", $4); print $3, $4 }' |
    while read -r family address; do
      [[ "$address" != "$TURN_ADDRESS" ]] || continue
      if [[ "$family" == inet6 ]]; then printf '[%s]\n' "$address"; else printf '%s\n' "$address"; fi
    done | sort -u | paste -sd' '
}

# caddyfile_turn_sites: with --turn-address, Caddy obtains and renews the certificate for the TURN
# name (coturn presents a copy; turn.sh): served on Caddy's own addresses (a redirect to NAME), and
# on port 80 of the TURN address, where an ACME CA checks its HTTP challenge for that name.
caddyfile_turn_sites() {
  [[ -n "${TURN_ADDRESS:-}" ]] || return 0
  printf '\n%s {\n\tbind %s\n' "$TURN_HOST" "$1"
  [[ "$TLS_MODE" != internal ]] || printf '\ttls internal\n'
  printf '\tredir https://%s{uri}\n}\n' "$(https_origin)"
  printf '\nhttp://%s {\n\tbind %s\n\tredir https://%s{uri}\n}\n' "$TURN_HOST" "$TURN_ADDRESS" "$(https_origin)"
}

caddyfile_content() {
  local bind
  bind="$(caddy_bind_addresses)"
  cat <<EOF
# Caddy in front of Tally, written by install.sh (--domain $DOMAIN --tls $TLS_MODE).
{
	admin off
	storage file_system $HOME_DIR/caddy/data
	http_port $HTTP_PORT
	https_port $HTTPS_PORT
	skip_install_trust
}

$DOMAIN {
EOF
  [[ -z "$bind" ]] || printf '\tbind %s\n' "$bind"
  [[ "$TLS_MODE" != internal ]] || printf '\ttls internal\n'
  cat <<EOF
EOF
  if [[ "$OBJECT_STORE" == bundled ]]; then
    cat <<EOF
	# Recordings in the bundled store: the download links are signed for this host, so the Host header
	# is passed on unchanged (Caddy's default) and the bytes are not re-encoded.
	handle /${S3[bucket]}/* {
		reverse_proxy 127.0.0.1:${PORT[object-store]}
	}
EOF
  fi
  cat <<EOF
	handle {
		encode gzip
		# LiveKit's signalling (WebSocket) and its server API; everything else is Tally's API and dashboard.
		@livekit path /rtc /rtc/* /twirp/*
		reverse_proxy @livekit 127.0.0.1:${PORT[livekit]}
$(caddy_api_routes)
	}
}
EOF
  caddyfile_turn_sites "$bind"
}

# ensure_caddy: Debian's caddy package, installed when --domain asks for it.
ensure_caddy() {
  if command -v caddy >/dev/null 2>&1; then
    ensure_system_user "$TALLY_CADDY_USER"
    return 0
  fi
  log "    apt-get install caddy"
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q caddy >/dev/null
  # The package's own caddy.service would take ports 80/443: Tally runs its own instance.
  if ! dry && systemd_is_init; then systemctl disable --now caddy.service >/dev/null 2>&1 || true; fi
  ensure_system_user "$TALLY_CADDY_USER"
}

caddy_ready() {
  [[ "$(curl -sk -o /dev/null -m 5 -w '%{http_code}' --resolve "$DOMAIN:$HTTPS_PORT:127.0.0.1" "https://$(https_origin)/healthz" 2>/dev/null || true)" == 200 ]]
}

# start_tls_proxy: after the API is healthy.
start_tls_proxy() {
  if [[ -z "$DOMAIN" ]]; then
    service_stop caddy
    return 0
  fi
  ensure_caddy
  own_tree "$HOME_DIR/caddy" "$TALLY_CADDY_USER" caddy
  ensure_dir "$HOME_DIR/caddy" 700 "$TALLY_CADDY_USER"
  ensure_dir "$HOME_DIR/caddy/data" 700 "$TALLY_CADDY_USER"
  write_file "$HOME_DIR/caddy/Caddyfile" 600 "$TALLY_CADDY_USER" < <(caddyfile_content)
  [[ -z "$CONTROL_NODES" ]] || log "    Caddy balances the API and dashboard over 127.0.0.1:${PORT[api]} and ${CONTROL_NODES//,/, } (health-checked GET /healthz every 2 s)"
  if ! dry; then
    # As Caddy's user: validating provisions the local CA, whose files Caddy must read later.
    local validate=(setpriv --reuid="$TALLY_CADDY_USER" --regid="$TALLY_CADDY_USER" --init-groups -- env
      XDG_CONFIG_HOME="$HOME_DIR/caddy/config" XDG_DATA_HOME="$HOME_DIR/caddy/data"
      "$(command -v caddy)" validate --adapter caddyfile --config "$HOME_DIR/caddy/Caddyfile")
    (cd / && "${validate[@]}" >/dev/null 2>&1) ||
      die "Caddy refused $HOME_DIR/caddy/Caddyfile: $(cd / && "${validate[@]}" 2>&1 | tail -n 3)"
    chown -R "$TALLY_CADDY_USER:$TALLY_CADDY_USER" "$HOME_DIR/caddy"
  fi
  service_start caddy
  dry && return 0
  # A public certificate may take a while (ACME); the local CA signs at once.
  wait_until "$([[ "$TLS_MODE" == internal ]] && echo 30 || echo 120)" "https://$(https_origin)/healthz" caddy_ready || service_fail caddy
  log "    https://$(https_origin)/healthz: 200 through Caddy"
}

print_tls_summary() {
  if [[ -z "$DOMAIN" ]]; then
    cat <<EOF
[install]   TLS:        off (plain HTTP). Browsers need HTTPS for camera and microphone: re-run with
[install]               --domain media.example.com (public DNS: automatic certificate) or add
[install]               --tls internal (a local CA, for hosts without public DNS).
EOF
    return 0
  fi
  cat <<EOF
[install]   HTTPS:      https://$(https_origin) (API, dashboard /dashboard/, LiveKit wss://$(https_origin))
EOF
  if [[ "$TLS_MODE" == internal ]]; then
    echo "[install]   CA cert:    $(caddy_ca_cert) (Caddy's local CA: clients must trust it, e.g. curl --cacert)"
  fi
  echo "[install]   Metrics:    /metrics needs Authorization: Bearer \$TALLY_METRICS_TOKEN (in $HOME_DIR/tally.env)"
}
