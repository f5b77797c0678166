#!/usr/bin/env bash
# Command line of install.sh. Source it; do not execute it.
# shellcheck disable=SC2034 # globals read by the other scripts/install files

TALLY_USAGE="Usage:
  ./install.sh [--home DIR] [--port N] [--node-ip IP] [--offline|--online] [--no-systemd]
               [--no-sysctl] [--pg-port N] [--redis-port N] [--livekit-port N]
               [--rtc-tcp-port N] [--rtc-udp-port N] [--turn-udp-port N] [--egress-template-port N]
               [--ingress-rtmp-port N] [--ingress-whip-port N] [--ingress-relay-port N]
               [--ingress-udp-port N] [--cluster-bind IP [--redis-sentinel] [--sentinel-port N]
               [--control-nodes IP[:PORT],...|none]]
               [--domain NAME [--tls internal] [--turn-tls-port N | --turn-address IP]]
               [--database-url-file F]
               [--object-store [--object-store-port N] |
                --s3-endpoint URL --s3-bucket B [--s3-region R] [--s3-path-style true|false]
                [--s3-credentials-file F]] [--dry-run]
  ./install.sh --stop [--home DIR] [--dry-run]
  ./install.sh --join URL --token T [--role media|worker|gpu|control] [--name N] [--insecure-http]
               [--redis-replica [--redis-port N] [--sentinel-port N]]
               [--recordings-dir DIR] [--home DIR] [--node-ip IP] [--offline] [--no-provision]
               [--no-systemd] [--dry-run]
  ./install.sh --leave [--home DIR] [--dry-run]

