#!/usr/bin/env bash
# Configuration under DIR: tally.env, livekit.yaml, admin.key, the layout of DIR, ports and
# the media address (egress.yaml is rendered later, by scripts/install/egress.sh, once the agent
# reports this node's budget). Source it; do not execute it.
#
# DIR/tally.env is the source of truth on re-runs: secrets, ports, the node IP and tunables
# found there are kept; only what flags change is rewritten.

declare -A OLD=()          # KEY=VALUE lines of an existing DIR/tally.env
declare -a OLD_EXTRA=()    # its lines this script does not manage (kept verbatim)
declare -A PORT=()         # resolved ports, by key (api pg redis livekit rtc-tcp rtc-udp egress-template)
declare -A PORT_DEFAULT=([api]=8080 [pg]=5432 [redis]=6379 [livekit]=7880 [rtc-tcp]=7881 [rtc-udp]=7882
  [turn-udp]=3478 [turn-tls]=5349 [egress-template]=7980)
declare -A PORT_ENV_KEY=([api]=TALLY_PORT [pg]=TALLY_PG_PORT [redis]=TALLY_REDIS_PORT
  [livekit]=TALLY_LIVEKIT_PORT [rtc-tcp]=TALLY_RTC_TCP_PORT [rtc-udp]=TALLY_RTC_UDP_PORT
  [turn-udp]=TALLY_TURN_UDP_PORT [turn-tls]=TALLY_TURN_TLS_PORT [egress-template]=TALLY_EGRESS_TEMPLATE_PORT)
declare -A PORT_SERVICE=([api]=api [pg]=postgres [redis]=redis [livekit]=livekit [rtc-tcp]=livekit [rtc-udp]=livekit
  [turn-udp]=livekit [turn-tls]=turn [egress-template]=agent) # egress runs under the agent; turn: coturn (turn.sh)
PORT_KEYS=(api pg redis livekit rtc-tcp rtc-udp turn-udp turn-tls egress-template)
# The ingress ports (scripts/install/features.sh) join these arrays.

# Tunables: kept from tally.env when present, else these defaults (the schema's). Only those
# libs/config/src/config.schema.ts still declares are written (see tunable_keys).
declare -A TUNABLE_DEFAULT=([TALLY_HOST]=0.0.0.0 [TALLY_LOG_LEVEL]=info [TALLY_DEFAULT_MAX_STREAMS]=10
  [TALLY_STREAM_JOIN_TIMEOUT_S]=300 [TALLY_SWEEP_INTERVAL_S]=30)
# The disk watermarks (docs/recordings.md, "Disk watermark"): free space kept on each media filesystem.
TUNABLE_DEFAULT+=([TALLY_DISK_STOP_FREE_PERCENT]=2 [TALLY_DISK_STOP_FREE_MIN_MB]=2 [TALLY_DISK_STOP_FREE_MAX_MB]=2048
  [TALLY_DISK_ALERT_FREE_PERCENT]=10 [TALLY_DISK_ALERT_FREE_MAX_MB]=20480 [TALLY_DISK_RESERVE_MAX_MB]=256)
# Usage metering (docs/adr/0028-usage-metering.md): how long hourly usage is kept.
TUNABLE_DEFAULT+=([TALLY_METERING_RETENTION_MONTHS]=13)
TUNABLE_KEYS=()
# Everything else install.sh writes into tally.env.
MANAGED_KEYS=(TALLY_HOME TALLY_PORT TALLY_PUBLIC_URL DATABASE_URL TALLY_DATABASE REDIS_URL TALLY_MEDIA_REDIS_URL LIVEKIT_URL LIVEKIT_PUBLIC_URL
  LIVEKIT_API_KEY LIVEKIT_API_SECRET TALLY_SECRETS_KEY TALLY_NODE_IP TALLY_OFFLINE TALLY_PG_PORT
  TALLY_REDIS_PORT TALLY_LIVEKIT_PORT TALLY_RTC_TCP_PORT TALLY_RTC_UDP_PORT TALLY_TURN_UDP_PORT TALLY_TURN_TLS_PORT
  TALLY_EGRESS_TEMPLATE_PORT TALLY_CLUSTER_BIND TALLY_CLUSTER_REDIS_URL TALLY_WORKER_RUNTIME TALLY_WORKERS_DIR
  TALLY_EGRESS_BIN TALLY_STUN_SERVERS TALLY_CONTROL_NODES TALLY_CLUSTER_DATABASE_URL)
