#!/usr/bin/env bash
# Installs and starts Tally on this host (Debian 12 / Ubuntu, as root); idempotent.
#   ./install.sh [--home DIR] [--port N] [--node-ip IP] [--offline] [--no-systemd] [--dry-run]
#                [--object-store | --s3-endpoint URL --s3-bucket B] [--database-url-file F]
#   ./install.sh --stop --home DIR
#   ./install.sh --join URL --token T [--role media|worker|gpu|control] [--name N] [--redis-replica];  ./install.sh --leave
# ./install.sh --help lists every option. The steps live in scripts/install/*.sh.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/install/lib.sh
source "$here/scripts/install/lib.sh"      # logging, dry-run, files, ports
# shellcheck source=scripts/install/args.sh
source "$here/scripts/install/args.sh"     # command line
# shellcheck source=scripts/install/host.sh
source "$here/scripts/install/host.sh"     # preflight, provision, npm, service users, sysctl
# shellcheck source=scripts/install/config.sh
source "$here/scripts/install/config.sh"   # tally.env, livekit.yaml, admin.key, ports, node IP
# shellcheck source=scripts/install/objects.sh
source "$here/scripts/install/objects.sh"  # where recordings go: local disk, --object-store, --s3-*
# shellcheck source=scripts/install/features.sh
source "$here/scripts/install/features.sh" # run-time dirs, ingress, the final feature checks
# shellcheck source=scripts/install/stun.sh
source "$here/scripts/install/stun.sh"     # does STUN answer? (use_external_ip, else the node's address)
# shellcheck source=scripts/install/postgres.sh
source "$here/scripts/install/postgres.sh" # cluster, role, database, migrations
# shellcheck source=scripts/install/redis.sh
source "$here/scripts/install/redis.sh"
# shellcheck source=scripts/install/sentinel.sh
source "$here/scripts/install/sentinel.sh" # --redis-sentinel (origin), --redis-replica (joined node)
# shellcheck source=scripts/install/services.sh
source "$here/scripts/install/services.sh" # systemd units or supervised background processes; --stop
# shellcheck source=scripts/install/egress.sh
source "$here/scripts/install/egress.sh"   # what the host needs for the egress the agent runs
# shellcheck source=scripts/install/tls.sh
source "$here/scripts/install/tls.sh"      # --domain: Caddy in front, HTTPS
# shellcheck source=scripts/install/turn.sh
source "$here/scripts/install/turn.sh"     # --domain: TURN over TLS (coturn) with Caddy's certificate
# shellcheck source=scripts/install/drain.sh
source "$here/scripts/install/drain.sh"    # upgrades hand the agent's media workers over
# shellcheck source=scripts/install/health.sh
source "$here/scripts/install/health.sh"   # /healthz, summary
# shellcheck source=scripts/install/control.sh
source "$here/scripts/install/control.sh"  # --control-nodes (origin), --join --role control (node)
# shellcheck source=scripts/install/join.sh
source "$here/scripts/install/join.sh"     # --join an origin, --leave it
# shellcheck source=scripts/install/artifacts.sh
source "$here/scripts/install/artifacts.sh" # the origin's builds for joining nodes

# One installer at a time per home.
take_lock() {
  dry && return 0
  local lock
  lock="/run/lock/tally-install-$(printf '%s' "$HOME_DIR" | sha).lock"
  [[ -d /run/lock ]] || lock="/tmp/${lock##*/}"
  exec 9>"$lock"
  flock -n 9 || die "another install.sh is working on $HOME_DIR"
}

main() {
  parse_args "$@"
  if dry; then log "dry run: nothing will be changed"; fi
  take_lock
  case "$ACTION" in
    stop) cancel_agent_hand_over && stop_home && return 0 ;;
    join) join_main && return 0 ;;
    leave) leave_main && return 0 ;;
  esac
  local started=$SECONDS

  step "preflight"
  preflight

  step "runtimes: Node.js and Go (pinned, from the npm registry and the Go module proxy)"
  ensure_runtimes

  step "system packages and LiveKit binaries"
  provision_host
  provision_object_store

  step "node dependencies and Prisma client"
  install_node_deps

  step "service users"
  ensure_service_users

  step "configuration in $HOME_DIR"
  load_existing_env
  select_service_mode
  resolve_agent_user
  select_pg_bin
  resolve_object_store
  want_sentinel_port
  resolve_ports
  resolve_network
  resolve_stun
  resolve_tls
  resolve_turn_tls
  resolve_secrets
  resolve_database
  resolve_control_nodes
  resolve_redis_sentinel
  write_config

  step "kernel UDP buffers"
  tune_kernel

  step "PostgreSQL"
  start_postgres

  step "Redis"
  start_redis
  start_sentinel

  if [[ "$OBJECT_STORE" == bundled ]]; then
    step "object store (versitygw): the bucket, its scoped key, the key broker for joined nodes"
    start_object_store
  fi

  step "database migrations"
  migrate_db

  step "livekit-server, agent (runs egress on demand), api, worker"
  request_agent_hand_over
  start_app_services

  step "health"
  wait_healthy

  step "what each feature needs at run time"
  verify_features origin

  step "HTTPS (--domain)"
  start_tls_proxy

  step "TURN over TLS (--domain): coturn with Caddy's certificate"
  start_turn_tls

  end_step
  if dry; then
    log "dry run finished: nothing was changed"
    print_ports_summary
    return 0
  fi
  log "done in $((SECONDS - started))s"
  print_summary
  print_tls_summary
}

main "$@"
