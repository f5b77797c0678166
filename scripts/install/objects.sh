#!/usr/bin/env bash
# Where recordings go: local disk (default), the object store install.sh runs on this host
# (--object-store: versitygw as tally-objects, data in DIR/object-store) or an existing S3-compatible
# bucket (--s3-endpoint URL --s3-bucket B). docs/recordings.md, docs/adr/0032-bundled-object-store.md.
# Source it; do not execute it.
#
# tally.env remembers the choice (TALLY_OBJECT_STORE) and the TALLY_S3_* the api and worker read;
# the bundled store's root key lives in DIR/object-store.env (root:tally-objects 0640), never in
# tally.env.

TALLY_OBJECTS_USER="${TALLY_OBJECTS_USER:-tally-objects}"
OBJECT_STORE_BUCKET=tally-recordings
# The bundled store's account for the origin's api and worker: role "user", owner of the bucket and
# of nothing else (no bucket creation, no admin API).
OBJECT_STORE_ACCOUNT=tally-origin
OBJECT_STORE="" # "" (local disk) | bundled | external
declare -A S3=() # the TALLY_S3_* values written to tally.env (bucket endpoint region access secret path_style)
OBJECT_STORE_ROOT_ACCESS=""
OBJECT_STORE_ROOT_SECRET=""

PORT_DEFAULT+=([object-store]=7070 [object-store-admin]=7071)
PORT_ENV_KEY+=([object-store]=TALLY_OBJECT_STORE_PORT [object-store-admin]=TALLY_OBJECT_STORE_ADMIN_PORT)
PORT_SERVICE+=([object-store]=object-store [object-store-admin]=object-store)
MANAGED_KEYS+=(TALLY_CLUSTER_S3_ENDPOINT TALLY_OBJECT_STORE_KEYS_SOCKET TALLY_OBJECT_STORE TALLY_OBJECT_STORE_PORT TALLY_OBJECT_STORE_ADMIN_PORT TALLY_S3_BUCKET TALLY_S3_ENDPOINT
  TALLY_S3_PUBLIC_ENDPOINT TALLY_S3_REGION TALLY_S3_ACCESS_KEY TALLY_S3_SECRET_KEY TALLY_S3_FORCE_PATH_STYLE)

object_store_env_file() { printf '%s/object-store.env' "$HOME_DIR"; }
# The key broker's socket (scripts/install/object-store-keys.mjs, docs/adr/0045): its directory,
# tally-objects:TALLY_USER 0750, lets the store's user and Tally's services in, nobody else.
object_store_keys_socket() { printf '%s/object-store-keys/keys.sock' "$HOME_DIR"; }

# object_store_keys_env: the broker's settings besides the root key (which comes from its env file).
object_store_keys_env() {
  printf '%s\n' "TALLY_OBJECT_STORE_KEYS_SOCKET=$(object_store_keys_socket)" \
    "TALLY_OBJECT_STORE_URL=http://127.0.0.1:${PORT[object-store]:-}" \
    "TALLY_OBJECT_STORE_ADMIN_URL=http://127.0.0.1:${PORT[object-store-admin]:-}" \
    "TALLY_OBJECT_STORE_BIN=$HOME_DIR/bin/versitygw" "TALLY_S3_BUCKET=$OBJECT_STORE_BUCKET" \
    "TALLY_OBJECT_STORE_OWNER=$OBJECT_STORE_ACCOUNT" NODE_NO_WARNINGS=1
}

# object_store_recorded: the choice an earlier run wrote into DIR/tally.env (before it is loaded:
# provisioning and the service users need it first).
object_store_recorded() {
  sed -n 's/^TALLY_OBJECT_STORE=//p' "$HOME_DIR/tally.env" 2>/dev/null | tail -n1 || true
}

# object_store_bundled_wanted: this run builds and runs versitygw here.
object_store_bundled_wanted() {
  [[ "$OBJECT_STORE_ARG" == 1 ]] && return 0
  [[ "$S3_BUCKET_ARG" == "" && "$(object_store_recorded)" == bundled ]]
}