# Keys earlier versions wrote that nothing reads any more: dropped from tally.env on a re-run. Egress
# and ingress run with no status port (they would bind it on every address).
RETIRED_KEYS=(TALLY_EGRESS_PORT TALLY_INGRESS_HEALTH_PORT)

ENV_FILE=""
NODE_IP=""
NODE_IP_SOURCE=""
OFFLINE=0
PG_BIN=""
DB_PASSWORD=""
REDIS_PASSWORD=""
MEDIA_REDIS_PASSWORD="" # the origin's agent, egress, ingress and livekit-server (user tally-origin-media)
LIVEKIT_API_KEY=""
LIVEKIT_API_SECRET=""
SECRETS_KEY=""
SECRETS_KEY_SOURCE=""
CLUSTER_BIND="" # also bind Redis here so joined nodes reach it ("" = loopback only)

# tunable_keys: the keys of TUNABLE_DEFAULT that the config schema still declares.
tunable_keys() {
  local schema="$TALLY_REPO/libs/config/src/config.schema.ts" key
  TUNABLE_KEYS=()
  for key in TALLY_HOST TALLY_LOG_LEVEL TALLY_DEFAULT_MAX_STREAMS TALLY_STREAM_JOIN_TIMEOUT_S TALLY_SWEEP_INTERVAL_S \
    TALLY_DISK_STOP_FREE_PERCENT TALLY_DISK_STOP_FREE_MIN_MB TALLY_DISK_STOP_FREE_MAX_MB TALLY_DISK_ALERT_FREE_PERCENT \
    TALLY_DISK_ALERT_FREE_MAX_MB TALLY_DISK_RESERVE_MAX_MB TALLY_METERING_RETENTION_MONTHS; do
    if grep -q "^[[:space:]]*$key:" "$schema"; then TUNABLE_KEYS+=("$key"); fi
  done
}

# load_existing_env: reads DIR/tally.env into OLD / OLD_EXTRA (lines not managed here).
load_existing_env() {
  tunable_keys
  ENV_FILE="$HOME_DIR/tally.env"
  [[ -f "$ENV_FILE" ]] || return 0
  [[ -r "$ENV_FILE" ]] || die "$ENV_FILE exists but is not readable (run as root)"
  local line key value managed
  managed=" ${TUNABLE_KEYS[*]} ${MANAGED_KEYS[*]} ${RETIRED_KEYS[*]} "
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
      key="${BASH_REMATCH[1]}" value="${BASH_REMATCH[2]}"
      # Accept values an operator quoted by hand.
      if [[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]]; then value="${BASH_REMATCH[1]}"; fi
      OLD[$key]="$value"
      [[ "$managed" == *" $key "* ]] || OLD_EXTRA+=("$line")
    fi
  done <"$ENV_FILE"
  log "    found $ENV_FILE: keeping its secrets, ports and settings"
}

# select_pg_bin: the PostgreSQL binaries to use. An existing cluster keeps its major version;
# a new one gets the newest installed major (TALLY_PG_BIN overrides).
select_pg_bin() {
  local version_file="$HOME_DIR/postgres/data/PG_VERSION"
  if [[ -n "${TALLY_PG_BIN:-}" ]]; then
    PG_BIN="$TALLY_PG_BIN"
  elif [[ -f "$version_file" ]]; then
    PG_BIN="/usr/lib/postgresql/$(cat "$version_file")/bin"
    [[ -x "$PG_BIN/postgres" ]] || dry ||
      die "the cluster in $HOME_DIR/postgres/data was created by PostgreSQL $(cat "$version_file"), which is not installed (apt-get install postgresql-$(cat "$version_file"))"
  else
    # Nothing there yet on a fresh host (--dry-run runs before the packages are in).
    PG_BIN="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n1 || true)"
  fi
  if [[ -z "$PG_BIN" || ! -x "$PG_BIN/initdb" ]]; then
    dry || die "no PostgreSQL server binaries found (/usr/lib/postgresql/*/bin); scripts/provision.sh installs them"
    PG_BIN="${PG_BIN:-/usr/lib/postgresql/<newest>/bin}"
  fi
  log "    postgres binaries: $PG_BIN"
}

# port_busy KEY PORT -> 0 when PORT (tcp, or udp for rtc-udp / ingress-udp) has a listener.
port_busy() {
  if [[ "$1" == *-udp ]]; then udp_port_busy "$2"; else tcp_port_busy "$2"; fi
}

