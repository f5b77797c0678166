#!/usr/bin/env bash
# Redis with Sentinel (docs/adr/0040-redis-sentinel.md): the origin's Redis is the first primary and
# the origin runs a Sentinel (--redis-sentinel, with --cluster-bind); a node joined with
# --redis-replica runs a replica of it and a Sentinel of its own. Three Sentinels, quorum two. Every
# Tally process finds the primary through the Sentinels (REDIS_SENTINELS). Source it; do not execute it.

SENTINEL_NAME=tally
PORT_DEFAULT+=([sentinel]=26379)
PORT_ENV_KEY+=([sentinel]=TALLY_SENTINEL_PORT)
PORT_SERVICE+=([sentinel]=sentinel)
MANAGED_KEYS+=(REDIS_SENTINELS REDIS_SENTINEL_NAME TALLY_CLUSTER_REDIS_SENTINELS TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD
  TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD TALLY_REDIS_SENTINEL TALLY_SENTINEL_PORT)
SENTINEL_QUORUM=2
REDIS_SENTINEL=0         # this host runs a Sentinel (origin: --redis-sentinel; node: --redis-replica)
REPLICATION_PASSWORD=""  # the servers' tally-replication user
SENTINEL_PASSWORD=""     # the servers' and Sentinels' tally-sentinel user
SENTINEL_ADDRESS=""      # host:port other hosts reach this host's Sentinel at

# What anyone may ask a Sentinel (its default user): which server is primary, news of a failover.
SENTINEL_READER_RULES='allchannels -@all +auth +hello +ping +client|setname +client|getname +subscribe +psubscribe +unsubscribe +punsubscribe +sentinel|get-master-addr-by-name +sentinel|sentinels +sentinel|replicas +sentinel|slaves +sentinel|master +sentinel|masters +role +info'
# Redis' documented minimum for a Sentinel's user on the servers it monitors.
SENTINEL_SERVER_RULES='allchannels +multi +slaveof +ping +exec +subscribe +config|rewrite +role +publish +info +client|setname +client|kill +script|kill'

sha256_of() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# want_sentinel_port: this host runs a Sentinel (origin: --redis-sentinel or remembered; node:
# --redis-replica or remembered), so its port is resolved with the others. Call before resolve_ports.
want_sentinel_port() {
  if [[ "$ACTION" == join ]]; then
    [[ "$JOIN_REDIS_REPLICA" == 1 || "${OLD[TALLY_REDIS_REPLICA]:-0}" == 1 ]] || return 0
    JOIN_REDIS_REPLICA=1
  else
    [[ "$REDIS_SENTINEL_ARG" == 1 || "${OLD[TALLY_REDIS_SENTINEL]:-0}" == 1 ]] || return 0
  fi
  PORT_KEYS+=(sentinel)
}

# resolve_redis_sentinel (origin): --redis-sentinel or remembered; needs --cluster-bind (the
# replicas and the other Sentinels reach this host there). Keeps the users' passwords.
resolve_redis_sentinel() {
  [[ "$REDIS_SENTINEL_ARG" == 1 || "${OLD[TALLY_REDIS_SENTINEL]:-0}" == 1 ]] || return 0
  [[ -n "$CLUSTER_BIND" ]] || die "--redis-sentinel needs --cluster-bind IP: replicas and Sentinels on other hosts reach this Redis there"
  REDIS_SENTINEL=1
  REPLICATION_PASSWORD="${OLD[TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD]:-}"
  [[ "$REPLICATION_PASSWORD" =~ ^[A-Za-z0-9]{16,}$ ]] || REPLICATION_PASSWORD="$(random_secret 16)"
  SENTINEL_PASSWORD="${OLD[TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD]:-}"
  [[ "$SENTINEL_PASSWORD" =~ ^[A-Za-z0-9]{16,}$ ]] || SENTINEL_PASSWORD="$(random_secret 16)"
  SENTINEL_ADDRESS="$CLUSTER_BIND:${PORT[sentinel]}"
  log "    redis: Sentinel on $SENTINEL_ADDRESS (group $SENTINEL_NAME, quorum $SENTINEL_QUORUM); nodes joined with --redis-replica add a replica and a Sentinel each"
}