# provision_object_store: versitygw into the tools directory (scripts/provision/object-store.sh;
# skipped when its stamp is current), only for --object-store.
provision_object_store() {
  object_store_bundled_wanted || return 0
  log "    bash scripts/provision/object-store.sh (versitygw; ~4 min on 2 cores the first time, then skipped)"
  if dry; then
    log "    would run: bash $TALLY_REPO/scripts/provision/object-store.sh"
    return 0
  fi
  bash "$TALLY_REPO/scripts/provision/object-store.sh" 2>&1 | sed 's/^/[install]     /' ||
    die "versitygw could not be built (above: what failed)"
}

# resolve_object_store: the choice (flags > tally.env), its ports and TALLY_S3_*. An external
# bucket given by flags is probed here, before anything is written. Runs before resolve_ports.
resolve_object_store() {
  if [[ "$OBJECT_STORE_ARG" == 1 ]]; then
    OBJECT_STORE=bundled
  elif [[ -n "$S3_BUCKET_ARG" ]]; then
    OBJECT_STORE=external
  elif [[ "${OLD[TALLY_OBJECT_STORE]:-}" =~ ^(bundled|external)$ ]]; then
    OBJECT_STORE="${OLD[TALLY_OBJECT_STORE]}"
  elif [[ -n "${OLD[TALLY_S3_BUCKET]:-}" ]]; then
    OBJECT_STORE=external # set in tally.env by hand: kept as it is
  fi
  case "$OBJECT_STORE" in
    bundled) resolve_bundled_store ;;
    external) resolve_external_store ;;
    *) log "    recordings: local disk (--object-store or --s3-endpoint/--s3-bucket for object storage)" ;;
  esac
}

resolve_bundled_store() {
  PORT_KEYS+=(object-store object-store-admin)
  if [[ "${OLD[TALLY_OBJECT_STORE]:-}" != bundled && -n "${OLD[TALLY_S3_BUCKET]:-}" ]]; then
    warn "recordings went to s3://${OLD[TALLY_S3_BUCKET]} (${OLD[TALLY_S3_ENDPOINT]:-AWS}); from now on new ones go to the store on this host (the objects already there stay where they are)"
  fi
  S3[bucket]="$OBJECT_STORE_BUCKET" S3[region]=us-east-1 S3[path_style]=true S3[access]="$OBJECT_STORE_ACCOUNT"
  S3[secret]=""
  if [[ "${OLD[TALLY_OBJECT_STORE]:-}" == bundled && "${OLD[TALLY_S3_SECRET_KEY]:-}" =~ ^[0-9a-f]{48}$ ]]; then
    S3[secret]="${OLD[TALLY_S3_SECRET_KEY]}"
  fi
  [[ -n "${S3[secret]}" ]] || S3[secret]="$(random_secret 24)"
  # The root key: kept from DIR/object-store.env, generated once.
  local file
  file="$(object_store_env_file)"
  OBJECT_STORE_ROOT_ACCESS="$(sed -n 's/^ROOT_ACCESS_KEY=//p' "$file" 2>/dev/null | tail -n1 || true)"
  OBJECT_STORE_ROOT_SECRET="$(sed -n 's/^ROOT_SECRET_KEY=//p' "$file" 2>/dev/null | tail -n1 || true)"
  [[ "$OBJECT_STORE_ROOT_ACCESS" =~ ^[A-Za-z0-9_-]{3,}$ ]] || OBJECT_STORE_ROOT_ACCESS="tally-root-$(random_secret 4)"
  [[ "$OBJECT_STORE_ROOT_SECRET" =~ ^[0-9a-f]{48}$ ]] || OBJECT_STORE_ROOT_SECRET="$(random_secret 24)"
  log "    recordings: the object store on this host (versitygw as $TALLY_OBJECTS_USER, data in $HOME_DIR/object-store, bucket ${S3[bucket]})"
}

# object_store_endpoint: where the api and worker reach the bundled store, and where the download
# links (presigned URLs) point: the node's address, which the clients that play recordings reach.
object_store_endpoint() {
  printf 'http://%s:%s' "$NODE_IP" "${PORT[object-store]}"
}

