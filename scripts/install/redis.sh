#!/usr/bin/env bash
# Tally's own redis-server: config DIR/redis/redis.conf (written by config.sh: bind 127.0.0.1 and
# the --cluster-bind address, requirepass, appendonly yes), data in DIR/redis. Source it; do not
# execute it.

# redis_ready [HOST]: Redis answers PING with its password on HOST (default 127.0.0.1).
redis_ready() {
  [[ "$(REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli -h "${1:-127.0.0.1}" -p "${PORT[redis]}" ping 2>/dev/null)" == PONG ]]
}

start_redis() {
  service_start redis
  dry && return 0
  wait_until 30 redis redis_ready || service_fail redis
  log "    redis: answering on 127.0.0.1:${PORT[redis]} (appendonly, password in tally.env)"
  if [[ -n "$CLUSTER_BIND" ]]; then
    wait_until 10 "redis on $CLUSTER_BIND" redis_ready "$CLUSTER_BIND" || service_fail redis
    log "    redis: answering on $CLUSTER_BIND:${PORT[redis]} too (TALLY_CLUSTER_REDIS_URL, for joined nodes)"
  fi
}