# origin_sentinel_env_lines: tally.env's Sentinel lines on the origin. Its processes ask its own
# Sentinel (and learn the others from it); joined nodes are handed TALLY_CLUSTER_REDIS_* .
origin_sentinel_env_lines() {
  if [[ "$REDIS_SENTINEL" == 0 ]]; then
    # Set by hand (docs/cluster.md): kept.
    [[ -z "${OLD[REDIS_SENTINELS]:-}" ]] || echo "REDIS_SENTINELS=${OLD[REDIS_SENTINELS]}"
    [[ -z "${OLD[REDIS_SENTINEL_NAME]:-}" ]] || echo "REDIS_SENTINEL_NAME=${OLD[REDIS_SENTINEL_NAME]}"
    return 0
  fi
  cat <<EOF
# Redis with Sentinel (--redis-sentinel, docs/adr/0040-redis-sentinel.md): the Sentinels name the
# primary; REDIS_URL gives the user and password. Joined nodes are handed the TALLY_CLUSTER_REDIS_* .
REDIS_SENTINELS=$SENTINEL_ADDRESS
REDIS_SENTINEL_NAME=$SENTINEL_NAME
TALLY_CLUSTER_REDIS_SENTINELS=$SENTINEL_ADDRESS
TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD=$REPLICATION_PASSWORD
TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD=$SENTINEL_PASSWORD
TALLY_REDIS_SENTINEL=1
TALLY_SENTINEL_PORT=${PORT[sentinel]}
EOF
}

# redis_ha_conf_lines OWN_HOST: what every server of the group has besides its users: how it
# follows a primary, and, when the Sentinels name another server as primary, whose replica it is
# (so a re-run keeps the topology).
redis_ha_conf_lines() {
  local own="$1" primary
  cat <<EOF
# Replication (docs/adr/0040-redis-sentinel.md): any server of the group may be primary; the others
# follow it as tally-replication. The Sentinels sign in as tally-sentinel.
masteruser tally-replication
masterauth $REPLICATION_PASSWORD
replica-announce-ip $own
user tally-replication on #$(sha256_of "$REPLICATION_PASSWORD") +psync +replconf +ping
user tally-sentinel on #$(sha256_of "$SENTINEL_PASSWORD") $SENTINEL_SERVER_RULES
EOF
  primary="$(sentinel_primary)"
  if [[ -n "$primary" && "$primary" != "$own:${PORT[redis]}" ]]; then
    echo "# The Sentinels name $primary as primary now."
    echo "replicaof ${primary%:*} ${primary##*:}"
  fi
}

# sentinel_primary: host:port of the primary as this host's Sentinel names it ("" when none answers).
sentinel_primary() {
  [[ -n "${PORT[sentinel]:-}" ]] || return 0
  local answer
  answer="$(redis-cli -h 127.0.0.1 -p "${PORT[sentinel]}" --no-auth-warning SENTINEL get-master-addr-by-name "$SENTINEL_NAME" 2>/dev/null | paste -sd: || true)"
  [[ "$answer" =~ ^[0-9.]+:[0-9]+$ ]] && printf '%s' "$answer"
  return 0
}

# sentinel_conf_content ANNOUNCE_IP PRIMARY_HOST PRIMARY_PORT: the Sentinel's first config; it
# rewrites the file with what it learns (the replicas, the other Sentinels, the epochs).
sentinel_conf_content() {
  cat <<EOF
# Redis Sentinel for Tally, written once by install.sh; the Sentinel adds what it learns below.
bind 127.0.0.1 $1
protected-mode no
port ${PORT[sentinel]}
dir $HOME_DIR/sentinel
daemonize no
logfile ""
sentinel resolve-hostnames no
sentinel announce-ip $1
sentinel announce-port ${PORT[sentinel]}
sentinel monitor $SENTINEL_NAME $2 $3 $SENTINEL_QUORUM
sentinel down-after-milliseconds $SENTINEL_NAME 5000
sentinel failover-timeout $SENTINEL_NAME 60000
sentinel parallel-syncs $SENTINEL_NAME 1
sentinel auth-user $SENTINEL_NAME tally-sentinel
sentinel auth-pass $SENTINEL_NAME $SENTINEL_PASSWORD
sentinel sentinel-user tally-sentinel
sentinel sentinel-pass $SENTINEL_PASSWORD
# Anyone may ask which server is primary; only the Sentinels (tally-sentinel) change anything.
user default on nopass $SENTINEL_READER_RULES
user tally-sentinel on #$(sha256_of "$SENTINEL_PASSWORD") allchannels +@all
EOF
}

# write_sentinel_config ANNOUNCE_IP PRIMARY_HOST PRIMARY_PORT: once; a re-run keeps what the
# Sentinel learned (its file is its own from then on).
write_sentinel_config() {
  ensure_dir "$HOME_DIR/sentinel" 700 "$TALLY_REDIS_USER"
  local conf="$HOME_DIR/sentinel/sentinel.conf"
  if [[ -f "$conf" ]]; then
    log "    $conf: kept (the Sentinel's own record of the group)"
    return 0
  fi
  write_file "$conf" 600 "$TALLY_REDIS_USER" < <(sentinel_conf_content "$@")
}