resolve_external_store() {
  if [[ -z "$S3_BUCKET_ARG" ]]; then
    # Kept from tally.env as an earlier run (or the operator) wrote it.
    S3[bucket]="${OLD[TALLY_S3_BUCKET]:-}" S3[endpoint]="${OLD[TALLY_S3_ENDPOINT]:-}"
    S3[region]="${OLD[TALLY_S3_REGION]:-us-east-1}" S3[access]="${OLD[TALLY_S3_ACCESS_KEY]:-}"
    S3[secret]="${OLD[TALLY_S3_SECRET_KEY]:-}" S3[path_style]="${OLD[TALLY_S3_FORCE_PATH_STYLE]:-true}"
    log "    recordings: s3://${S3[bucket]} at ${S3[endpoint]:-AWS} (kept from tally.env)"
    return 0
  fi
  S3[bucket]="$S3_BUCKET_ARG" S3[endpoint]="$S3_ENDPOINT_ARG" S3[region]="${S3_REGION_ARG:-us-east-1}"
  S3[path_style]="${S3_PATH_STYLE_ARG:-true}"
  S3[access]="${TALLY_S3_ACCESS_KEY:-}" S3[secret]="${TALLY_S3_SECRET_KEY:-}"
  local from="TALLY_S3_ACCESS_KEY / TALLY_S3_SECRET_KEY"
  if [[ -n "$S3_CREDENTIALS_FILE_ARG" ]]; then
    from="$S3_CREDENTIALS_FILE_ARG"
    if ! dry || [[ -r "$S3_CREDENTIALS_FILE_ARG" ]]; then
      S3[access]="$(sed -n 's/^[[:space:]]*TALLY_S3_ACCESS_KEY=//p' "$S3_CREDENTIALS_FILE_ARG" | tail -n1)"
      S3[secret]="$(sed -n 's/^[[:space:]]*TALLY_S3_SECRET_KEY=//p' "$S3_CREDENTIALS_FILE_ARG" | tail -n1)"
    fi
  fi
  if [[ -z "${S3[access]}" || -z "${S3[secret]}" ]]; then
    dry || die "--s3-bucket: no keys in $from (TALLY_S3_ACCESS_KEY and TALLY_S3_SECRET_KEY, both needed)"
  fi
  log "    recordings: s3://${S3[bucket]} at ${S3[endpoint]:-AWS} (keys from $from)"
  probe_s3 "the bucket given with --s3-bucket; tally.env was left as it was"
}

# probe_s3 WHAT: PUT, HEAD and DELETE of a probe object with the TALLY_S3_* Tally will use; dies
# naming the call that failed and the server's answer.
probe_s3() {
  if dry; then
    log "    would check s3://${S3[bucket]}: PUT, HEAD and DELETE of a probe object (scripts/install/s3-probe.mjs)"
    return 0
  fi
  local answer
  if answer="$(env TALLY_S3_BUCKET="${S3[bucket]}" TALLY_S3_ENDPOINT="${S3[endpoint]:-}" TALLY_S3_REGION="${S3[region]}" \
    TALLY_S3_ACCESS_KEY="${S3[access]}" TALLY_S3_SECRET_KEY="${S3[secret]}" TALLY_S3_FORCE_PATH_STYLE="${S3[path_style]}" \
    NODE_NO_WARNINGS=1 node "$TALLY_INSTALL_LIB/s3-probe.mjs" 2>&1)"; then
    log "    s3://${S3[bucket]}: a probe object was written, read back and deleted"
  else
    die "recordings cannot be stored in s3://${S3[bucket]} at ${S3[endpoint]:-AWS} ($1): ${answer:-the probe failed}"
  fi
}

# object_store_env_lines: the tally.env lines (api and worker; the agent gets none of them).
object_store_env_lines() {
  [[ -n "$OBJECT_STORE" ]] || return 0
  [[ "$OBJECT_STORE" != bundled ]] || S3[endpoint]="$(object_store_endpoint)"
  cat <<EOF
# Recordings go to object storage (docs/recordings.md): $OBJECT_STORE ($(if [[ "$OBJECT_STORE" == bundled ]]; then
    echo "versitygw on this host, DIR/object-store; its root key is in DIR/object-store.env"
  else echo "an existing bucket"; fi)).
