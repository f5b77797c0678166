#!/usr/bin/env bash
# ./install.sh --join URL --token T [--redis-replica]: makes this host a node of the origin at URL
# (with a replica of its Redis and a Sentinel, scripts/install/sentinel.sh), and
# ./install.sh --leave takes it out again (docs/cluster.md). Source it; do not execute it.
#
# The token is exchanged (POST URL/v1/nodes/join) for the cluster settings: the origin's Redis
# with this node's own ACL user, the LiveKit keys and the origin's webhook URL. They go into DIR/tally.env
# and DIR/livekit.yaml (mode 600); a re-run keeps them and never spends a second token.

declare -A CLUSTER=() # settings from the origin (or from an existing tally.env)

# is_private_host HOST -> 0 for loopback and RFC 1918 IPv4 addresses (and localhost).
is_private_host() {
  [[ "$1" == localhost ]] && return 0
  is_ipv4 "$1" || return 1
  [[ "$1" =~ ^(127|10)\. || "$1" =~ ^192\.168\. || "$1" =~ ^172\.(1[6-9]|2[0-9]|3[01])\. ]]
}

# check_origin_url: https://, or http:// to a loopback/private address with --insecure-http (the
# answer carries the Redis password and the LiveKit secret).
check_origin_url() {
  [[ "$JOIN_URL" =~ ^(https?)://([^/:]+)(:[0-9]+)?$ ]] || die "--join needs the origin's base URL, like https://origin.example:8080 (got: $JOIN_URL)"
  local scheme="${BASH_REMATCH[1]}" host="${BASH_REMATCH[2]}"
  if [[ "$scheme" == http ]]; then
    is_private_host "$host" || die "refusing plain HTTP to $host: the cluster secrets would cross the network in clear text; use https://"
    [[ "$INSECURE_HTTP" == 1 ]] || die "refusing plain HTTP to $JOIN_URL without --insecure-http (allowed for loopback and private addresses only)"
    warn "plain HTTP to $host (--insecure-http): the cluster secrets cross that network unencrypted"
  fi
  log "    origin: $JOIN_URL, role $JOIN_ROLE, node $JOIN_NAME"
}

# provision_role: only what the role runs (scripts/provision/*.sh are idempotent).
provision_role() {
  local scripts=(system.sh)
  case "$JOIN_ROLE" in
    media) scripts+=("livekit.sh livekit-server") ;; # lk (the CLI) is for tests, not for a node
    worker) scripts+=(egress.sh ingress.sh) ;;
    gpu) scripts+=(egress.sh) ;;
    control) ;; # the API and worker need Node (the runtimes step) and ffmpeg (system.sh)
  esac
  if [[ "$DO_PROVISION" == 0 ]]; then
    log "    skipped (--no-provision): ${scripts[*]}"
    return 0
  fi
  local script
  for script in "${scripts[@]}"; do
    if dry; then
      log "    would run: bash $TALLY_REPO/scripts/provision/$script"
    else
      # shellcheck disable=SC2086 # a script and its arguments
      bash "$TALLY_REPO"/scripts/provision/$script | sed 's/^/[install]     /'
    fi
  done
}

# The agent needs node_modules and its build, not the Prisma client or the dashboard; or the
# origin's build of the same sources (fetch_origin_artifacts), which needs neither.
install_join_deps() {
  local dist="$TALLY_REPO/dist" hash
  hash="$(bundle_source_hash)"
  if [[ "$(cat "$dist/.source" 2>/dev/null)" == "$hash" && -f "$dist/agent.js" && -f "$dist/agent-leave.js" && -d "$dist/node_modules" ]]; then
    log "    dist/: the origin's build of these sources ($hash), with its production dependencies: no npm install or build here"
    return 0
  fi
  run rm -f "$dist/.source"
  ensure_checkout_node_modules
  log "    npm run build of the agent (dist/agent.js, dist/agent-leave.js)"
  run bash -c 'cd "$1" && node scripts/build.mjs agent agent-leave >/dev/null' _ "$TALLY_REPO"
  install_runtime_deps
}

# The origin's object store, from the join answer's objectStore (kept on re-runs).
S3_KEYS=(TALLY_S3_BUCKET TALLY_S3_ENDPOINT TALLY_S3_REGION TALLY_S3_FORCE_PATH_STYLE TALLY_S3_ACCESS_KEY TALLY_S3_SECRET_KEY)
# The origin's TURN over TLS server, from the join answer's turn (media nodes; kept on re-runs).
TURN_KEYS=(TALLY_CLUSTER_TURN_HOST TALLY_CLUSTER_TURN_PORT TALLY_CLUSTER_TURN_SECRET)