sentinel_ready() {
  [[ "$(redis-cli -h 127.0.0.1 -p "${PORT[sentinel]}" PING 2>/dev/null)" == PONG ]]
}

# sentinel_field FIELD: a field of `SENTINEL master tally` on this host's Sentinel.
sentinel_field() {
  redis-cli -h 127.0.0.1 -p "${PORT[sentinel]}" SENTINEL master "$SENTINEL_NAME" 2>/dev/null |
    awk -v f="$1" 'NR % 2 == 1 { k = $0 } NR % 2 == 0 && k == f { print; exit }'
}

start_sentinel() {
  [[ "$REDIS_SENTINEL" == 1 ]] || return 0
  service_start sentinel
  dry && return 0
  wait_until 30 "redis sentinel" sentinel_ready || service_fail sentinel
  log "    sentinel: answering on $SENTINEL_ADDRESS; primary $(sentinel_primary), $(sentinel_field num-other-sentinels) other Sentinel(s), $(sentinel_field num-slaves) replica(s)"
}

# ---------------------------------------------------------------- a joined node's replica

# replica_redis_conf_content: the replica's redis.conf: the origin's users (as hashes), replicating
# the primary the origin named. Redis rewrites `replicaof` here when the Sentinels re-point it.
replica_redis_conf_content() {
  local primary="${CLUSTER[REPLICA_PRIMARY]}"
  cat <<EOF
# redis-server replica for Tally, written by install.sh --join --redis-replica (the Sentinels
# rewrite replicaof when they fail over).
bind 127.0.0.1 $NODE_IP
# Who may do what is the origin's users below (protected mode would refuse the other hosts outright
# whenever the default user has no password).
protected-mode no
port ${PORT[redis]}
dir $HOME_DIR/redis
appendonly yes
appendfsync everysec
daemonize no
supervised no
logfile ""
replicaof ${primary%:*} ${primary##*:}
masteruser tally-replication
masterauth $REPLICATION_PASSWORD
replica-announce-ip $NODE_IP
# Every server of the group has the same users (Redis does not replicate ACLs); joined nodes'
# users are applied by the origin's API on whichever server is primary.
EOF
  printf '%s' "${CLUSTER[REDIS_SERVER_USERS]}" | base64 -d
}

# write_replica_config: once per join (a re-run keeps the files: the Sentinels keep them current).
write_replica_config() {
  [[ "$JOIN_REDIS_REPLICA" == 1 ]] || return 0
  local conf="$HOME_DIR/redis/redis.conf"
  if [[ -f "$conf" && -z "${CLUSTER[REDIS_SERVER_USERS]:-}" ]]; then
    log "    $conf: kept (a replica of the group; the Sentinels keep replicaof current)"
  else
    write_file "$conf" 600 "$TALLY_REDIS_USER" < <(replica_redis_conf_content)
  fi
  local primary="${CLUSTER[REPLICA_PRIMARY]:-}"
  write_sentinel_config "$NODE_IP" "${primary%:*}" "${primary##*:}"
}

# replica_info FIELD: a field of INFO replication on this node's server (as tally-sentinel, which may ask).
replica_info() {
  REDISCLI_AUTH="$SENTINEL_PASSWORD" redis-cli --user tally-sentinel -h 127.0.0.1 -p "${PORT[redis]}" INFO replication 2>/dev/null |
    tr -d '\r' | sed -n "s/^$1://p"
}

replica_in_sync() { [[ "$(replica_info role)" == master || "$(replica_info master_link_status)" == up ]]; }
sentinel_sees_group() { [[ "$(sentinel_field num-other-sentinels)" -ge 1 ]] 2>/dev/null; }

start_replica_services() {
  [[ "$JOIN_REDIS_REPLICA" == 1 ]] || return 0
  service_start redis
  service_start sentinel
  dry && return 0
  wait_until 120 "redis replica in sync with the primary" replica_in_sync || service_fail redis
  log "    redis: replica of $(replica_info master_host):$(replica_info master_port) on $NODE_IP:${PORT[redis]}, in sync"
  wait_until 60 "sentinel to see the primary and another Sentinel" sentinel_sees_group || service_fail sentinel
  log "    sentinel: on $SENTINEL_ADDRESS; primary $(sentinel_primary), $(sentinel_field num-other-sentinels) other Sentinel(s), quorum $SENTINEL_QUORUM"
}

# replica_sentinels_line EXISTING: REDIS_SENTINELS for a replica node: its own Sentinel first, then
# the others it was handed (without repeats).
replica_sentinels_line() {
  local -a out=("$SENTINEL_ADDRESS") list=()
  local item
  IFS=',' read -ra list <<<"$1"
  for item in "${list[@]}"; do
    [[ -z "$item" || " ${out[*]} " == *" $item "* ]] || out+=("$item")
  done
  (IFS=,; printf '%s' "${out[*]}")
}

# leave_replica: --leave of a --redis-replica node. While this server is primary the Sentinels hand
# the role to another first; once its Redis and Sentinel are stopped, every other Sentinel is reset
# so that it forgets them (and finds the servers and Sentinels that remain within seconds).
LEAVE_OTHER_SENTINELS=()
leave_replica_hand_over() {
  [[ -f "$HOME_DIR/sentinel/sentinel.conf" ]] || return 0
  SENTINEL_PASSWORD="$(sed -n 's/^sentinel sentinel-pass //p' "$HOME_DIR/sentinel/sentinel.conf")"
  PORT[sentinel]="$(sed -n 's/^port //p' "$HOME_DIR/sentinel/sentinel.conf")"
  PORT[redis]="$(sed -n 's/^TALLY_REDIS_PORT=//p' "$ENV_FILE")"
  local own_ip own_sentinel
  own_ip="$(sed -n 's/^TALLY_NODE_IP=//p' "$ENV_FILE")"
  own_sentinel="$own_ip:${PORT[sentinel]}"
  # The other Sentinels, as this one knows them now.
  mapfile -t LEAVE_OTHER_SENTINELS < <(redis-cli -h 127.0.0.1 -p "${PORT[sentinel]}" SENTINEL sentinels "$SENTINEL_NAME" 2>/dev/null |
    awk 'NR % 2 == 1 { k = $0 } NR % 2 == 0 && k == "ip" { ip = $0 } NR % 2 == 0 && k == "port" { print ip ":" $0 }' | grep -vxF "$own_sentinel" || true)
  log "    redis: this node's replica and Sentinel leave the group (other Sentinels: ${LEAVE_OTHER_SENTINELS[*]:-none})"
  if [[ "$(sentinel_primary)" == "$own_ip:${PORT[redis]}" ]]; then
    if dry; then
      log "    would ask the Sentinels to hand the primary role to another server (SENTINEL FAILOVER)"
      return 0
    fi
    log "    redis: this node's server is primary: handing the role over (SENTINEL FAILOVER)"
    REDISCLI_AUTH="$SENTINEL_PASSWORD" redis-cli --user tally-sentinel -h 127.0.0.1 -p "${PORT[sentinel]}" SENTINEL failover "$SENTINEL_NAME" >/dev/null 2>&1 || true
    wait_until 120 "another server promoted" primary_elsewhere "$own_ip:${PORT[redis]}" ||
      die "no other server took over the primary role; leaving now would stop the cluster's Redis (re-run --leave later)"
  fi
}

primary_elsewhere() {
  local primary
  primary="$(sentinel_primary)"
  [[ -n "$primary" && "$primary" != "$1" ]]
}

# leave_replica_forget: after the services stopped, each remaining Sentinel forgets this node's
# server and Sentinel (SENTINEL RESET; one at a time, each seeing the group again before the next).
leave_replica_forget() {
  local sentinel
  for sentinel in "${LEAVE_OTHER_SENTINELS[@]}"; do
    if dry; then
      log "    would reset the Sentinel at $sentinel (SENTINEL RESET $SENTINEL_NAME): it forgets this node's replica and Sentinel"
      continue
    fi
    if REDISCLI_AUTH="$SENTINEL_PASSWORD" redis-cli --user tally-sentinel -h "${sentinel%:*}" -p "${sentinel##*:}" SENTINEL reset "$SENTINEL_NAME" >/dev/null 2>&1; then
      wait_until 30 "Sentinel $sentinel to see its primary again" remote_sentinel_has_primary "$sentinel" || true
      log "    sentinel $sentinel: reset; it now counts $(remote_sentinel_field "$sentinel" num-slaves) replica(s), $(remote_sentinel_field "$sentinel" num-other-sentinels) other Sentinel(s)"
    else
      warn "could not reset the Sentinel at $sentinel: run SENTINEL RESET $SENTINEL_NAME there (as tally-sentinel) so that it forgets this node"
    fi
  done
}

remote_sentinel_field() {
  redis-cli -h "${1%:*}" -p "${1##*:}" SENTINEL master "$SENTINEL_NAME" 2>/dev/null |
    awk -v f="$2" 'NR % 2 == 1 { k = $0 } NR % 2 == 0 && k == f { print; exit }'
}

remote_sentinel_has_primary() { [[ -n "$(remote_sentinel_field "$1" ip)" ]]; }