TALLY_OBJECT_STORE=$OBJECT_STORE
TALLY_S3_BUCKET=${S3[bucket]}
TALLY_S3_ENDPOINT=${S3[endpoint]:-}
TALLY_S3_REGION=${S3[region]}
TALLY_S3_ACCESS_KEY=${S3[access]}
TALLY_S3_SECRET_KEY=${S3[secret]}
TALLY_S3_FORCE_PATH_STYLE=${S3[path_style]}
EOF
  if [[ "$OBJECT_STORE" == bundled && -n "$DOMAIN" ]]; then
    echo "# Download links point at https://$(https_origin)/${S3[bucket]}/…, which Caddy passes to the store (Host unchanged)."
    echo "TALLY_S3_PUBLIC_ENDPOINT=https://$(https_origin)"
  elif [[ "$OBJECT_STORE" == external && -n "${OLD[TALLY_S3_PUBLIC_ENDPOINT]:-}" ]]; then
    echo "TALLY_S3_PUBLIC_ENDPOINT=${OLD[TALLY_S3_PUBLIC_ENDPOINT]}"
  fi
  if [[ "$OBJECT_STORE" == bundled ]]; then
    echo "TALLY_OBJECT_STORE_PORT=${PORT[object-store]}"
    echo "TALLY_OBJECT_STORE_ADMIN_PORT=${PORT[object-store-admin]}"
    echo "# The key broker that gives each joined worker/gpu node a key of its own (docs/adr/0045)."
    echo "TALLY_OBJECT_STORE_KEYS_SOCKET=$(object_store_keys_socket)"
    if [[ -n "$CLUSTER_BIND" ]]; then
      echo "# Joined worker/gpu nodes are handed this endpoint with the bucket and a key (docs/cluster.md)."
      echo "TALLY_CLUSTER_S3_ENDPOINT=http://$CLUSTER_BIND:${PORT[object-store]}"
    fi
  elif [[ -n "${OLD[TALLY_CLUSTER_S3_ENDPOINT]:-}" && -z "$S3_BUCKET_ARG" ]]; then
    echo "TALLY_CLUSTER_S3_ENDPOINT=${OLD[TALLY_CLUSTER_S3_ENDPOINT]}"
  fi
}

# object_store_listen_args: --port for loopback, the node's address and the cluster address.
object_store_listen_args() {
  local ip seen=" "
  for ip in 127.0.0.1 "$NODE_IP" "$CLUSTER_BIND"; do
    [[ -n "$ip" && "$seen" != *" $ip "* ]] || continue
    seen+="$ip "
    printf -- '--port\n%s:%s\n' "$ip" "${PORT[object-store]:-}"
  done
}

# write_object_store_config: DIR/object-store (data, IAM accounts) and DIR/object-store.env (the
# root key, which only root and tally-objects read).
write_object_store_config() {
  [[ "$OBJECT_STORE" == bundled ]] || return 0
  own_tree "$HOME_DIR/object-store" "$TALLY_OBJECTS_USER" object-store
  ensure_dir "$HOME_DIR/object-store" 700 "$TALLY_OBJECTS_USER"
  ensure_dir "$HOME_DIR/object-store/data" 700 "$TALLY_OBJECTS_USER"
  ensure_dir "$HOME_DIR/object-store/iam" 700 "$TALLY_OBJECTS_USER"
  ensure_dir "$(dirname "$(object_store_keys_socket)")" 750 "$TALLY_OBJECTS_USER:$TALLY_USER"
  write_file "$(object_store_env_file)" 640 "root:$TALLY_OBJECTS_USER" <<EOF
# The object store's root key (versitygw), written once by install.sh: full control of every bucket
# and account. Tally's services use the bucket-scoped key in tally.env instead.
ROOT_ACCESS_KEY=$OBJECT_STORE_ROOT_ACCESS
ROOT_SECRET_KEY=$OBJECT_STORE_ROOT_SECRET
VGW_REGION=${S3[region]}
VGW_QUIET=true
EOF
  install_tool_binary versitygw
}

# store_admin ARGS...: versitygw's admin CLI against the bundled store, with the root key in its
# environment (not in the process list).
store_admin() {
  ADMIN_ACCESS_KEY="$OBJECT_STORE_ROOT_ACCESS" ADMIN_SECRET_KEY="$OBJECT_STORE_ROOT_SECRET" \
    "$HOME_DIR/bin/versitygw" admin --endpoint-url "http://127.0.0.1:${PORT[object-store-admin]}" "$@"
}