port_flag() {
  if [[ "$1" == api ]]; then printf -- '--port'; else printf -- '--%s-port' "$1"; fi
}

# resolve_ports: explicit (flag/env) > recorded in tally.env > default. A port held by this
# home's own running service is fine; a taken default/recorded port moves to the next free one;
# a taken explicit port is an error.
resolve_ports() {
  local key explicit recorded want taken other
  for key in "${PORT_KEYS[@]}"; do
    explicit="${PORT_ARG[$key]}"
    recorded="${OLD[${PORT_ENV_KEY[$key]}]:-}"
    want="${explicit:-${recorded:-${PORT_DEFAULT[$key]}}}"
    while :; do
      taken=""
      for other in "${!PORT[@]}"; do
        [[ "${PORT[$other]}" == "$want" ]] && taken="already used for $other"
      done
      if [[ -z "$taken" ]] && port_busy "$key" "$want"; then
        if [[ "$want" == "$recorded" ]] && service_running "${PORT_SERVICE[$key]}"; then
          : # ours
        else
          taken="in use by another process"
        fi
      fi
      [[ -n "$taken" ]] || break
      [[ -z "$explicit" ]] || die "port $want for $key is $taken (choose another with $(port_flag "$key"))"
      log "    port $want for $key is $taken; trying $((want + 1))"
      want=$((want + 1))
      ((want <= 65535)) || die "no free port for $key"
    done
    PORT[$key]="$want"
  done
  log "    ports: api ${PORT[api]}, postgres ${PORT[pg]}, redis ${PORT[redis]}, livekit ${PORT[livekit]}, rtc tcp ${PORT[rtc-tcp]}, rtc udp ${PORT[rtc-udp]}, turn udp ${PORT[turn-udp]}, turn tls ${PORT[turn-tls]}, egress template ${PORT[egress-template]}"
  log_ingress_ports
}

# detect_node_ip: the source address of the default route. `ip route get` only consults the
# routing table (no packet is sent). Fallback: `hostname -I`; else 127.0.0.1.
detect_node_ip() {
  local ip="" candidate
  if command -v ip >/dev/null 2>&1; then
    ip="$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -n1 || true)"
  fi
  if [[ -z "$ip" || "$ip" == 127.* ]]; then
    ip=""
    for candidate in $(hostname -I 2>/dev/null || true); do
      if is_ipv4 "$candidate" && [[ "$candidate" != 127.* && "$candidate" != 169.254.* ]]; then
        ip="$candidate"
        break
      fi
    done
  fi
  printf '%s' "${ip:-127.0.0.1}"
}

resolve_network() {
  if [[ -n "$NODE_IP_ARG" ]]; then
    NODE_IP="$NODE_IP_ARG" NODE_IP_SOURCE="--node-ip"
  elif [[ -n "${OLD[TALLY_NODE_IP]:-}" ]]; then
    NODE_IP="${OLD[TALLY_NODE_IP]}" NODE_IP_SOURCE="recorded in tally.env"
  else
    NODE_IP="$(detect_node_ip)" NODE_IP_SOURCE="detected"
  fi
  OFFLINE="${OFFLINE_ARG:-${OLD[TALLY_OFFLINE]:-0}}"
  CLUSTER_BIND="${CLUSTER_BIND_ARG:-${OLD[TALLY_CLUSTER_BIND]:-}}"
  if [[ -n "$CLUSTER_BIND" ]]; then
    check_cluster_bind
    log "    cluster: Redis also listens on $CLUSTER_BIND (password-protected) for joined nodes"
  fi
  log "    media address (rtc.node_ip): $NODE_IP ($NODE_IP_SOURCE)"
  if [[ "$OFFLINE" == 1 ]]; then
    log "    offline: no public STUN (use_external_ip: false, stun_servers: 127.0.0.1:3478)"
  else
    log "    online: STUN decides whether livekit-server discovers its external IP (--offline to skip)"
  fi
}

