#!/usr/bin/env bash
# Control-plane replicas (docs/adr/0043-control-plane-replicas.md). Source it; do not execute it.
#
# On the origin, --control-nodes IP[:PORT],... (with --cluster-bind) lists the hosts that run a second
# API and worker: PostgreSQL also listens on the cluster address and admits the role tally from
# exactly those addresses, TALLY_CLUSTER_DATABASE_URL points there (the API hands control tokens
# out only then), and with --domain Caddy balances the API over this host's and theirs.
# On a node, ./install.sh --join URL --token T --role control runs the API and the worker with the
# origin's database, its own Redis user and the origin's secrets (DIR/tally.env, root:tally 640).

CONTROL_NODES="" # origin: comma-separated IP:PORT of the control nodes ("" = none)

# resolve_control_nodes: after resolve_network (CLUSTER_BIND) and resolve_database, before write_config.
resolve_control_nodes() {
  local given="${CONTROL_NODES_ARG:-${OLD[TALLY_CONTROL_NODES]:-}}" entry list=()
  [[ "$given" != none ]] || given=""
  for entry in ${given//,/ }; do
    [[ "$entry" == *:* ]] || entry="$entry:8080"
    list+=("$entry")
  done
  CONTROL_NODES="$(
    IFS=,
    echo "${list[*]}"
  )"
  [[ -n "$CONTROL_NODES" ]] || return 0
  [[ -n "$CLUSTER_BIND" ]] || die "--control-nodes needs --cluster-bind IP: the control nodes reach PostgreSQL and Redis on that address"
  if [[ "${DATABASE_MODE:-local}" == external ]]; then
    log "    control nodes: $CONTROL_NODES (they are handed the external PostgreSQL's URL: let them in there)"
  else
    log "    control nodes: $CONTROL_NODES (PostgreSQL also listens on $CLUSTER_BIND and admits role tally from their addresses)"
  fi
  [[ -n "${DOMAIN_ARG:-${OLD[TALLY_DOMAIN]:-}}" ]] ||
    warn "no --domain: nothing balances the API replicas here; clients reach each at its own address (docs/cluster.md)"
}

# control_node_ips: one address per line.
control_node_ips() {
  local entry
  for entry in ${CONTROL_NODES//,/ }; do echo "${entry%%:*}"; done
}

# control_env_lines: the origin's tally.env lines for control nodes (none without them).
control_env_lines() {
  [[ -n "$CONTROL_NODES" ]] || return 0
  echo "# Control nodes (--join --role control) run a second API and worker on this PostgreSQL (docs/adr/0043)."
  echo "TALLY_CONTROL_NODES=$CONTROL_NODES"
  if [[ "${DATABASE_MODE:-local}" == external ]]; then
    # The same server the origin uses (--database-url-file); its own rules say who may connect.
    echo "TALLY_CLUSTER_DATABASE_URL=$EXTERNAL_DATABASE_URL"
  else
    echo "TALLY_CLUSTER_DATABASE_URL=postgresql://tally:$DB_PASSWORD@$CLUSTER_BIND:${PORT[pg]}/tally"
  fi
}

# postgres_listen_addresses: loopback, and the cluster address while control nodes are listed.
postgres_listen_addresses() {
  printf '127.0.0.1%s' "${CONTROL_NODES:+,$CLUSTER_BIND}"
}

# pg_hba_control_lines: the role tally by password from each control node's address only.
pg_hba_control_lines() {
  local ip
  while IFS= read -r ip; do
    [[ -n "$ip" ]] && printf 'host    tally     tally     %-14s scram-sha-256\n' "$ip/32"
  done < <(control_node_ips)
}

# postgres_end_removed_sessions: pg_hba.conf only guards new connections, so the sessions of an
# address taken off --control-nodes are ended (that node's API and worker lose the database at once).
postgres_end_removed_sessions() {
  dry && return 0
  local allowed="'127.0.0.1/32','::1/128'" ip
  while IFS= read -r ip; do [[ -z "$ip" ]] || allowed+=",'$ip/32'"; done < <(control_node_ips)
  local ended
  ended="$(as_pg_user "$PG_BIN/psql" -X -q -t -A -h "$HOME_DIR/postgres" -p "${PORT[pg]}" -U postgres -d postgres -c \
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE client_addr IS NOT NULL AND NOT (client_addr <<= ANY (ARRAY[$allowed]::inet[]))")"
  [[ "${ended:-0}" == 0 ]] || log "    postgres: ended $ended session(s) from addresses no longer in --control-nodes"
}