object_store_ready() {
  [[ "$(http_status "http://127.0.0.1:${PORT[object-store]}/")" =~ ^[1-5][0-9][0-9]$ ]] &&
    store_admin list-users >/dev/null 2>&1
}

# start_object_store: the service, then (idempotently) the account and the bucket it owns, then the
# same probe an external bucket gets.
start_object_store() {
  [[ "$OBJECT_STORE" == bundled ]] || return 0
  S3[endpoint]="$(object_store_endpoint)"
  service_start object-store
  if dry; then
    log "    would create the account $OBJECT_STORE_ACCOUNT (role user) and the bucket $OBJECT_STORE_BUCKET it owns, unless present"
    probe_s3 "the object store on this host"
    start_object_store_keys
    return 0
  fi
  wait_until 30 "the object store" object_store_ready || service_fail object-store
  local users buckets
  users="$(store_admin list-users)" || die "versitygw's admin API: cannot list accounts"
  if [[ "$users" =~ (^|$'\n')"$OBJECT_STORE_ACCOUNT"[[:space:]] ]]; then
    store_admin update-user --access "$OBJECT_STORE_ACCOUNT" --secret "${S3[secret]}" --role user >/dev/null ||
      die "versitygw's admin API: cannot update the account $OBJECT_STORE_ACCOUNT"
  else
    store_admin create-user --access "$OBJECT_STORE_ACCOUNT" --secret "${S3[secret]}" --role user >/dev/null ||
      die "versitygw's admin API: cannot create the account $OBJECT_STORE_ACCOUNT"
    log "    account $OBJECT_STORE_ACCOUNT created (role user: its own bucket only)"
  fi
  buckets="$(store_admin list-buckets)" || die "versitygw's admin API: cannot list buckets"
  if [[ "$buckets" =~ (^|$'\n')"$OBJECT_STORE_BUCKET"[[:space:]]+([^[:space:]]+) ]]; then
    if [[ "${BASH_REMATCH[2]}" != "$OBJECT_STORE_ACCOUNT" ]]; then
      store_admin change-bucket-owner --bucket "$OBJECT_STORE_BUCKET" --owner "$OBJECT_STORE_ACCOUNT" >/dev/null ||
        die "versitygw's admin API: cannot hand the bucket $OBJECT_STORE_BUCKET to $OBJECT_STORE_ACCOUNT"
    fi
  else
    store_admin create-bucket --bucket "$OBJECT_STORE_BUCKET" --owner "$OBJECT_STORE_ACCOUNT" >/dev/null ||
      die "versitygw's admin API: cannot create the bucket $OBJECT_STORE_BUCKET"
    log "    bucket $OBJECT_STORE_BUCKET created, owned by $OBJECT_STORE_ACCOUNT"
  fi
  log "    object store: answering on $(object_store_listen_args | paste -sd' ' | sed 's/--port //g') (admin API on 127.0.0.1:${PORT[object-store-admin]})"
  probe_s3 "the object store on this host"
  start_object_store_keys
}

# start_object_store_keys: the key broker beside the store (docs/adr/0045), once its socket answers.
start_object_store_keys() {
  service_start object-store-keys
  dry && return 0
  wait_until 30 "the object store's key broker" object_store_keys_ready || service_fail object-store-keys
  log "    key broker: $(object_store_keys_socket) (accounts tally-node-* for joined nodes, staging only)"
}

object_store_keys_ready() {
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$(object_store_keys_socket)" http://broker/nodes 2>/dev/null)" == 200 ]]
}

# object_store_summary: the install summary's line on where recordings go.
object_store_summary() {
  case "$OBJECT_STORE" in
    bundled) printf 's3://%s on this host (%s, data in %s/object-store; root key in %s)\n' "${S3[bucket]}" \
      "$(object_store_endpoint)" "$HOME_DIR" "$(object_store_env_file)" ;;
    external) printf 's3://%s at %s\n' "${S3[bucket]}" "${S3[endpoint]:-AWS}" ;;
    *) printf 'local disk (%s)\n' "$(sed -n 's/^TALLY_RECORDINGS_DIR=//p' "$HOME_DIR/tally.env")" ;;
  esac
}