Installs Tally on this host (Debian 12 / Ubuntu, as root): its runtimes, Node.js 24 and Go,
pinned and hash-checked from the npm registry and the Go module proxy (scripts/provision/runtimes.sh;
a host's own Node or Go is neither needed nor touched), system packages and LiveKit
binaries (scripts/provision.sh), npm dependencies, a PostgreSQL cluster and a Redis instance
of its own under DIR, livekit-server, the node agent, LiveKit egress (recordings), the API and
the worker, each service as a system user of its own (tally-postgres, tally-redis,
tally-livekit, tally-media for the agent and its workers, tally for the API and the worker;
tally-objects for the object store of --object-store).
Re-running keeps every secret, the data and the chosen ports; it restarts the agent, API and
worker (picking up new code).

Options:
  --home DIR          where config, data and logs live (default \$TALLY_HOME or /var/lib/tally)
  --port N            API port (default \$TALLY_PORT or 8080)
  --node-ip IP        address announced for WebRTC media (default: remembered, else detected
                      from the routing table without sending traffic, else 127.0.0.1)
  --offline           no public STUN: use_external_ip false, stun_servers 127.0.0.1:3478
                      (remembered; --online reverts). Without it every run asks the STUN
                      servers (\$TALLY_STUN_SERVERS, default LiveKit's) for up to
                      \$TALLY_STUN_TIMEOUT_S (3) seconds: use_external_ip true when one answers,
                      else livekit-server announces the node IP
  --domain NAME       HTTPS: Caddy (Debian's package) in front of the API, the dashboard and
                      LiveKit's signalling on https://NAME (ports 443/80; \$TALLY_HTTPS_PORT,
                      \$TALLY_HTTP_PORT); the API and LiveKit's HTTP port then listen on 127.0.0.1
                      only and /metrics needs TALLY_METRICS_TOKEN (remembered). Also TURN over
                      TLS for clients whose network drops UDP: coturn (Debian's package) on TCP
                      5349 with Caddy's certificate for NAME, handed to every participant by
                      livekit-server as turns:NAME:5349; renewed certificates reach it within
                      \$TALLY_TURN_CERT_CHECK_S (600) seconds, without dropping a session
  --turn-address IP   with --domain: TURN over TLS on TCP 443 of IP, a second address of this host
                      (for networks that pass only TCP 443), instead of 5349: coturn listens
                      there, Caddy binds only the host's other addresses, and participants are
                      handed turns:turn.NAME:443 with Caddy's certificate for turn.NAME (DNS:
                      turn.NAME must resolve to IP; with ACME Caddy answers its challenge on port
                      80 of IP). Remembered; --turn-address off goes back to 5349
  --tls internal      with --domain: a certificate from Caddy's local CA (hosts without public
                      DNS; the summary prints where its CA certificate is); --tls acme (default):
                      a public certificate, NAME must resolve here
  --no-systemd        run services as supervised background processes even under systemd
  --no-sysctl         leave the kernel UDP buffer sizes alone
  --pg-port N, --redis-port N, --livekit-port N, --rtc-tcp-port N, --rtc-udp-port N,
  --turn-udp-port N (livekit-server's TURN relay over UDP), --turn-tls-port N (TURN over TLS, --domain),
  --egress-template-port N (egress web template, localhost)
                      ports (defaults 5432, 6379, 7880, 7881, 7882 UDP, 3478 UDP, 5349, 7980; a taken
                      default port is replaced by a free one; a taken explicit one is an error).
                      Also: \$TALLY_PG_PORT \$TALLY_REDIS_PORT \$TALLY_LIVEKIT_PORT
                      \$TALLY_RTC_TCP_PORT \$TALLY_RTC_UDP_PORT \$TALLY_TURN_UDP_PORT \$TALLY_TURN_TLS_PORT
                      \$TALLY_EGRESS_TEMPLATE_PORT
                      (egress and ingress open no status port: the agent supervises them)
  --ingress-rtmp-port N, --ingress-whip-port N, --ingress-relay-port N, --ingress-udp-port N
                      LiveKit ingress (RTMP / WHIP in, relay on localhost; defaults 1935, 8085,
                      7892, 7885 UDP);
                      also \$TALLY_INGRESS_RTMP_PORT ... \$TALLY_INGRESS_UDP_PORT
  --object-store      recordings go to an S3 object store on this host: versitygw (built from the Go
                      module proxy), run as the system user tally-objects with its data in
                      DIR/object-store, listening on 127.0.0.1, the node IP and the --cluster-bind
                      address (port 7070, --object-store-port N; its admin API on 127.0.0.1, 7071);
                      the bucket tally-recordings and a key that reaches that bucket only go into
                      tally.env; the store's root key stays in DIR/object-store.env (root and
                      tally-objects only), read by the store and its key broker (the service
                      object-store-keys), which gives each joined worker/gpu node a staging-only
                      key of its own and deletes it when the node is removed. Remembered;
                      docs/recordings.md, docs/adr/0045-object-store-key-per-node.md
  --s3-endpoint URL, --s3-bucket B
                      recordings go to an existing S3-compatible bucket (empty URL: AWS); the keys
                      come from \$TALLY_S3_ACCESS_KEY and \$TALLY_S3_SECRET_KEY or from
                      --s3-credentials-file F (lines TALLY_S3_ACCESS_KEY=... TALLY_S3_SECRET_KEY=...);
                      --s3-region R (default us-east-1), --s3-path-style false for virtual-host
                      URLs (default true). Checked by writing, reading back and deleting a probe
                      object before tally.env is written. Remembered.
                      Without --object-store or --s3-*, recordings stay on local disk.
  --database-url-file F
                      keep Tally's data in an existing PostgreSQL (managed, or a replicated one
                      behind one address such as Patroni's) instead of a cluster under DIR: F
                      holds its URL (postgresql://USER:PASSWORD@HOST:PORT/DB, the USER owning DB);
                      \$TALLY_DATABASE_URL works too (neither puts the password on the command
                      line). Checked by connecting before tally.env is written; the migrations
                      run there. Remembered (TALLY_DATABASE=external); the local cluster, if
                      one ran, is stopped and its data left in DIR/postgres (docs/cluster.md)
  --dry-run           print what would be done; change nothing
  --stop              stop everything this home started and wait for it to exit
  --cluster-bind IP   (origin) Redis also listens on IP, an address of this host, with its
                      password, so hosts on that network can join; TALLY_CLUSTER_REDIS_URL
                      points there (remembered; docs/cluster.md)
  --redis-sentinel    (origin, with --cluster-bind) Redis with Sentinel, so the cluster survives
                      losing its Redis primary (docs/adr/0040-redis-sentinel.md): a Sentinel
                      (Debian's redis-server in Sentinel mode, as tally-redis, config and state in
                      DIR/sentinel) on 127.0.0.1 and the --cluster-bind address, port 26379
                      (--sentinel-port N), monitoring this Redis as the group "tally" with quorum 2;
                      Redis gets a replication user (tally-replication) and the Sentinels' user
                      (tally-sentinel); every service here and on every joined node finds the
                      primary through the Sentinels (REDIS_SENTINELS). Nodes joined with
                      --redis-replica add a replica and a Sentinel each: with two of them, three
                      Sentinels agree on a failover. Remembered; a re-run keeps the topology (this
                      Redis stays a replica while the Sentinels name another server primary)
  --control-nodes L   (origin, with --cluster-bind) hosts that run a second API and worker
                      (joined with --role control; docs/adr/0043-control-plane-replicas.md), as
                      comma-separated IP[:PORT] (their API port, default 8080): PostgreSQL also
                      listens on the --cluster-bind address and admits the role tally from exactly
                      these addresses (pg_hba, by password; sessions from an address taken off the
                      list are ended); TALLY_CLUSTER_DATABASE_URL points there, so the API hands
                      control tokens out; with --domain, Caddy balances the API and dashboard over
                      this host's API and theirs (health-checked /healthz; joins and the nodes'
                      downloads stay on this host). Remembered; "none" removes them all

Joining another origin (docs/cluster.md):
  --join URL          the origin's API (https://; http:// only for loopback/private addresses
                      together with --insecure-http); POST URL/v1/nodes/join-tokens there gives T
  --token T           the one-time join token
  --role R            media (livekit-server, default), worker (egress, ingress), gpu (egress), or
                      control: a second API and worker on the origin's PostgreSQL and Redis
                      (the origin lists this host in --control-nodes first; the node's API listens
                      on the node IP, port 8080 or --port N; its worker shares the origin's queues
                      and webhook deliveries), with the origin's secrets in DIR/tally.env
  --name N            this node's id in the pool (default: the host name)
  --recordings-dir D  the origin's recordings directory as mounted on this host (a shared mount
                      writable by tally-media): ladders and recordings placed on this node
                      are read and written there (remembered; default DIR/recordings, which the
                      origin does not see)
  --redis-replica     (the token made with redisReplica: true; the origin installed with
                      --redis-sentinel) this node also runs a replica of the origin's Redis (in
                      DIR/redis, on the node IP and 127.0.0.1, port 6379 or --redis-port N) and a
                      Sentinel (DIR/sentinel, port 26379 or --sentinel-port N), with the replication
                      and Sentinel credentials handed over in the join; it waits until the replica
                      is in sync and the Sentinel sees the primary and another Sentinel. Remembered;
                      a re-run keeps both as the Sentinels left them. --leave first hands the
                      primary role to another server if this one holds it, then stops both and has
                      every other Sentinel forget them (SENTINEL RESET)
  --no-provision      the tools are installed already: skip apt and the LiveKit builds
  --leave             drain this joined node (waits up to \$TALLY_LEAVE_TIMEOUT_S, default 600 s,
                      for its work to finish), stop its services, remove it from the pool and
                      delete the cluster credentials from DIR