# caddy_api_routes: Caddyfile lines (inside the site's handle) sending the API and dashboard to this
# host's API, or, with control nodes, balancing them over this host's and theirs. Joins and the
# nodes' downloads stay here: the origin's cluster settings and its files on disk.
caddy_api_routes() {
  local local_api="127.0.0.1:${PORT[api]}"
  if [[ -z "$CONTROL_NODES" ]]; then
    printf '\t\treverse_proxy %s\n' "$local_api"
    return 0
  fi
  cat <<EOF
		@origin_only path /v1/nodes/join /v1/nodes/artifacts /v1/nodes/artifacts/*
		reverse_proxy @origin_only $local_api
		# The API replicas (--control-nodes), each request to the one with the fewest requests in flight
		# (ties at random). round_robin is not used: Caddy 2.6.2's picks share one counter across concurrent
		# requests, so with one replica left out, a request's picks can all land on it and a POST or DELETE
		# is answered 503 "no upstreams available" at once. One that fails /healthz (every 2 s) or refuses a
		# connection is left out for 10 s, and a request that could not be sent to one (connection refused, or no answer
		# to the connection within 3 s: a host gone) is sent to another, whatever its method, for up to
		# 10 s. /healthz has 5 s to answer, longer than the API's own 2 s per dependency, so a replica that
		# is slow under load is judged by what it answers, not left out by a race between two equal
		# timeouts (with every other replica gone, that would answer 503 for the whole try duration). Caddy 2.6.2 (Debian 12's) closes a request's body when a connection fails and
		# cannot send it again (caddyserver/caddy#7546, fixed upstream in 2026): reading the body into the
		# {http.request.body} placeholder first replaces it with an in-memory copy that survives that close
		# (bodies under 1 MB, the API's limit; a longer or unsized one is passed through as it comes).
		# No idle connections are kept (keepalive off): a request on a kept connection to a host that
		# went away would wait for an answer instead of failing to connect. A request an API took but
		# does not answer (a frozen host) ends after 75 s, longer than the API's slowest answer (a
		# recording waits up to 60 s for its egress worker).
		@replayable_body {
			not method GET HEAD OPTIONS
			header_regexp Content-Length ^[0-9]{1,6}$
		}
		vars @replayable_body replayable_body "{http.request.body}"
		reverse_proxy $local_api ${CONTROL_NODES//,/ } {
			lb_policy least_conn
			lb_try_duration 10s
			lb_try_interval 250ms
			fail_duration 10s
			max_fails 1
			health_uri /healthz
			health_interval 2s
			health_timeout 5s
			transport http {
				dial_timeout 3s
				keepalive off
				response_header_timeout 75s
			}
		}
EOF
}

# ---------------------------------------------------------------- the node (--join --role control)

CONTROL_KEYS=(DATABASE_URL TALLY_SECRETS_KEY TALLY_ADMIN_KEY TALLY_METRICS_TOKEN TALLY_PUBLIC_URL TALLY_HLS_DIR TALLY_WEBHOOK_ALLOW_CIDRS)

# install_control_deps: the API and worker bundles (the origin's dist/ when it is of these sources),
# the Prisma client they embed, and the dashboard the API serves (the origin's build when it is of
# these sources: Caddy balances /dashboard over the origin and its control nodes).
install_control_deps() {
  local dist="$TALLY_REPO/dist"
  if [[ "$(cat "$dist/.source" 2>/dev/null)" == "$(bundle_source_hash)" && -f "$dist/api.js" && -f "$dist/worker.js" && -d "$dist/node_modules" ]]; then
    log "    dist/: the origin's build of these sources, with its production dependencies: no npm install or build here"
  else
    run rm -f "$dist/.source"
    ensure_checkout_node_modules
    generate_prisma_client
    log "    npm run build of the API and the worker (dist/api.js, dist/worker.js)"
    run bash -c 'cd "$1" && node scripts/build.mjs api worker >/dev/null' _ "$TALLY_REPO"
    install_runtime_deps
  fi
  local dashboard="$TALLY_REPO/apps/dashboard/dist" hash
  hash="$(dashboard_source_hash)"
  if [[ "$(cat "$dashboard/.source" 2>/dev/null)" == "$hash" && -f "$dashboard/index.html" ]]; then
    log "    apps/dashboard/dist: built from these sources ($hash)"
  else
    ensure_checkout_node_modules
    log "    npm run build:dashboard (the API serves it at /dashboard)"
    run env NX_DAEMON=false NX_NO_CLOUD=true bash -c 'cd "$1" && npm run --silent build:dashboard >/dev/null' _ "$TALLY_REPO"
    stamp_dashboard
  fi
}

# resolve_control_dirs: the node's API and worker read and tidy the origin's recordings and live
# HLS directories, so they must be the origin's (a shared mount at the same path).
resolve_control_dirs() {
  RECORDINGS_DIR="${RECORDINGS_DIR_ARG:-${OLD[TALLY_RECORDINGS_DIR]:-${CLUSTER[ORIGIN_RECORDINGS_DIR]:-}}}"
  [[ "$RECORDINGS_DIR" == /* ]] || die "the origin's answer names no recordings directory"
  local dir label
  for label in recordings hls; do
    dir="$RECORDINGS_DIR"
    [[ "$label" == recordings ]] || dir="${CLUSTER[TALLY_HLS_DIR]:-}"
    if dry; then
      log "    $label directory: $dir (must be the origin's, mounted here, writable by $TALLY_USER)"
      continue
    fi
    [[ -d "$dir" ]] || die "$dir does not exist: mount the origin's $label directory there first (docs/cluster.md)"
    as_user "$TALLY_USER" test -w "$dir" -a -x "$dir" ||
      warn "$dir is not writable by $TALLY_USER: this node's worker cannot finalise or tidy files there (give it the origin's $TALLY_MEDIA_USER gid)"
    log "    $label directory: $dir (the origin's)"
  done
}

# control_env_content: the node's tally.env; the API and the worker read it (and the installer on
# re-runs, which keeps the lines an operator added, such as TALLY_CAPACITY_PROFILE).
control_env_content() {
  local content line written
  content="$(control_env_lines_written)"
  printf '%s\n' "$content"
  written=" $(sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' <<<"$content" | tr '\n' ' ') "
  local extra=()
  for line in "${OLD_EXTRA[@]}"; do
    [[ "$written" == *" ${line%%=*} "* ]] || extra+=("$line")
  done
  if ((${#extra[@]} > 0)); then
    echo "# Other settings (kept as found; set them as on the origin, e.g. TALLY_CAPACITY_PROFILE)"
    printf '%s\n' "${extra[@]}"
  fi
}

control_env_lines_written() {
  cat <<EOF
# Tally control node configuration, written by install.sh --join --role control: the origin's
# database and secrets (root and the tally user only, mode 640). ./install.sh --leave deletes it.
TALLY_HOME=$HOME_DIR
TALLY_NODE_ID=$JOIN_NAME
TALLY_NODE_ROLE=control
TALLY_ORIGIN_URL=$JOIN_URL
TALLY_HOST=0.0.0.0
TALLY_PORT=${PORT[api]}
TALLY_PUBLIC_URL=${CLUSTER[TALLY_PUBLIC_URL]:-}
DATABASE_URL=${CLUSTER[DATABASE_URL]:-}
# This node's own Redis user: DELETE /v1/nodes/$JOIN_NAME on the origin revokes it.
REDIS_URL=${CLUSTER[REDIS_URL]:-}$(join_sentinel_env_lines)
LIVEKIT_URL=http${CLUSTER[LIVEKIT_WS_URL]#ws}
LIVEKIT_PUBLIC_URL=${CLUSTER[LIVEKIT_WS_URL]:-}
LIVEKIT_API_KEY=${CLUSTER[LIVEKIT_API_KEY]:-}
LIVEKIT_API_SECRET=${CLUSTER[LIVEKIT_API_SECRET]:-}
TALLY_LIVEKIT_WS_URL=${CLUSTER[LIVEKIT_WS_URL]:-}
$(for key in TALLY_SECRETS_KEY TALLY_ADMIN_KEY TALLY_METRICS_TOKEN TALLY_WEBHOOK_ALLOW_CIDRS; do
    # The origin's, when it has one (an unset key stays unset here too).
    [[ -z "${CLUSTER[$key]:-}" ]] || echo "$key=${CLUSTER[$key]}"
  done)
# The origin's recordings and live HLS directories, mounted here at the same paths.
TALLY_RECORDINGS_DIR=$RECORDINGS_DIR
TALLY_HLS_DIR=${CLUSTER[TALLY_HLS_DIR]:-}
$(if [[ -n "${CLUSTER[TALLY_S3_BUCKET]:-}" ]]; then
    echo "# The origin's object store."
    for key in "${S3_KEYS[@]}"; do echo "$key=${CLUSTER[$key]:-}"; done
  fi)
# Installer settings (install.sh reads them on re-runs; the apps ignore them).
TALLY_NODE_IP=$NODE_IP
EOF
}

# start_control_services: the API (on the node IP) and the worker.
start_control_services() {
  service_start api
  WORKER_LOG_OFFSET="$(stat -c %s "$(log_file worker)" 2>/dev/null || echo 0)"
  service_start worker
  wait_healthy
  dry || log "    api: answering on $NODE_IP:${PORT[api]} (add it to --control-nodes on the origin for its Caddy to balance to it)"
}