# check_cluster_bind: Redis cannot listen on an address this host does not have (it would fail to
# start), so refuse it before anything is written.
check_cluster_bind() {
  [[ "$CLUSTER_BIND" != 127.0.0.1 ]] || die "--cluster-bind 127.0.0.1: Redis listens there anyway; give an address the nodes reach"
  command -v ip >/dev/null 2>&1 || return 0
  # Read whole before grep: `grep -q` stops at the first match, and with pipefail the SIGPIPE that
  # ends ip, still writing the addresses after it, would fail the check.
  local addresses
  addresses="$(ip -4 -o addr show 2>/dev/null || true)"
  if ! grep -qF " inet $CLUSTER_BIND/" <<<"$addresses"; then
    local hint="--cluster-bind"
    [[ -n "$CLUSTER_BIND_ARG" ]] || hint="TALLY_CLUSTER_BIND in $ENV_FILE"
    dry && warn "$CLUSTER_BIND ($hint) is not an address of this host: Redis could not listen there" && return 0
    die "$CLUSTER_BIND ($hint) is not an address of this host, so Redis could not listen there (ip -4 addr lists them); tally.env was left as it was"
  fi
}

# resolve_secrets: keeps every secret found in tally.env, generates the missing ones.
resolve_secrets() {
  local old_db="${OLD[DATABASE_URL]:-}" old_redis="${OLD[REDIS_URL]:-}"
  if [[ "$old_db" =~ ^postgres(ql)?://tally:([A-Za-z0-9]+)@ ]]; then
    DB_PASSWORD="${BASH_REMATCH[2]}"
  else
    DB_PASSWORD="$(random_secret 16)"
  fi
  if [[ "$old_redis" =~ ^redis://:([A-Za-z0-9]+)@ ]]; then
    REDIS_PASSWORD="${BASH_REMATCH[1]}"
  else
    REDIS_PASSWORD="$(random_secret 16)"
  fi
  if [[ "${OLD[TALLY_MEDIA_REDIS_URL]:-}" =~ ^redis://tally-origin-media:([A-Za-z0-9]+)@ ]]; then
    MEDIA_REDIS_PASSWORD="${BASH_REMATCH[1]}"
  else
    MEDIA_REDIS_PASSWORD="$(random_secret 16)"
  fi
  LIVEKIT_API_KEY="${OLD[LIVEKIT_API_KEY]:-}"
  [[ "$LIVEKIT_API_KEY" =~ ^[A-Za-z0-9_]{3,}$ ]] || LIVEKIT_API_KEY="tally$(random_secret 6)"
  LIVEKIT_API_SECRET="${OLD[LIVEKIT_API_SECRET]:-}"
  [[ "$LIVEKIT_API_SECRET" =~ ^[A-Za-z0-9]{32,}$ ]] || LIVEKIT_API_SECRET="$(random_secret 24)"
  resolve_secrets_key
}

# resolve_secrets_key: TALLY_SECRETS_KEY seals stored secrets (webhook signing secrets): set once
# - from the environment when given, else generated - and never replaced, since a new key makes
# every sealed secret unreadable.
resolve_secrets_key() {
  local old="${OLD[TALLY_SECRETS_KEY]:-}"
  if [[ -n "$old" ]]; then
    [[ "$old" =~ ^[0-9a-f]{64}$ ]] ||
      die "TALLY_SECRETS_KEY in $ENV_FILE is not 64 lowercase hex characters; fix it by hand (it is never replaced: sealed secrets depend on it)"
    if [[ -n "${TALLY_SECRETS_KEY:-}" && "$TALLY_SECRETS_KEY" != "$old" ]]; then
      die "TALLY_SECRETS_KEY differs from the one in $ENV_FILE, which is never replaced (sealed secrets depend on it)"
    fi
    SECRETS_KEY="$old" SECRETS_KEY_SOURCE="kept"
  elif [[ -n "${TALLY_SECRETS_KEY:-}" ]]; then
    [[ "$TALLY_SECRETS_KEY" =~ ^[0-9a-f]{64}$ ]] || die "TALLY_SECRETS_KEY must be 64 lowercase hex characters (32 bytes)"
    SECRETS_KEY="$TALLY_SECRETS_KEY" SECRETS_KEY_SOURCE="from TALLY_SECRETS_KEY"
  else
    SECRETS_KEY="$(random_secret 32)" SECRETS_KEY_SOURCE="generated"
  fi
  log "    secrets key (TALLY_SECRETS_KEY): $SECRETS_KEY_SOURCE"
}

# prepare_home: the directory layout, each part owned by the user of the service that writes it
# (docs/adr/0017-one-system-user-per-service.md). DIR is root:tally 0751: every service user may
# pass through it to its own part, only tally lists it. A home from a previous layout (one
# user for everything) has its trees handed over to their new owners here.
prepare_home() {
  ensure_dir "$HOME_DIR" 751 "root:$TALLY_USER"
  ensure_dir "$HOME_DIR/run" 755 root
  ensure_dir "$HOME_DIR/log" 750 "root:$TALLY_USER"
  ensure_dir "$HOME_DIR/bin" 755 root
  ensure_dir "$HOME_DIR/cache" 755 root
  ensure_dir "$HOME_DIR/cache/agent" 700 "$AGENT_USER"
  if [[ "$ACTION" != join ]]; then
    ensure_dir "$HOME_DIR/cache/api" 700 "$TALLY_USER"
    ensure_dir "$HOME_DIR/cache/worker" 700 "$TALLY_USER"
  fi
  own_tree "$HOME_DIR/postgres" "$TALLY_PG_USER" postgres
  ensure_dir "$HOME_DIR/postgres" 700 "$TALLY_PG_USER"
  own_tree "$HOME_DIR/redis" "$TALLY_REDIS_USER" redis
  ensure_dir "$HOME_DIR/redis" 700 "$TALLY_REDIS_USER"
  # The media workers the agent runs on demand: their config, HOME, PulseAudio runtime dir and
  # scratch space (docs/workers.md).
  own_tree "$HOME_DIR/workers" "$AGENT_USER" agent
  ensure_dir "$HOME_DIR/workers" 700 "$AGENT_USER"
  prepare_feature_dirs
}

# own_tree DIR USER[:GROUP] SERVICE: when DIR exists with another owner (a home from a previous
# layout), SERVICE (running as that owner) is stopped - it restarts as USER later in this run -
# and everything in DIR goes to USER. Quick when nothing changed: only DIR itself is looked at.
own_tree() {
  local dir="$1" owner service="$3"
  owner="$(owner_with_group "$2")"
  [[ -d "$dir" ]] || return 0
  [[ "$(stat -c %U:%G "$dir")" != "$owner" ]] || return 0
  if dry; then
    log "    would stop $service and hand $dir over to $owner (chown -R)"
    return 0
  fi
  if service_running "$service"; then service_stop "$service"; fi
  chown -R "$owner" "$dir"
  log "    $dir (and everything in it) now belongs to $owner"
}

# own_shared_tree DIR: recordings and live HLS: the media user's, writable by its group (which
# tally joins) throughout, new files and directories inheriting the group (setgid).
own_shared_tree() {
  local dir="$1" owner="$TALLY_MEDIA_USER:$TALLY_MEDIA_USER"
  [[ -d "$dir" ]] || return 0
  [[ "$(stat -c '%U:%G %a' "$dir")" != "$owner 2770" ]] || return 0
  if dry; then
    log "    would hand $dir over to $owner (chown -R, group-writable, setgid directories)"
    return 0
  fi
  chown -R "$owner" "$dir"
  chmod -R g+rwX,o-rwx "$dir"
  find "$dir" -type d -exec chmod g+s {} +
  log "    $dir (and everything in it) now belongs to $owner, writable by the group"
}

tally_env_content() {
  local key host="$NODE_IP"
  cat <<EOF
# Tally configuration, written by install.sh. Re-running install.sh keeps the secrets, ports
# and tunables below; edit tunables here and re-run it (or restart the services).
TALLY_HOME=$HOME_DIR
TALLY_PORT=${PORT[api]}
TALLY_PUBLIC_URL=${TALLY_PUBLIC_URL:-http://$host:${PORT[api]}}
$(database_env_lines)
REDIS_URL=redis://:$REDIS_PASSWORD@127.0.0.1:${PORT[redis]}
# The origin's agent, egress, ingress and livekit-server: a Redis user with a joined node's grants
# (docs/adr/0025-per-node-credentials.md); the api and worker above keep the full one.
TALLY_MEDIA_REDIS_URL=$(media_redis_url)
LIVEKIT_URL=http://127.0.0.1:${PORT[livekit]}
LIVEKIT_PUBLIC_URL=${LIVEKIT_PUBLIC_URL:-ws://$host:${PORT[livekit]}}
LIVEKIT_API_KEY=$LIVEKIT_API_KEY
LIVEKIT_API_SECRET=$LIVEKIT_API_SECRET
# Seals stored secrets (AES-256-GCM). Never change it: what it sealed could not be read anymore.
TALLY_SECRETS_KEY=$SECRETS_KEY
# The admin key is read from $HOME_DIR/admin.key (TALLY_ADMIN_KEY here would take precedence).
# Media workers: the agent starts egress for the first recording and stops it once idle
# (docs/workers.md). native or docker (kept when changed here).
TALLY_WORKER_RUNTIME=${OLD[TALLY_WORKER_RUNTIME]:-native}
TALLY_WORKERS_DIR=$HOME_DIR/workers
TALLY_EGRESS_BIN=$HOME_DIR/bin/egress
EOF
  feature_env_lines
  object_store_env_lines
  turn_cluster_env_lines
  if [[ -n "$CLUSTER_BIND" ]]; then
    echo "# Joined nodes (./install.sh --join) are handed this Redis URL (docs/cluster.md)."
    echo "TALLY_CLUSTER_REDIS_URL=redis://:$REDIS_PASSWORD@$CLUSTER_BIND:${PORT[redis]}"
  fi
  origin_sentinel_env_lines
  control_env_lines
  for key in "${TUNABLE_KEYS[@]}"; do
    printf '%s=%s\n' "$key" "${OLD[$key]:-${TUNABLE_DEFAULT[$key]}}"
  done
  cat <<EOF
# Installer settings (install.sh reads them on re-runs; the agent reads TALLY_NODE_IP and the
# TALLY_EGRESS_* ports for the workers it runs).
TALLY_NODE_IP=$NODE_IP
TALLY_OFFLINE=$OFFLINE
TALLY_STUN_SERVERS=$STUN_SERVERS
TALLY_PG_PORT=${PORT[pg]}
TALLY_REDIS_PORT=${PORT[redis]}
TALLY_LIVEKIT_PORT=${PORT[livekit]}
TALLY_RTC_TCP_PORT=${PORT[rtc-tcp]}
TALLY_RTC_UDP_PORT=${PORT[rtc-udp]}
TALLY_TURN_UDP_PORT=${PORT[turn-udp]}
TALLY_TURN_TLS_PORT=${PORT[turn-tls]}
TALLY_EGRESS_TEMPLATE_PORT=${PORT[egress-template]}
TALLY_CLUSTER_BIND=$CLUSTER_BIND
EOF
  if [[ ${#OLD_EXTRA[@]} -gt 0 ]]; then
    echo "# Other settings (kept as found)"
    printf '%s\n' "${OLD_EXTRA[@]}"
  fi
}

# livekit_redis_yaml ADDRESS USERNAME PASSWORD [SENTINELS [NAME]]: livekit-server's redis: section.
# With SENTINELS (REDIS_SENTINELS, host:port comma-separated) it asks them for the primary of NAME
# (default tally) instead of using ADDRESS; the Sentinels are asked without credentials (their
# default user may only ask which server is primary; docs/adr/0040-redis-sentinel.md).
livekit_redis_yaml() {
  local address="$1" username="$2" password="$3" sentinels="${4:-}" name="${5:-}" sentinel
  local -a list=()
  echo "redis:"
  if [[ -z "$sentinels" ]]; then
    echo "  address: $address"
  else
    echo "  sentinel_master_name: ${name:-tally}"
    echo "  sentinel_addresses:"
    IFS=',' read -ra list <<<"${sentinels// /}"
    for sentinel in "${list[@]}"; do
      [[ -z "$sentinel" ]] || echo "    - $sentinel"
    done
  fi
  [[ -z "$username" ]] || echo "  username: $username"
  [[ -z "$password" ]] || echo "  password: $password"
}

livekit_yaml_content() {
  cat <<EOF
# livekit-server configuration, written by install.sh (re-running it rewrites this file;
# keys and ports come from $HOME_DIR/tally.env).
port: ${PORT[livekit]}
EOF
  livekit_bind_yaml
  cat <<EOF
rtc:
  tcp_port: ${PORT[rtc-tcp]}
  # one UDP port multiplexes all media
  udp_port: ${PORT[rtc-udp]}
  node_ip: $NODE_IP
EOF
  livekit_stun_yaml
  livekit_turn_servers_yaml
  livekit_turn_yaml
  livekit_ingress_yaml
  local sentinels="${OLD[REDIS_SENTINELS]:-}" name="${OLD[REDIS_SENTINEL_NAME]:-}"
  if [[ "$REDIS_SENTINEL" == 1 ]]; then sentinels="$SENTINEL_ADDRESS" name="$SENTINEL_NAME"; fi
  livekit_redis_yaml "127.0.0.1:${PORT[redis]}" tally-origin-media "$MEDIA_REDIS_PASSWORD" "$sentinels" "$name"
  cat <<EOF
# Only Tally creates rooms (after admitting the stream): a kept token cannot bring an ended stream back.
room:
  auto_create: false
keys:
  $LIVEKIT_API_KEY: $LIVEKIT_API_SECRET
webhook:
  api_key: $LIVEKIT_API_KEY
  urls:
    - http://127.0.0.1:${PORT[api]}/webhooks/livekit
logging:
  level: info
EOF
}

# livekit_turn_yaml: livekit-server's built-in TURN server over UDP, for clients whose network
# lets UDP out but not to the media port (docs/adr/0039-turn.md).
livekit_turn_yaml() {
  cat <<EOF
turn:
  enabled: true
  udp_port: ${PORT[turn-udp]}
  # A relay may reach only this server's own media address (private on a LAN).
  allow_restricted_peer_cidrs:
    - $NODE_IP/32
EOF
}

redis_conf_content() {
  cat <<EOF
# redis-server configuration for Tally, written by install.sh.
bind 127.0.0.1${CLUSTER_BIND:+ $CLUSTER_BIND}
protected-mode yes
port ${PORT[redis]}
requirepass $REDIS_PASSWORD
dir $HOME_DIR/redis
appendonly yes
appendfsync everysec
daemonize no
supervised no
logfile ""
# The origin's agent, egress, ingress and livekit-server (TALLY_MEDIA_REDIS_URL): a joined node's
# grants, from apps/api/src/cluster/node-grants.ts; the default user above is the api's and worker's.
EOF
  origin_media_acl_line
  if [[ "$REDIS_SENTINEL" == 1 ]]; then redis_ha_conf_lines "$CLUSTER_BIND"; fi
}

media_redis_url() {
  echo "redis://tally-origin-media:$MEDIA_REDIS_PASSWORD@127.0.0.1:${PORT[redis]}"
}

# origin_media_acl_line: the redis.conf `user` line of tally-origin-media (dist/redis-acl.js prints
# it from the same rules the API gives joined nodes; the password only as its SHA-256). Its agent
# grants name this node: TALLY_NODE_ID when set in tally.env, else the hostname, as the agent does.
origin_media_acl_line() {
  local node="${OLD[TALLY_NODE_ID]:-$(hostname)}" sha
  sha="$(printf '%s' "$MEDIA_REDIS_PASSWORD" | sha256sum | cut -d' ' -f1)"
  if [[ ! -f "$TALLY_REPO/dist/redis-acl.js" ]] && dry; then
    echo "# user tally-origin-media (node $node): written by the real run, once dist/ is built"
    return 0
  fi
  node "$TALLY_REPO/dist/redis-acl.js" "$node" "$sha" || die "dist/redis-acl.js could not print the origin's Redis user (node id \"$node\")"
}

# ensure_admin_key: DIR/admin.key (root:tally 0640: the api reads it, nothing else does) is
# created once - from TALLY_ADMIN_KEY when set, else generated - and never overwritten.
ensure_admin_key() {
  ADMIN_KEY_FILE="$HOME_DIR/admin.key"
  if [[ -s "$ADMIN_KEY_FILE" ]]; then
    if [[ -n "${TALLY_ADMIN_KEY:-}" && "$(tr -d '[:space:]' <"$ADMIN_KEY_FILE")" != "$TALLY_ADMIN_KEY" ]]; then
      die "TALLY_ADMIN_KEY differs from the existing $ADMIN_KEY_FILE, which is never overwritten (delete it first to replace the key)"
    fi
    log "    $ADMIN_KEY_FILE: kept"
    if ! dry; then
      chown "root:$TALLY_USER" "$ADMIN_KEY_FILE"
      chmod 640 "$ADMIN_KEY_FILE"
    fi
    return 0
  fi
  local key source="generated"
  if [[ -n "${TALLY_ADMIN_KEY:-}" ]]; then
    ((${#TALLY_ADMIN_KEY} >= 24)) || die "TALLY_ADMIN_KEY must be at least 24 characters"
    [[ "$TALLY_ADMIN_KEY" != *[[:space:]]* ]] || die "TALLY_ADMIN_KEY must not contain whitespace"
    key="$TALLY_ADMIN_KEY" source="from TALLY_ADMIN_KEY"
  else
    key="tally_admin_$(random_secret 24)"
  fi
  write_file "$ADMIN_KEY_FILE" 640 "root:$TALLY_USER" <<<"$key"
  log "    admin key $source"
}

# The agent's variables (apps/agent/src/config.ts, runtime/workers-config.ts,
# transcode/transcode-config.ts): what DIR/agent.env carries over from tally.env. The database URL,
# TALLY_SECRETS_KEY, the metrics token and the full Redis password stay out of the media user's reach.
# coturn's secret (TALLY_CLUSTER_TURN_*) goes in: ingress mints WHIP publishers' TURN credentials with it.
AGENT_ENV_KEYS='REDIS_URL|REDIS_SENTINELS|REDIS_SENTINEL_NAME|LIVEKIT_URL|LIVEKIT_API_KEY|LIVEKIT_API_SECRET|TALLY_HOME|TALLY_LOG_LEVEL|TALLY_NODE_[A-Z_]+|TALLY_HEARTBEAT_INTERVAL_S|TALLY_WORKER_[A-Z_]+|TALLY_WORKERS_DIR|TALLY_DOCKER_SOCKET|TALLY_(EGRESS|INGRESS)_[A-Z_]+|TALLY_RECORDINGS_DIR|TALLY_CAPACITY_PROFILE|TALLY_TRANSCODE_[A-Z_]+|TALLY_CLUSTER_TURN_(HOST|PORT|SECRET)'

agent_env_content() {
  echo "# The node agent's environment, written by install.sh from tally.env (re-running it rewrites this"
  echo "# file: edit tally.env). Only what the agent reads; readable by the media user."
  # The agent (and the egress and ingress it runs) on the origin's media user, not the full one.
  grep -E "^($AGENT_ENV_KEYS)=" <(tally_env_content) | sed "s|^REDIS_URL=.*|REDIS_URL=$(media_redis_url)|" || true
}

# install_tool_binary NAME [SRC]: copies a provisioned binary (livekit-server, egress; SRC, default
# the tools' bin/NAME) into DIR/bin (the service user cannot read root's tool cache). Replaced by
# rename, so a running one is not disturbed.
install_tool_binary() {
  local name="$1" src="${2:-}" dst="$HOME_DIR/bin/$1"
  # shellcheck disable=SC2016 # expanded by the inner shell
  [[ -n "$src" ]] || src="$(bash -c 'source "$1/scripts/provision/lib.sh" && printf "%s" "$TALLY_BIN_DIR"' _ "$TALLY_REPO")/$name"
  if [[ -x "$dst" ]] && cmp -s "$src" "$dst"; then
    log "    $dst: unchanged"
    return 0
  fi
  if dry; then
    log "    would copy $src to $dst"
    return 0
  fi
  [[ -x "$src" ]] || die "$src is missing: scripts/provision.sh should have built it"
  cp "$src" "$dst.tmp"
  chmod 755 "$dst.tmp"
  mv -f "$dst.tmp" "$dst"
  log "    installed $dst ($("$dst" --version 2>&1 | head -n1))"
}

# install_node_binary: DIR/bin/node, the pinned Node.js the api, worker, agent and migrations run.
install_node_binary() {
  install_tool_binary node "$TOOLS_NODE_DIR/bin/node"
}

write_config() {
  prepare_home
  write_file "$HOME_DIR/tally.env" 640 "root:$TALLY_USER" < <(tally_env_content)
  write_file "$HOME_DIR/agent.env" 640 "root:$AGENT_USER" < <(agent_env_content)
  write_file "$HOME_DIR/livekit.yaml" 640 "root:$TALLY_LIVEKIT_USER" < <(livekit_yaml_content)
  write_file "$HOME_DIR/redis/redis.conf" 640 "root:$TALLY_REDIS_USER" < <(redis_conf_content)
  if [[ "$REDIS_SENTINEL" == 1 ]]; then write_sentinel_config "$CLUSTER_BIND" "$CLUSTER_BIND" "${PORT[redis]}"; fi
  ensure_admin_key
  install_node_binary
  install_tool_binary livekit-server
  # The agent runs DIR/bin/egress on demand (TALLY_EGRESS_BIN); egress execs itself per recording.
  install_tool_binary egress
  # ... and DIR/bin/ingress (TALLY_INGRESS_BIN) for RTMP / WHIP; it execs itself per session.
  install_tool_binary ingress
  write_object_store_config
  publish_artifacts
}