# exchange_join_token: fills CLUSTER from the origin, or from DIR/tally.env when this home
# already joined as the same node.
exchange_join_token() {
  if [[ -n "${OLD[TALLY_NODE_ROLE]:-}" && "${OLD[TALLY_NODE_ID]:-}" == "$JOIN_NAME" && -n "${OLD[REDIS_URL]:-}" ]]; then
    local key
    for key in REDIS_URL REDIS_SENTINELS REDIS_SENTINEL_NAME LIVEKIT_API_KEY LIVEKIT_API_SECRET TALLY_LIVEKIT_WEBHOOK_URL "${S3_KEYS[@]}" "${TURN_KEYS[@]}" "${CONTROL_KEYS[@]}"; do
      CLUSTER[$key]="${OLD[$key]:-}"
    done
    CLUSTER[LIVEKIT_WS_URL]="${OLD[TALLY_LIVEKIT_WS_URL]:-}"
    log "    already joined as $JOIN_NAME ($ENV_FILE): keeping its settings, the token is not used"
    if [[ "${OLD[TALLY_REDIS_REPLICA]:-0}" == 1 ]]; then
      # The replica's and the Sentinel's files stay as they are; the Sentinel's password is read back.
      SENTINEL_PASSWORD="$(sed -n 's/^sentinel sentinel-pass //p' "$HOME_DIR/sentinel/sentinel.conf" 2>/dev/null || true)"
    elif [[ "$JOIN_REDIS_REPLICA" == 1 ]]; then
      die "$JOIN_NAME joined without --redis-replica; to add a replica: ./install.sh --leave, then join again with a token made with redisReplica: true"
    fi
    return 0
  fi
  [[ "$JOIN_TOKEN" =~ ^[A-Za-z0-9_-]+$ ]] || die "--token has unexpected characters"
  local body response status
  local replica_field=""
  [[ "$JOIN_REDIS_REPLICA" == 0 ]] || replica_field=',"redisReplica":true'
  body="{\"token\":\"$JOIN_TOKEN\",\"name\":\"$JOIN_NAME\",\"role\":\"$JOIN_ROLE\"$replica_field}"
  if dry; then
    if [[ "$JOIN_REDIS_REPLICA" == 1 ]]; then
      log "    would POST $JOIN_URL/v1/nodes/join {name: $JOIN_NAME, role: $JOIN_ROLE, redisReplica: true, token} for the cluster settings, the Sentinels and the replication credentials"
    else
      log "    would POST $JOIN_URL/v1/nodes/join {name: $JOIN_NAME, role: $JOIN_ROLE, token} for the cluster settings"
    fi
    CLUSTER=([REDIS_URL]="redis://tally-node-$JOIN_NAME:PASSWORD@ORIGIN:6379" [LIVEKIT_API_KEY]=KEY [LIVEKIT_API_SECRET]=SECRET
      [TALLY_LIVEKIT_WEBHOOK_URL]="$JOIN_URL/webhooks/livekit" [LIVEKIT_WS_URL]="ws://ORIGIN:7880")
    if [[ "$JOIN_ROLE" == control ]]; then
      CLUSTER+=([DATABASE_URL]="postgresql://tally:PASSWORD@ORIGIN:5432/tally" [TALLY_SECRETS_KEY]=SECRETS_KEY [TALLY_ADMIN_KEY]=ADMIN_KEY
        [TALLY_PUBLIC_URL]="$JOIN_URL" [ORIGIN_RECORDINGS_DIR]=/var/lib/tally/recordings [TALLY_HLS_DIR]=/var/lib/tally/hls)
      log "    (role control: also the origin's database URL, secrets key, admin key and metrics token)"
    fi
    if [[ "$JOIN_REDIS_REPLICA" == 1 ]]; then
      CLUSTER+=([REDIS_SENTINELS]="ORIGIN:26379" [REDIS_SENTINEL_NAME]=tally [REPLICA_PRIMARY]="ORIGIN:6379"
        [REDIS_SERVER_USERS]="$(printf '%s\n' '# user default on #SHA256 ~* &* +@all (the origin'"'"'s users, from the join answer)' | base64 -w0)")
      REPLICATION_PASSWORD=REPLICATION_PASSWORD SENTINEL_PASSWORD=SENTINEL_PASSWORD
    fi
    return 0
  fi
  response="$(curl -sS -m 30 -X POST -H 'content-type: application/json' --data "$body" -w '\n%{http_code}' \
    "$JOIN_URL/v1/nodes/join")" || die "could not reach $JOIN_URL"
  status="${response##*$'\n'}"
  response="${response%$'\n'*}"
  case "$status" in
    200) ;;
    401) die "the origin refused the token (unknown, expired, already used, or made for another role or name$([[ "$JOIN_REDIS_REPLICA" == 0 ]] || echo ", or without redisReplica")): create one for --role $JOIN_ROLE --name $JOIN_NAME$([[ "$JOIN_REDIS_REPLICA" == 0 ]] || echo " and redisReplica: true") with POST /v1/nodes/join-tokens" ;;
    *) die "the origin answered $status: $response" ;;
  esac
  local line
  # shellcheck disable=SC2016 # JavaScript, not shell
  while IFS= read -r line; do
    CLUSTER[${line%%=*}]="${line#*=}"
  done < <(node -e '
    const s = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const out = { REDIS_URL: s.redisUrl, LIVEKIT_API_KEY: s.livekit.apiKey, LIVEKIT_API_SECRET: s.livekit.apiSecret,
      TALLY_LIVEKIT_WEBHOOK_URL: s.livekit.webhookUrl, LIVEKIT_WS_URL: s.livekit.wsUrl, ORIGIN_RECORDINGS_DIR: s.recordingsDir };
    const o = s.objectStore;
    if (o) Object.assign(out, { TALLY_S3_BUCKET: o.bucket, TALLY_S3_ENDPOINT: o.endpoint, TALLY_S3_REGION: o.region,
      TALLY_S3_FORCE_PATH_STYLE: String(o.forcePathStyle), TALLY_S3_ACCESS_KEY: o.accessKeyId, TALLY_S3_SECRET_KEY: o.secretAccessKey });
    if (s.redisSentinel) Object.assign(out, { REDIS_SENTINELS: s.redisSentinel.addresses.join(","), REDIS_SENTINEL_NAME: s.redisSentinel.name });
    const r = s.redisReplica;
    if (r) Object.assign(out, { REPLICA_PRIMARY: r.primary, REPLICATION_PASSWORD: r.replicationPassword, SENTINEL_PASSWORD: r.sentinelPassword,
      REDIS_SERVER_USERS: Buffer.from(r.serverUsers.map((l) => l + "\n").join("")).toString("base64") });
    const c = s.control;
    if (c) Object.assign(out, { DATABASE_URL: c.databaseUrl, TALLY_SECRETS_KEY: c.secretsKey ?? "", TALLY_ADMIN_KEY: c.adminKey ?? "",
      TALLY_METRICS_TOKEN: c.metricsToken ?? "", TALLY_PUBLIC_URL: c.publicUrl, TALLY_HLS_DIR: c.hlsDir,
      TALLY_WEBHOOK_ALLOW_CIDRS: c.webhookAllowCidrs.join(",") });
    const t = s.turn;
    if (t) Object.assign(out, { TALLY_CLUSTER_TURN_HOST: t.host, TALLY_CLUSTER_TURN_PORT: String(t.port), TALLY_CLUSTER_TURN_SECRET: t.secret });
    for (const [k, v] of Object.entries(out)) if (typeof v === "string" && !/[\s"]/.test(v)) console.log(`${k}=${v}`);
  ' <<<"$response")
  [[ -n "${CLUSTER[REDIS_URL]:-}" && -n "${CLUSTER[LIVEKIT_API_SECRET]:-}" ]] || die "the origin's answer lacks the cluster settings: $response"
  [[ "$JOIN_ROLE" != control || -n "${CLUSTER[DATABASE_URL]:-}" ]] || die "the origin's answer lacks the control-plane settings: $response"
  if [[ "$JOIN_REDIS_REPLICA" == 1 ]]; then
    [[ -n "${CLUSTER[REPLICA_PRIMARY]:-}" && -n "${CLUSTER[REDIS_SENTINELS]:-}" ]] || die "the origin's answer lacks the replication settings: $response"
    REPLICATION_PASSWORD="${CLUSTER[REPLICATION_PASSWORD]}" SENTINEL_PASSWORD="${CLUSTER[SENTINEL_PASSWORD]}"
  fi
  log "    joined: settings received (Redis ${CLUSTER[REDIS_URL]##*@})"
}

# join_turn_tls_on: the origin handed over its TURN over TLS server (and this is a media node).
join_turn_tls_on() { [[ "$JOIN_ROLE" == media && -n "${CLUSTER[TALLY_CLUSTER_TURN_HOST]:-}" ]]; }

# check_join_turn: what the origin handed over fits livekit.yaml as it is (host, port, secret).
check_join_turn() {
  [[ "$JOIN_ROLE" == media ]] || return 0
  if ! join_turn_tls_on; then
    log "    TURN/TLS: off (the origin serves none; install.sh --domain there turns it on, then re-join this node)"
    return 0
  fi
  [[ "${CLUSTER[TALLY_CLUSTER_TURN_HOST]}" =~ ^[A-Za-z0-9.-]+$ && "${CLUSTER[TALLY_CLUSTER_TURN_PORT]:-}" =~ ^[0-9]+$ &&
    "${CLUSTER[TALLY_CLUSTER_TURN_SECRET]:-}" =~ ^[A-Za-z0-9._~+/=-]+$ ]] || die "the origin's TURN settings are malformed"
  log "    TURN/TLS: participants on this node get turns:${CLUSTER[TALLY_CLUSTER_TURN_HOST]}:${CLUSTER[TALLY_CLUSTER_TURN_PORT]} (the origin's coturn)"
  warn "the origin's coturn relays only to addresses it allows: on the origin, add $NODE_IP to TALLY_TURN_ALLOWED_PEERS in tally.env and re-run install.sh there (docs/cluster.md)"
}

# resolve_recordings_dir: where this node's agent reads recordings and writes ladders (and its
# egress writes recordings): --recordings-dir, else the remembered one, else DIR/recordings. The
# origin serves files from its own recordings directory, so a node that takes such work needs
# that directory mounted, writable by the media user (the agent and its egress run as it).
resolve_recordings_dir() {
  RECORDINGS_DIR="${RECORDINGS_DIR_ARG:-${OLD[TALLY_RECORDINGS_DIR]:-}}"
  # The default remembered from an earlier run is not a mount to check.
  [[ -n "$RECORDINGS_DIR_ARG" || "$RECORDINGS_DIR" != "$HOME_DIR/recordings" ]] || RECORDINGS_DIR=""
  if [[ -z "$RECORDINGS_DIR" && -n "${CLUSTER[TALLY_S3_BUCKET]:-}" && "${CLUSTER[ORIGIN_RECORDINGS_DIR]:-}" == /* ]]; then
    # The origin keeps recordings in object storage: no shared mount. Egress writes where the origin
    # asks (its recordings directory's path), here on this node, and the agent stages each finished
    # file in the bucket for the origin (docs/adr/0033-nodes-stage-recordings-in-the-bucket.md).
    RECORDINGS_DIR="${CLUSTER[ORIGIN_RECORDINGS_DIR]}"
    log "    recordings directory: $RECORDINGS_DIR (this node's own; recordings are staged in the origin's bucket ${CLUSTER[TALLY_S3_BUCKET]})"
    if ! dry; then
      mkdir -p "$RECORDINGS_DIR"
      chown "$AGENT_USER" "$RECORDINGS_DIR"
      chmod 2770 "$RECORDINGS_DIR"
    fi
    return 0
  fi
  if [[ -z "$RECORDINGS_DIR" ]]; then
    RECORDINGS_DIR="$HOME_DIR/recordings"
    warn "no --recordings-dir: ladders and recordings placed on this node go to $RECORDINGS_DIR, which the origin does not see; mount the origin's recordings directory and pass --recordings-dir (docs/cluster.md)"
    return 0
  fi
  if dry; then
    log "    recordings directory: $RECORDINGS_DIR (must be the origin's, writable by $AGENT_USER)"
    return 0
  fi
  [[ -d "$RECORDINGS_DIR" ]] || die "--recordings-dir $RECORDINGS_DIR does not exist: mount the origin's recordings directory there first"
  as_user "$AGENT_USER" test -w "$RECORDINGS_DIR" -a -x "$RECORDINGS_DIR" ||
    die "--recordings-dir $RECORDINGS_DIR is not writable by $AGENT_USER (uid $(id -u "$AGENT_USER")): give it the uid or gid that owns it on the origin (its $TALLY_MEDIA_USER)"
  log "    recordings directory: $RECORDINGS_DIR (shared with the origin, writable by $AGENT_USER)"
}

# join_sentinel_env_lines: with Redis under Sentinel (docs/cluster.md), the lines that follow
# REDIS_URL, each after a newline; nothing otherwise.
join_sentinel_env_lines() {
  [[ -n "${CLUSTER[REDIS_SENTINELS]:-}" ]] || return 0
  printf '\n%s' "# Redis with Sentinel: the Sentinels name the primary; REDIS_URL gives the user." \
    "REDIS_SENTINELS=${CLUSTER[REDIS_SENTINELS]}" "REDIS_SENTINEL_NAME=${CLUSTER[REDIS_SENTINEL_NAME]:-tally}"
  [[ "$JOIN_REDIS_REPLICA" == 1 ]] || return 0
  printf '\n%s' "# This node runs a replica of the group's Redis and a Sentinel (--redis-replica; install.sh reads these)." \
    "TALLY_REDIS_REPLICA=1" "TALLY_REDIS_PORT=${PORT[redis]}" "TALLY_SENTINEL_PORT=${PORT[sentinel]}"
}

# resolve_join_sentinel: a --redis-replica node's Sentinel is its own processes' first.
resolve_join_sentinel() {
  [[ "$JOIN_REDIS_REPLICA" == 1 ]] || return 0
  REDIS_SENTINEL=1
  SENTINEL_ADDRESS="$NODE_IP:${PORT[sentinel]}"
  CLUSTER[REDIS_SENTINELS]="$(replica_sentinels_line "${CLUSTER[REDIS_SENTINELS]:-}")"
  log "    redis: a replica on $NODE_IP:${PORT[redis]} and a Sentinel on $SENTINEL_ADDRESS (group ${CLUSTER[REDIS_SENTINEL_NAME]:-tally}, quorum $SENTINEL_QUORUM; Sentinels ${CLUSTER[REDIS_SENTINELS]})"
}

# shellcheck disable=SC2153 # NODE_IP is set by resolve_network (config.sh)
join_env_content() {
  local livekit_url="http://127.0.0.1:${PORT[livekit]}"
  # A worker has no livekit-server: its egress talks to the origin's.
  if [[ "$JOIN_ROLE" != media ]]; then livekit_url="http${CLUSTER[LIVEKIT_WS_URL]#ws}"; fi
  cat <<EOF
# Tally node configuration, written by install.sh --join (cluster secrets: root and the agent's
# user only, mode 640).
# ./install.sh --leave drains this node and deletes this file.
TALLY_HOME=$HOME_DIR
TALLY_NODE_ID=$JOIN_NAME
TALLY_NODE_ROLE=$JOIN_ROLE
TALLY_ORIGIN_URL=$JOIN_URL
REDIS_URL=${CLUSTER[REDIS_URL]}$(join_sentinel_env_lines)
LIVEKIT_URL=$livekit_url
LIVEKIT_API_KEY=${CLUSTER[LIVEKIT_API_KEY]}
LIVEKIT_API_SECRET=${CLUSTER[LIVEKIT_API_SECRET]}
TALLY_LIVEKIT_WEBHOOK_URL=${CLUSTER[TALLY_LIVEKIT_WEBHOOK_URL]}
TALLY_LIVEKIT_WS_URL=${CLUSTER[LIVEKIT_WS_URL]}
TALLY_HEARTBEAT_INTERVAL_S=${TALLY_HEARTBEAT_INTERVAL_S:-${OLD[TALLY_HEARTBEAT_INTERVAL_S]:-5}}
# The budget the agent advertises: empty = what it measures (apps/agent/README.md).
TALLY_NODE_CPU_MILLICORES=${TALLY_NODE_CPU_MILLICORES:-${OLD[TALLY_NODE_CPU_MILLICORES]:-}}
TALLY_NODE_RAM_MB=${TALLY_NODE_RAM_MB:-${OLD[TALLY_NODE_RAM_MB]:-}}
TALLY_NODE_NIC_MBPS=${TALLY_NODE_NIC_MBPS:-${OLD[TALLY_NODE_NIC_MBPS]:-}}
TALLY_NODE_NVENC_SESSIONS=${TALLY_NODE_NVENC_SESSIONS:-${OLD[TALLY_NODE_NVENC_SESSIONS]:-}}
# The origin's recordings directory, mounted here (ladders are read and written there), or, with the
# origin's object store below, this node's own directory at the same path.
TALLY_RECORDINGS_DIR=$RECORDINGS_DIR
$(if [[ -n "${CLUSTER[TALLY_S3_BUCKET]:-}" ]]; then
    echo "# The origin's object store: the agent stages what this node's egress writes there."
    for key in "${S3_KEYS[@]}"; do echo "$key=${CLUSTER[$key]:-}"; done
  fi)
$(if join_turn_tls_on; then
    echo "# The origin's TURN over TLS server, which livekit-server hands this node's participants."
    for key in "${TURN_KEYS[@]}"; do echo "$key=${CLUSTER[$key]:-}"; done
  fi)
# Media workers the agent runs on demand (docs/workers.md): egress on worker and gpu nodes.
TALLY_WORKER_RUNTIME=$(if [[ "$JOIN_ROLE" == media ]]; then echo none; else echo "${OLD[TALLY_WORKER_RUNTIME]:-native}"; fi)
TALLY_WORKERS_DIR=$HOME_DIR/workers
TALLY_EGRESS_BIN=$HOME_DIR/bin/egress
$(if [[ "$JOIN_ROLE" == worker ]]; then echo "TALLY_INGRESS_BIN=$HOME_DIR/bin/ingress" && ingress_port_env_lines; fi)
# Installer settings (install.sh reads them on re-runs; the apps ignore them).
TALLY_NODE_IP=$NODE_IP
TALLY_OFFLINE=$OFFLINE
TALLY_STUN_SERVERS=$STUN_SERVERS
TALLY_LIVEKIT_PORT=${PORT[livekit]}
TALLY_RTC_TCP_PORT=${PORT[rtc-tcp]}
TALLY_RTC_UDP_PORT=${PORT[rtc-udp]}
TALLY_TURN_UDP_PORT=${PORT[turn-udp]}
TALLY_EGRESS_TEMPLATE_PORT=${PORT[egress-template]}
EOF
}

# livekit-server in LiveKit's multi-node mode: the origin's Redis and keys; rooms are placed on
# the node with the lowest system load.
join_livekit_yaml_content() {
  local url="${CLUSTER[REDIS_URL]}" username="" password="" address
  [[ "$url" =~ ^rediss?://(([^:@]*):([^@]*)@)?([^/]+) ]] || die "unexpected Redis URL from the origin"
  username="${BASH_REMATCH[2]}" password="${BASH_REMATCH[3]}" address="${BASH_REMATCH[4]}"
  cat <<EOF
# livekit-server on a joined media node, written by install.sh --join.
port: ${PORT[livekit]}
rtc:
  tcp_port: ${PORT[rtc-tcp]}
  udp_port: ${PORT[rtc-udp]}
  node_ip: $NODE_IP
EOF
  livekit_stun_yaml
  if join_turn_tls_on; then
    turn_servers_yaml "${CLUSTER[TALLY_CLUSTER_TURN_HOST]}" "${CLUSTER[TALLY_CLUSTER_TURN_PORT]}" "${CLUSTER[TALLY_CLUSTER_TURN_SECRET]}" "the origin's coturn"
  fi
  livekit_turn_yaml
  livekit_redis_yaml "$address" "$username" "$password" "${CLUSTER[REDIS_SENTINELS]:-}" "${CLUSTER[REDIS_SENTINEL_NAME]:-}"
  cat <<EOF
node_selector:
  kind: sysload
  sysload_limit: 0.9
# Only Tally creates rooms (after admitting the stream): a kept token cannot bring an ended stream back.
room:
  auto_create: false
keys:
  ${CLUSTER[LIVEKIT_API_KEY]}: ${CLUSTER[LIVEKIT_API_SECRET]}
webhook:
  api_key: ${CLUSTER[LIVEKIT_API_KEY]}
  urls:
    - ${CLUSTER[TALLY_LIVEKIT_WEBHOOK_URL]}
logging:
  level: info
EOF
}

write_join_config() {
  prepare_home
  if [[ "$JOIN_ROLE" == control ]]; then
    # The API and the worker read it (as the tally user); the origin's secrets are in it.
    write_file "$HOME_DIR/tally.env" 640 "root:$TALLY_USER" < <(control_env_content)
    install_node_binary
    return 0
  fi
  # The agent is the only service reading it.
  write_file "$HOME_DIR/tally.env" 640 "root:$AGENT_USER" < <(join_env_content)
  install_node_binary
  write_replica_config
  if [[ "$JOIN_ROLE" == media ]]; then
    write_file "$HOME_DIR/livekit.yaml" 640 "root:$TALLY_LIVEKIT_USER" < <(join_livekit_yaml_content)
    install_tool_binary livekit-server
  else
    install_tool_binary egress
    if [[ "$JOIN_ROLE" == worker ]]; then install_tool_binary ingress; fi
  fi
}

node_heartbeating() {
  [[ "$(redis_cli_url "${CLUSTER[REDIS_URL]}" EXISTS "tally:{nodes}:hb:$JOIN_NAME" 2>/dev/null)" == 1 ]]
}

start_join_services() {
  if [[ "$JOIN_ROLE" == control ]]; then
    start_control_services
    return 0
  fi
  start_replica_services
  if [[ "$JOIN_ROLE" == media ]]; then
    service_start livekit
    if ! dry; then
      wait_until 30 livekit-server livekit_ready || service_fail livekit
      log "    livekit-server: answering on 127.0.0.1:${PORT[livekit]}, in the origin's multi-node pool"
    fi
  fi
  service_start agent
  if ! dry; then
    wait_until 30 "agent heartbeat" node_heartbeating || service_fail agent
    log "    agent: node $JOIN_NAME heartbeats into the origin's pool"
  fi
  if [[ "$JOIN_ROLE" != media ]]; then ensure_egress_upload_dir; fi
}

join_main() {
  step "preflight"
  preflight
  check_origin_url
  step "built files from the origin (binaries, runtimes, dist/)"
  fetch_origin_artifacts
  step "runtimes: Node.js (pinned; the origin's copy or the npm registry); Go only if something is built"
  ensure_runtimes node
  step "system packages and binaries for the $JOIN_ROLE role"
  provision_role
  step "node dependencies"
  if [[ "$JOIN_ROLE" == control ]]; then install_control_deps; else install_join_deps; fi
  step "service users"
  ensure_service_users
  step "cluster settings from the origin"
  load_existing_env
  select_service_mode
  resolve_agent_user
  exchange_join_token
  step "configuration in $HOME_DIR"
  want_sentinel_port
  resolve_ports
  resolve_network
  resolve_join_sentinel
  if [[ "$JOIN_ROLE" == media ]]; then resolve_stun; fi
  check_join_turn
  if [[ "$JOIN_ROLE" == control ]]; then resolve_control_dirs; else resolve_recordings_dir; fi
  write_join_config
  if [[ "$JOIN_ROLE" == media ]]; then
    step "kernel UDP buffers"
    tune_kernel
  fi
  step "services for the $JOIN_ROLE role$([[ "$JOIN_REDIS_REPLICA" == 0 ]] || echo ", the Redis replica and its Sentinel")"
  request_agent_hand_over
  start_join_services
  step "what the $JOIN_ROLE role's features need"
  verify_features "$JOIN_ROLE"
  end_step
  remove_join_artifacts
  if dry; then
    log "dry run finished: nothing was changed"
    return 0
  fi
  log "node $JOIN_NAME ($JOIN_ROLE) joined $JOIN_URL; leave with: ./install.sh --leave --home $HOME_DIR"
  runtimes_summary | sed 's/^/[install]   Runtime:    /'
  print_step_times
}

# run_leave_step drain: dist/agent-leave.js (apps/agent/src/leave.ts) with only tally.env as environment.
run_leave_step() {
  if dry; then
    log "    would run: node dist/agent-leave.js $1 (env $HOME_DIR/tally.env)"
    return 0
  fi
  (cd "$TALLY_REPO" && env -i PATH="$TALLY_SERVICE_PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 \
    TALLY_LEAVE_TIMEOUT_S="${TALLY_LEAVE_TIMEOUT_S:-600}" "$NODE_BIN" --env-file="$HOME_DIR/tally.env" \
    dist/agent-leave.js "$1") 2>&1 | sed 's/^/[install]     /'
  return "${PIPESTATUS[0]}"
}

# origin_node_call drain|leave: the origin sets this node draining and answers what still runs on
# it (POST /v1/nodes/ID/drain), or takes it out of the pool and deletes its Redis user at once
# (POST /v1/nodes/ID/leave); the node's own Redis password is the credential.
origin_node_call() {
  local action="$1" origin id url password response status
  origin="$(sed -n 's/^TALLY_ORIGIN_URL=//p' "$ENV_FILE")"
  id="$(sed -n 's/^TALLY_NODE_ID=//p' "$ENV_FILE")"
  url="$(sed -n 's/^REDIS_URL=//p' "$ENV_FILE")"
  [[ "$url" =~ ^rediss?://[^:@/]*:([^@]+)@ ]] || die "$ENV_FILE has no Redis password: re-run the --join"
  password="${BASH_REMATCH[1]}"
  if dry; then
    log "    would POST $origin/v1/nodes/$id/$action (the node's Redis password as its credential)"
    return 0
  fi
  # The header comes from stdin, so the password stays out of the process list.
  response="$(curl -sS -m 30 -w '\n%{http_code}' -X POST -K - "$origin/v1/nodes/$id/$action" \
    <<<"header = \"authorization: Bearer $password\"")" || die "could not reach $origin: remove the node there with DELETE /v1/nodes/$id"
  status="${response##*$'\n'}"
  response="${response%$'\n'*}"
  [[ "$status" == 200 || "$status" == 204 ]] || die "the origin answered $status to the node's $action: remove it there with DELETE /v1/nodes/$id"
  case "$action" in
    drain)
      log "    node $id: draining (no new work is placed on it)"
      # shellcheck disable=SC2016 # JavaScript, not shell
      "$NODE_BIN" -e '
        const { running } = JSON.parse(require("fs").readFileSync(0, "utf8"));
        if (running.length > 0) console.log(`node ${process.argv[1]}: waiting for ${running.length} to finish: ${running.join(", ")}`);
      ' "$id" <<<"$response" | sed 's/^/[install]     /'
      ;;
    leave) log "    node $id: out of the pool, its Redis user deleted" ;;
  esac
}

leave_main() {
  ENV_FILE="$HOME_DIR/tally.env"
  [[ -r "$ENV_FILE" ]] || die "$ENV_FILE not found: nothing joined from $HOME_DIR"
  local role
  role="$(sed -n 's/^TALLY_NODE_ROLE=//p' "$ENV_FILE")"
  [[ "$role" =~ ^(media|worker|gpu|control)$ ]] || die "$HOME_DIR is not a joined node (TALLY_NODE_ROLE=${role:-unset}); stop an origin with --stop"
  dry || [[ "$(id -u)" -eq 0 ]] || die "--leave must run as root"
  NODE_BIN="$HOME_DIR/bin/node"
  dry || [[ -x "$NODE_BIN" ]] || die "$NODE_BIN not found: re-run the --join first"
  SERVICE_MODE="$(recorded_mode)"
  if [[ "$role" != control ]]; then # a control node holds no reservations: the other replicas go on
    step "drain (no new work; running work finishes, up to ${TALLY_LEAVE_TIMEOUT_S:-600}s)"
    origin_node_call drain
    local status=0
    run_leave_step drain || status=$?
    ((status == 0)) || die "the node is still draining (work still runs on it); re-run --leave later, or --stop to cut it off"
  fi
  local replica=0
  [[ "$(sed -n 's/^TALLY_REDIS_REPLICA=//p' "$ENV_FILE")" != 1 ]] || replica=1
  if [[ "$replica" == 1 ]]; then
    step "hand the Redis replica and the Sentinel over"
    leave_replica_hand_over
  fi
  step "stop the services"
  cancel_agent_hand_over
  [[ -z "$SERVICE_MODE" ]] || stop_all_services
  if [[ "$replica" == 1 ]]; then
    step "the other Sentinels forget this node's replica and Sentinel"
    leave_replica_forget
  fi
  step "remove from the pool and revoke this node's Redis user"
  origin_node_call leave
  step "delete the cluster credentials$([[ "$replica" == 0 ]] || echo " and the replica's data")"
  run rm -rf "$ENV_FILE" "$HOME_DIR/livekit.yaml" "$HOME_DIR/workers"
  if [[ "$replica" == 1 ]]; then run rm -rf "$HOME_DIR/redis" "$HOME_DIR/sentinel"; fi
  log "left the cluster; join again with a new token: ./install.sh --join URL --token T --home $HOME_DIR"
}