Environment: TALLY_NODE_CPU_MILLICORES, TALLY_NODE_RAM_MB, TALLY_NODE_NIC_MBPS and
TALLY_NODE_NVENC_SESSIONS given to --join replace what the node's agent measures (remembered in
DIR/tally.env). TALLY_ADMIN_KEY (>= 24 chars) is used as the admin key when DIR/admin.key does
not exist yet; otherwise one is generated there once. TALLY_SECRETS_KEY (64 hex chars) likewise
seeds the key that seals stored secrets when DIR/tally.env has none yet."

# Results (globals read by the other install files).
ACTION=install
HOME_DIR="${TALLY_HOME:-/var/lib/tally}"
NODE_IP_ARG=""
OFFLINE_ARG="" # "", 1 (--offline) or 0 (--online)
USE_SYSTEMD_ARG=1
DO_SYSCTL=1
CLUSTER_BIND_ARG=""
CONTROL_NODES_ARG="" # --control-nodes (origin): "" = as remembered, "none" = no control node
REDIS_SENTINEL_ARG=0 # --redis-sentinel (origin)
JOIN_REDIS_REPLICA=0 # --redis-replica (joined node)
JOIN_URL=""
JOIN_TOKEN=""
JOIN_ROLE=media
JOIN_NAME=""
RECORDINGS_DIR_ARG=""
DOMAIN_ARG=""
TLS_ARG=""
TURN_ADDRESS_ARG="" # --turn-address IP | off
INSECURE_HTTP=0
DO_PROVISION=1
OBJECT_STORE_ARG=0 # --object-store
DATABASE_URL_FILE_ARG="" # --database-url-file
S3_ENDPOINT_ARG="" S3_ENDPOINT_GIVEN=0 S3_BUCKET_ARG="" S3_REGION_ARG="" S3_PATH_STYLE_ARG="" S3_CREDENTIALS_FILE_ARG=""
# Explicit ports (flag or environment); empty = not given.
declare -A PORT_ARG=(
  [api]="${TALLY_PORT:-}"
  [pg]="${TALLY_PG_PORT:-}"
  [redis]="${TALLY_REDIS_PORT:-}"
  [livekit]="${TALLY_LIVEKIT_PORT:-}"
  [rtc-tcp]="${TALLY_RTC_TCP_PORT:-}"
  [rtc-udp]="${TALLY_RTC_UDP_PORT:-}"
  [turn-udp]="${TALLY_TURN_UDP_PORT:-}"
  [turn-tls]="${TALLY_TURN_TLS_PORT:-}"
  [egress-template]="${TALLY_EGRESS_TEMPLATE_PORT:-}"
  [ingress-rtmp]="${TALLY_INGRESS_RTMP_PORT:-}"
  [ingress-whip]="${TALLY_INGRESS_WHIP_PORT:-}"
  [ingress-relay]="${TALLY_INGRESS_RELAY_PORT:-}"
  [ingress-udp]="${TALLY_INGRESS_UDP_PORT:-}"
  [object-store]="${TALLY_OBJECT_STORE_PORT:-}"
  [object-store-admin]="${TALLY_OBJECT_STORE_ADMIN_PORT:-}"
  [sentinel]="${TALLY_SENTINEL_PORT:-}"
)

parse_args() {
  local home_given=0 key
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --home)
        need_value "$@"
        HOME_DIR="$2" home_given=1
        shift
        ;;
      --home=*) HOME_DIR="${1#*=}" home_given=1 ;;
      --port | --pg-port | --redis-port | --livekit-port | --rtc-tcp-port | --rtc-udp-port | --turn-udp-port | --turn-tls-port | --egress-template-port | \
        --ingress-rtmp-port | --ingress-whip-port | --ingress-relay-port | --ingress-udp-port | --sentinel-port)
        need_value "$@"
        key="${1#--}"            # --rtc-udp-port -> rtc-udp-port (--egress-template-port likewise)
        key="${key%port}"        # -> rtc-udp-
        key="${key%-}"           # -> rtc-udp   (--port -> "" -> api)
        PORT_ARG[${key:-api}]="$2"
        shift
        ;;
      --node-ip)
        need_value "$@"
        NODE_IP_ARG="$2"
        shift
        ;;
      --offline) OFFLINE_ARG=1 ;;
      --online) OFFLINE_ARG=0 ;;
      --no-systemd) USE_SYSTEMD_ARG=0 ;;
      --no-sysctl) DO_SYSCTL=0 ;;
      --dry-run) DRY_RUN=1 ;;
      --stop) ACTION=stop ;;
      --join)
        need_value "$@"
        ACTION=join JOIN_URL="${2%/}"
        shift
        ;;
      --domain | --tls | --turn-address)
        need_value "$@"
        case "$1" in
          --domain) DOMAIN_ARG="$2" ;;
          --tls) TLS_ARG="$2" ;;
          --turn-address) TURN_ADDRESS_ARG="$2" ;;
        esac
        shift
        ;;
      --token | --role | --name | --cluster-bind | --recordings-dir | --database-url-file | --control-nodes)
        need_value "$@"
        case "$1" in
          --database-url-file) DATABASE_URL_FILE_ARG="$2" ;;
          --token) JOIN_TOKEN="$2" ;;
          --role) JOIN_ROLE="$2" ;;
          --name) JOIN_NAME="$2" ;;
          --cluster-bind) CLUSTER_BIND_ARG="$2" ;;
          --recordings-dir) RECORDINGS_DIR_ARG="${2%/}" ;;
          --control-nodes) CONTROL_NODES_ARG="$2" ;;
        esac
        shift
        ;;
      --insecure-http) INSECURE_HTTP=1 ;;
      --redis-sentinel) REDIS_SENTINEL_ARG=1 ;;
      --redis-replica) JOIN_REDIS_REPLICA=1 ;;
      --object-store) OBJECT_STORE_ARG=1 ;;
      --object-store-port)
        need_value "$@"
        PORT_ARG[object-store]="$2"
        shift
        ;;
      --s3-endpoint)
        # An empty URL (AWS) is a value too.
        [[ $# -ge 2 && "$2" != --* ]] || die "--s3-endpoint needs a value (see --help)"
        S3_ENDPOINT_ARG="$2" S3_ENDPOINT_GIVEN=1
        shift
        ;;
      --s3-bucket | --s3-region | --s3-path-style | --s3-credentials-file)
        need_value "$@"
        case "$1" in
          --s3-bucket) S3_BUCKET_ARG="$2" ;;
          --s3-region) S3_REGION_ARG="$2" ;;
          --s3-path-style) S3_PATH_STYLE_ARG="$2" ;;
          --s3-credentials-file) S3_CREDENTIALS_FILE_ARG="$2" ;;
        esac
        shift
        ;;
      --no-provision) DO_PROVISION=0 ;;
      --leave) ACTION=leave ;;
      -h | --help)
        printf '%s\n' "$TALLY_USAGE"
        exit 0
        ;;
      *) die "unknown argument: $1 (see --help)" ;;
    esac
    shift
  done

  [[ "$HOME_DIR" == /* ]] || HOME_DIR="$(pwd)/$HOME_DIR"
  HOME_DIR="${HOME_DIR%/}"
  [[ -n "$HOME_DIR" && "$HOME_DIR" != / ]] || die "--home must not be /"
  [[ "$HOME_DIR" != *[[:space:]\'\"\\\$\`]* ]] || die "--home must not contain spaces or quotes: $HOME_DIR"
  # The PostgreSQL socket lives in DIR/postgres; a unix socket path has at most 107 bytes.
  ((${#HOME_DIR} <= 70)) || die "--home path is too long (max 70 characters): $HOME_DIR"
  if [[ "$ACTION" == stop && "$home_given" == 0 && -z "${TALLY_HOME:-}" ]]; then
    log "--stop without --home: using $HOME_DIR"
  fi

  for key in "${!PORT_ARG[@]}"; do
    local value="${PORT_ARG[$key]}"
    if [[ -n "$value" ]] && ! [[ "$value" =~ ^[0-9]+$ && "$value" -ge 1 && "$value" -le 65535 ]]; then
      die "invalid port for $key: $value"
    fi
  done
  if [[ -n "$NODE_IP_ARG" ]] && ! is_ipv4 "$NODE_IP_ARG"; then
    die "--node-ip must be an IPv4 address, got: $NODE_IP_ARG"
  fi
  if [[ -n "$CLUSTER_BIND_ARG" ]] && ! is_ipv4 "$CLUSTER_BIND_ARG"; then
    die "--cluster-bind must be an IPv4 address, got: $CLUSTER_BIND_ARG"
  fi
  check_object_store_args
  [[ -z "$DATABASE_URL_FILE_ARG" && -z "${TALLY_DATABASE_URL:-}" || "$ACTION" == install ]] ||
    die "--database-url-file and TALLY_DATABASE_URL configure an origin install; joined nodes hold no database URL"
  [[ -z "$DATABASE_URL_FILE_ARG" || -r "$DATABASE_URL_FILE_ARG" ]] || dry || die "--database-url-file $DATABASE_URL_FILE_ARG cannot be read"
  check_control_nodes_arg
  [[ "$REDIS_SENTINEL_ARG" == 0 || "$ACTION" == install ]] || die "--redis-sentinel configures an origin install; a joined node runs a Sentinel with --redis-replica"
  [[ "$JOIN_REDIS_REPLICA" == 0 || "$ACTION" == join ]] || die "--redis-replica goes with --join (a node that runs a replica of the origin's Redis)"
  if [[ "$ACTION" == join ]]; then
    [[ -n "$JOIN_TOKEN" ]] || die "--join needs --token (POST /v1/nodes/join-tokens on the origin gives one)"
    [[ "$JOIN_ROLE" =~ ^(media|worker|gpu|control)$ ]] || die "--role must be media, worker, gpu or control, got: $JOIN_ROLE"
    [[ "$JOIN_ROLE" != control || "$JOIN_REDIS_REPLICA" == 0 ]] || die "--redis-replica goes with the roles media, worker and gpu"
    JOIN_NAME="${JOIN_NAME:-$(hostname)}"
    [[ "$JOIN_NAME" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || die "--name must be letters, digits and _ . - (starting with a letter or digit), got: $JOIN_NAME"
    if [[ -n "$RECORDINGS_DIR_ARG" ]]; then
      [[ "$RECORDINGS_DIR_ARG" == /* && "$RECORDINGS_DIR_ARG" != *[[:space:]\'\"\\\$\`]* ]] ||
        die "--recordings-dir must be an absolute path without spaces or quotes, got: $RECORDINGS_DIR_ARG"
    fi
  fi
}

# check_object_store_args: --object-store and --s3-* exclude each other; --s3-* needs a bucket.
check_object_store_args() {
  local s3_given=0
  [[ "$S3_ENDPOINT_GIVEN$S3_BUCKET_ARG$S3_REGION_ARG$S3_PATH_STYLE_ARG$S3_CREDENTIALS_FILE_ARG" == 0 ]] || s3_given=1
  if [[ "$OBJECT_STORE_ARG" == 1 || "$s3_given" == 1 ]] && [[ "$ACTION" != install ]]; then
    die "--object-store and --s3-* configure an origin install; a joined node gets its object store from the origin"
  fi
  [[ "$OBJECT_STORE_ARG" == 0 || "$s3_given" == 0 ]] || die "--object-store (a store on this host) and --s3-* (an existing one) exclude each other"
  if [[ "$s3_given" == 1 ]]; then
    [[ -n "$S3_BUCKET_ARG" ]] || die "--s3-endpoint needs --s3-bucket B"
    [[ "$S3_BUCKET_ARG" =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ ]] || die "--s3-bucket must be an S3 bucket name (3-63 of a-z 0-9 . -), got: $S3_BUCKET_ARG"
    [[ -z "$S3_ENDPOINT_ARG" || "$S3_ENDPOINT_ARG" =~ ^https?://[^[:space:]\'\"]+$ ]] || die "--s3-endpoint must be an http(s):// URL, got: $S3_ENDPOINT_ARG"
    [[ -z "$S3_PATH_STYLE_ARG" || "$S3_PATH_STYLE_ARG" =~ ^(true|false)$ ]] || die "--s3-path-style must be true or false, got: $S3_PATH_STYLE_ARG"
    [[ -z "$S3_REGION_ARG" || "$S3_REGION_ARG" =~ ^[a-z0-9-]+$ ]] || die "--s3-region must be letters, digits and -, got: $S3_REGION_ARG"
    [[ -z "$S3_CREDENTIALS_FILE_ARG" || -r "$S3_CREDENTIALS_FILE_ARG" ]] || dry || die "--s3-credentials-file $S3_CREDENTIALS_FILE_ARG cannot be read"
  fi
}

# check_control_nodes_arg: --control-nodes is an origin's list of IPv4[:port], or none.
check_control_nodes_arg() {
  [[ -n "$CONTROL_NODES_ARG" ]] || return 0
  [[ "$ACTION" == install ]] || die "--control-nodes configures an origin install; a control node joins with --join --role control"
  [[ "$CONTROL_NODES_ARG" != none ]] || return 0
  local entry
  for entry in ${CONTROL_NODES_ARG//,/ }; do
    is_ipv4 "${entry%%:*}" && [[ "$entry" =~ ^[0-9.]+(:[0-9]{1,5})?$ ]] ||
      die "--control-nodes must be comma-separated IPv4[:PORT] (or none), got: $CONTROL_NODES_ARG"
  done
}

# need_value "$@": dies unless the option in $1 is followed by a value.
need_value() {
  [[ $# -ge 2 && -n "$2" && "$2" != --* ]] || die "$1 needs a value (see --help)"
}

is_ipv4() {
  local IFS=. part
  # shellcheck disable=SC2206 # splitting on dots is the point
  local parts=($1)
  [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ && ${#parts[@]} -eq 4 ]] || return 1
  for part in "${parts[@]}"; do
    ((10#$part <= 255)) || return 1
  done
}
