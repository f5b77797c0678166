#!/usr/bin/env bash
# Starting and stopping Tally's services (postgres redis object-store object-store-keys livekit agent api worker), either as
# systemd units (deploy/systemd/tally-*.service rendered into /etc/systemd/system) or as
# supervised background processes (scripts/install/supervise.sh; pid files in DIR/run,
# logs in DIR/log). Source it; do not execute it.
#
# A service whose command and config did not change keeps running on a re-run; api and
# worker are always restarted (new code, new migrations).

SERVICE_MODE=""  # systemd | background
SYSTEMD_UNIT_DIR="${TALLY_SYSTEMD_UNIT_DIR:-/etc/systemd/system}"
NODE_BIN=""

systemd_is_init() {
  [[ -d /run/systemd/system ]] && [[ "$(cat /proc/1/comm 2>/dev/null)" == systemd ]]
}

recorded_mode() {
  cat "$HOME_DIR/run/mode" 2>/dev/null || true
}

# select_service_mode: systemd when it is PID 1 (unless --no-systemd). When the previous run
# used the other mode, what it started is stopped first.
select_service_mode() {
  if [[ "$USE_SYSTEMD_ARG" == 1 ]] && systemd_is_init; then
    SERVICE_MODE=systemd
  else
    SERVICE_MODE=background
  fi
  local previous
  previous="$(recorded_mode)"
  if [[ -n "$previous" && "$previous" != "$SERVICE_MODE" ]]; then
    log "    services ran as $previous last time; stopping those first"
    local mode="$SERVICE_MODE"
    SERVICE_MODE="$previous"
    stop_all_services
    SERVICE_MODE="$mode"
  fi
  if [[ "$SERVICE_MODE" == systemd ]]; then
    check_units_belong_here
    log "    services: systemd units tally-*.service"
  else
    log "    services: background processes (pid files in $HOME_DIR/run, logs in $HOME_DIR/log)"
  fi
  if ! dry; then
    mkdir -p "$HOME_DIR/run"
    printf '%s\n' "$SERVICE_MODE" >"$HOME_DIR/run/mode"
  fi
}

# turn_capabilities: what coturn needs besides its user: binding a port below 1024 (443 with
# --turn-address); nothing on 5349.
turn_capabilities() {
  if [[ "${TURN_PORT:-}" =~ ^[0-9]+$ ]] && ((TURN_PORT < 1024)); then echo CAP_NET_BIND_SERVICE; fi
}

unit_file() { printf '%s/tally-%s.service' "$SYSTEMD_UNIT_DIR" "$1"; }

# Unit names are global: refuse to take over units another home installed.
check_units_belong_here() {
  local name file
  for name in "${TALLY_SERVICES[@]}"; do
    file="$(unit_file "$name")"
    if [[ -f "$file" ]] && ! grep -q "^# TALLY_HOME=$HOME_DIR\$" "$file"; then
      die "$file belongs to another Tally home ($(sed -n 's/^# TALLY_HOME=//p' "$file")); stop it with ./install.sh --stop --home THAT_DIR and remove the units, or use --no-systemd"
    fi
  done
}

# agent_env_file: an origin's agent reads DIR/agent.env (the part of tally.env it needs, readable
# by the media user); a joined node's tally.env holds nothing more than that, so it reads that.
agent_env_file() {
  if [[ "$ACTION" == join ]]; then printf '%s/tally.env' "$HOME_DIR"; else printf '%s/agent.env' "$HOME_DIR"; fi
}

# service_spec NAME: the command line, its user and how to run/stop it (background mode; the
# systemd templates in deploy/systemd say the same). The Node services keep Node's compile cache in
# DIR/cache/NAME (the units: CacheDirectory=), so a restart does not compile their code again.
service_spec() {
  SPEC_CWD="$HOME_DIR" SPEC_ENV_FILE="-" SPEC_STOP_SIGNAL=TERM SPEC_STOP_TIMEOUT=30 SPEC_ALWAYS_RESTART=0
  SPEC_USER="$TALLY_USER"
  SPEC_CONFIG=()
  case "$1" in
    postgres)
      # SIGINT = PostgreSQL's "fast" shutdown (SIGTERM would wait for every client to leave).
      SPEC_CMD=("$PG_BIN/postgres" -D "$HOME_DIR/postgres/data" -p "${PORT[pg]:-}" -k "$HOME_DIR/postgres"
        -c "listen_addresses=$(postgres_listen_addresses)")
      SPEC_STOP_SIGNAL=INT SPEC_STOP_TIMEOUT=60 SPEC_USER="$TALLY_PG_USER"
      ;;
    redis)
      SPEC_CMD=("$(command -v redis-server || echo /usr/bin/redis-server)" "$HOME_DIR/redis/redis.conf")
      SPEC_CONFIG=("$HOME_DIR/redis/redis.conf")
      SPEC_USER="$TALLY_REDIS_USER"
      ;;
    sentinel)
      # Redis Sentinel (scripts/install/sentinel.sh): Debian's redis-sentinel is this binary in Sentinel mode.
      SPEC_CMD=("$(command -v redis-server || echo /usr/bin/redis-server)" "$HOME_DIR/sentinel/sentinel.conf" --sentinel)
      SPEC_USER="$TALLY_REDIS_USER"
      ;;
    livekit)
      # livekit-server drains on SIGTERM (waits for participants to leave).
      SPEC_CMD=("$HOME_DIR/bin/livekit-server" --config "$HOME_DIR/livekit.yaml")
      SPEC_CONFIG=("$HOME_DIR/livekit.yaml" "$HOME_DIR/bin/livekit-server")
      SPEC_STOP_TIMEOUT=60 SPEC_USER="$TALLY_LIVEKIT_USER"
      ;;
    api | worker)
      # A young generation capped at 2 MB keeps the worker ~30 MB smaller idle; the API gets 8 MB: half
      # the CPU per request under load for ~10 MB idle (docs/capacity.md, bench:base-load and
      # bench:control-plane). libs/testing's appCommand and deploy/systemd match.
      local semi_space=2
      [[ $1 == api ]] && semi_space=8
      SPEC_CMD=(env "NODE_COMPILE_CACHE=$HOME_DIR/cache/$1" "$NODE_BIN" "--max-semi-space-size=$semi_space" "dist/$1.js")
      SPEC_CWD="$TALLY_REPO" SPEC_ENV_FILE="$HOME_DIR/tally.env" SPEC_ALWAYS_RESTART=1
      ;;
    agent)
      # The agent stops its egress and ingress first (30 s grace each, a few seconds more when Redis
      # is unreachable): killed before, it would leave them running.
      SPEC_CMD=(env "NODE_COMPILE_CACHE=$HOME_DIR/cache/agent" "$NODE_BIN" --max-semi-space-size=2 dist/agent.js)
      SPEC_CWD="$TALLY_REPO" SPEC_ENV_FILE="$(agent_env_file)" SPEC_ALWAYS_RESTART=1 SPEC_STOP_TIMEOUT=45
      SPEC_USER="${AGENT_USER:-$TALLY_MEDIA_USER}"
      ;;
    object-store)
      # versitygw (scripts/install/objects.sh): the root key comes from its env file, not argv.
      # shellcheck disable=SC2046 # one word per line
      SPEC_CMD=("$HOME_DIR/bin/versitygw" $(object_store_listen_args) --admin-port "127.0.0.1:${PORT[object-store-admin]:-}"
        --iam-dir "$HOME_DIR/object-store/iam" posix "$HOME_DIR/object-store/data")
      SPEC_ENV_FILE="$(object_store_env_file)" SPEC_USER="$TALLY_OBJECTS_USER"
      SPEC_CONFIG=("$(object_store_env_file)" "$HOME_DIR/bin/versitygw")
      ;;
    object-store-keys)
      # The store's key broker (scripts/install/object-store-keys.mjs, docs/adr/0045): the root key
      # from the store's env file, the rest on its command line.
      mapfile -t SPEC_CMD < <(object_store_keys_env)
      SPEC_CMD=(env "${SPEC_CMD[@]}" "$NODE_BIN" scripts/install/object-store-keys.mjs)
      SPEC_CWD="$TALLY_REPO" SPEC_ENV_FILE="$(object_store_env_file)" SPEC_USER="$TALLY_OBJECTS_USER"
      SPEC_CONFIG=("$(object_store_env_file)" "$TALLY_REPO/scripts/install/object-store-keys.mjs")
      ;;
    caddy)
      # Started as root only to hand Caddy's user the one capability it needs (ports 443/80).
      SPEC_CMD=(setpriv --reuid="$TALLY_CADDY_USER" --regid="$TALLY_CADDY_USER" --init-groups --inh-caps=+net_bind_service
        --ambient-caps=+net_bind_service -- env XDG_CONFIG_HOME="$HOME_DIR/caddy/config" XDG_DATA_HOME="$HOME_DIR/caddy/data"
        "$(command -v caddy || echo /usr/bin/caddy)" run --adapter caddyfile
        --config "$HOME_DIR/caddy/Caddyfile")
      SPEC_USER=root SPEC_CONFIG=("$HOME_DIR/caddy/Caddyfile")
      ;;
    turn)
      # coturn, TURN over TLS (scripts/install/turn.sh); SIGUSR2 makes it re-read its certificate.
      SPEC_CMD=("$(command -v turnserver || echo /usr/bin/turnserver)" -c "$HOME_DIR/turn/turnserver.conf")
      SPEC_USER="$TALLY_TURN_USER" SPEC_CONFIG=("$HOME_DIR/turn/turnserver.conf")
      if [[ -n "$(turn_capabilities)" ]]; then
        # Port 443 (--turn-address): started as root only to hand coturn's user that one capability.
        SPEC_CMD=(setpriv --reuid="$TALLY_TURN_USER" --regid="$TALLY_TURN_USER" --init-groups --inh-caps=+net_bind_service
          --ambient-caps=+net_bind_service -- "${SPEC_CMD[@]}")
        SPEC_USER=root
      fi
      ;;
    turn-cert)
      # As root: it reads Caddy's storage and writes coturn's copy of the certificate. Root runs
      # the copy in DIR/bin (root's), not the checkout's.
      SPEC_CMD=(bash "$HOME_DIR/bin/tally-turn-cert" "$HOME_DIR" "${TURN_HOST:-$DOMAIN}" "$TALLY_TURN_USER" "$TURN_CERT_CHECK_S")
      SPEC_USER=root SPEC_CONFIG=("$HOME_DIR/bin/tally-turn-cert")
      ;;
    *) die "unknown service: $1" ;;
  esac
}

# service_fingerprint NAME: changes when the service's command or config changes.
service_fingerprint() {
  service_spec "$1"
  {
    printf '%s\n' "$SERVICE_MODE" "$SPEC_USER" "${SPEC_CMD[@]}"
    if [[ "$SERVICE_MODE" == systemd ]]; then render_unit "$1"; fi
    local file
    for file in "${SPEC_CONFIG[@]}"; do cat "$file" 2>/dev/null || true; done
  } | sha
}

log_file() { printf '%s/log/%s.log' "$HOME_DIR" "$1"; }

# ---------------------------------------------------------------- background processes

# supervisor_pid NAME -> the pid of this home's supervisor for NAME, if it is alive.
supervisor_pid() {
  local pid cmdline
  pid="$(cat "$HOME_DIR/run/$1.pid" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" || true)"
  [[ "$cmdline" == *"supervise.sh $1 $HOME_DIR/run "* ]] || return 1
  [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" != Z* ]] || return 1
  printf '%s' "$pid"
}

# group_alive SID -> 0 while any process is left in the session (the supervisor runs in its
# own session, so its pid is the session id of what it started). Zombies do not count: where
# PID 1 is not a real init they linger until it reaps them.
group_alive() {
  # shellcheck disable=SC2009 # ps, not pgrep: the process states are needed
  [[ -n "$(ps -o stat= -g "$1" 2>/dev/null | grep -v '^Z' || true)" ]]
}

bg_start() {
  local name="$1" log pid
  log="$(log_file "$name")"
  service_spec "$name"
  if dry; then
    log "    would start $name: ${SPEC_CMD[*]} (as $SPEC_USER, log $log)"
    return 0
  fi
  touch "$log"
  chmod 640 "$log"
  setsid -f env -i PATH="$TALLY_SERVICE_PATH" HOME="$HOME_DIR" LANG=C.UTF-8 \
    bash "$TALLY_INSTALL_LIB/supervise.sh" "$name" "$HOME_DIR/run" "$SPEC_STOP_SIGNAL" "$SPEC_USER" \
    "$SPEC_CWD" "$SPEC_ENV_FILE" -- "${SPEC_CMD[@]}" </dev/null >>"$log" 2>&1 9>&-
  wait_until 10 "$name supervisor" supervisor_pid "$name" >/dev/null || service_fail "$name"
  pid="$(supervisor_pid "$name")"
  log "    started $name (supervisor pid $pid, log $log)"
}

bg_stop() {
  local name="$1" pid pgid="" deadline
  service_spec "$name"
  if pid="$(supervisor_pid "$name")"; then
    pgid="$pid"
  else
    # No supervisor: anything left of its process group (e.g. it was killed)?
    pgid="$(cat "$HOME_DIR/run/$name.pid" 2>/dev/null || true)"
    if ! [[ "$pgid" =~ ^[0-9]+$ ]] || ! group_alive "$pgid"; then
      dry || rm -f "$HOME_DIR/run/$name.pid" "$HOME_DIR/run/$name.child.pid"
      return 0
    fi
    pid=""
  fi
  if dry; then
    log "    would stop $name (process group $pgid)"
    return 0
  fi
  log "    stopping $name (pid ${pid:-gone}, signal $SPEC_STOP_SIGNAL to the service) ..."
  if [[ -n "$pid" ]]; then kill -TERM "$pid" 2>/dev/null || true; else kill -TERM -- "-$pgid" 2>/dev/null || true; fi
  deadline=$((SECONDS + SPEC_STOP_TIMEOUT))
  while group_alive "$pgid" && ((SECONDS < deadline)); do sleep 0.2; done
  if group_alive "$pgid"; then
    warn "$name did not exit within ${SPEC_STOP_TIMEOUT}s; killing it"
    kill -KILL -- "-$pgid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$HOME_DIR/run/$name.pid" "$HOME_DIR/run/$name.child.pid"
  log "    $name: stopped"
}

# ---------------------------------------------------------------- systemd units

# render_unit NAME -> the unit text from deploy/systemd/tally-NAME.service.
render_unit() {
  local template="$TALLY_REPO/deploy/systemd/tally-$1.service" text key recordings hls protect_home=yes dir
  [[ -f "$template" ]] || die "missing template $template"
  text="$(<"$template")"
  recordings="$(sed -n 's/^TALLY_RECORDINGS_DIR=//p' "$HOME_DIR/tally.env" 2>/dev/null | tail -n1)"
  hls="$(sed -n 's/^TALLY_HLS_DIR=//p' "$HOME_DIR/tally.env" 2>/dev/null | tail -n1)"
  # ProtectHome=yes hides /home, /root and /run/user; a checkout or data directory there stays
  # visible (read-only unless listed in ReadWritePaths=).
  for dir in "$TALLY_REPO" "$HOME_DIR" "${recordings:-$HOME_DIR}" "${hls:-$HOME_DIR}"; do
    [[ "$dir/" != /home/* && "$dir/" != /root/* && "$dir/" != /run/user/* ]] || protect_home=read-only
  done
  declare -A values=(
    [TALLY_HOME]="$HOME_DIR" [TALLY_USER]="$TALLY_USER" [TALLY_REPO]="$TALLY_REPO"
    [MEDIA_USER]="${AGENT_USER:-$TALLY_MEDIA_USER}" [LIVEKIT_USER]="$TALLY_LIVEKIT_USER"
    [PG_USER]="$TALLY_PG_USER" [REDIS_USER]="$TALLY_REDIS_USER" [CADDY_USER]="$TALLY_CADDY_USER"
    [AGENT_ENV]="$(agent_env_file)" [RECORDINGS_DIR]="${recordings:-$HOME_DIR/recordings}"
    [HLS_DIR]="${hls:-$HOME_DIR/hls}" [PROTECT_HOME]="$protect_home" [UMASK]="$TALLY_SHARED_UMASK"
    [NODE_BIN]="$NODE_BIN" [PG_BIN]="$PG_BIN" [PG_PORT]="${PORT[pg]:-}"
    [PG_UNIT]="$([[ "${DATABASE_MODE:-local}" == external ]] || echo 'tally-postgres.service ')"
    [REDIS_SERVER]="$(command -v redis-server || echo /usr/bin/redis-server)"
    [CADDY]="$(command -v caddy || echo /usr/bin/caddy)"
    [TURN_USER]="$TALLY_TURN_USER" [TURNSERVER]="$(command -v turnserver || echo /usr/bin/turnserver)"
    [TURN_CERT_ARGS]="$HOME_DIR ${TURN_HOST:-${DOMAIN:-}} $TALLY_TURN_USER ${TURN_CERT_CHECK_S:-600}" [TURN_CAPS]="$(turn_capabilities)"
    [OBJECTS_USER]="$TALLY_OBJECTS_USER" [OBJECT_STORE_ENV]="$(object_store_env_file)"
    [OBJECT_STORE_KEYS_ENV]="$(object_store_keys_env | paste -sd' ')"
    [OBJECT_STORE_KEYS_DIR]="$(dirname "$(object_store_keys_socket)")"
    [OBJECT_STORE_ARGS]="$([[ "$OBJECT_STORE" != bundled ]] || object_store_listen_args | paste -sd' ') --admin-port 127.0.0.1:${PORT[object-store-admin]:-}"
  )
  for key in "${!values[@]}"; do text="${text//@"$key"@/${values[$key]}}"; done
  if [[ "$text" =~ @[A-Z_]+@ ]]; then die "unit template $template: unknown placeholder ${BASH_REMATCH[0]}"; fi
  printf '%s\n' "$text"
}

sd_start() {
  local name="$1" unit="tally-$1.service"
  write_file "$(unit_file "$name")" 644 root < <(render_unit "$name")
  run systemctl daemon-reload
  run systemctl enable --quiet "$unit"
  run systemctl restart "$unit"
  log "    started $unit (logs: journalctl -u $unit)"
}

sd_stop() {
  local unit="tally-$1.service"
  systemctl is-active --quiet "$unit" 2>/dev/null || return 0
  log "    stopping $unit ..."
  run systemctl stop "$unit"
}

# ---------------------------------------------------------------- dispatch

service_running() {
  case "$(recorded_mode)" in
    systemd) systemctl is-active --quiet "tally-$1.service" 2>/dev/null ;;
    background) supervisor_pid "$1" >/dev/null ;;
    *) return 1 ;;
  esac
}

# service_start NAME: starts NAME, or restarts it when its fingerprint changed (always for
# agent, api and worker); leaves an unchanged running service alone.
service_start() {
  local name="$1" fingerprint stamp="$HOME_DIR/run/$1.fingerprint"
  fingerprint="$(service_fingerprint "$name")" # (runs in a subshell: SPEC_* are set below)
  service_spec "$name"
  if service_running "$name"; then
    if [[ "$SPEC_ALWAYS_RESTART" == 0 && "$(cat "$stamp" 2>/dev/null)" == "$fingerprint" ]]; then
      log "    $name: running, configuration unchanged"
      return 0
    fi
    log "    $name: restarting"
    service_stop "$name"
  fi
  if [[ "$SERVICE_MODE" == systemd ]]; then sd_start "$name"; else bg_start "$name"; fi
  # The unit file is part of the fingerprint: recompute now that it is written.
  dry || service_fingerprint "$name" >"$stamp"
}

service_stop() {
  if [[ "$SERVICE_MODE" == systemd ]]; then sd_stop "$1"; else bg_stop "$1"; fi
}

stop_all_services() {
  local i
  for ((i = ${#TALLY_SERVICES[@]} - 1; i >= 0; i--)); do
    service_stop "${TALLY_SERVICES[$i]}"
  done
}

# service_fail NAME: prints the end of NAME's log and exits non-zero.
service_fail() {
  warn "$1 failed to start"
  if [[ "$SERVICE_MODE" == systemd ]]; then
    journalctl -u "tally-$1.service" -n 40 --no-pager >&2 || true
  else
    tail_log "$(log_file "$1")"
  fi
  die "$1 is not running; see the log above"
}

livekit_ready() {
  [[ "$(http_status "http://127.0.0.1:${PORT[livekit]}/")" == 200 ]]
}

WORKER_LOG_OFFSET=0
# worker_ready: the worker has no port; it is up once it logged so since this start.
worker_ready() {
  if [[ "$SERVICE_MODE" == systemd ]]; then
    systemctl is-active --quiet tally-worker.service
  else
    [[ "$(tail -c "+$((WORKER_LOG_OFFSET + 1))" "$(log_file worker)" 2>/dev/null)" == *'tally worker running'* ]]
  fi
}

start_app_services() {
  service_start livekit
  if ! dry; then
    wait_until 30 livekit-server livekit_ready || service_fail livekit
    log "    livekit-server: answering on 127.0.0.1:${PORT[livekit]}"
  fi
  # The agent heartbeats this node's budget (admission places work only on nodes it reports) and
  # runs egress on demand, with its admission derived from that budget.
  ensure_egress_upload_dir
  service_start agent
  service_start api
  WORKER_LOG_OFFSET="$(stat -c %s "$(log_file worker)" 2>/dev/null || echo 0)"
  service_start worker
}

# stop_home: `./install.sh --stop`: stops exactly what this home started, waiting for exit.
stop_home() {
  if [[ ! -d "$HOME_DIR" ]]; then
    log "nothing to stop: $HOME_DIR does not exist"
    return 0
  fi
  dry || [[ "$(id -u)" -eq 0 ]] || die "--stop must run as root"
  SERVICE_MODE="$(recorded_mode)"
  if [[ -z "$SERVICE_MODE" ]]; then
    log "nothing was started from $HOME_DIR (no $HOME_DIR/run/mode)"
    return 0
  fi
  log "stopping the services of $HOME_DIR ($SERVICE_MODE)"
  if [[ "$SERVICE_MODE" == systemd ]]; then check_units_belong_here; fi
  stop_all_services
  log "stopped. Start again with: ./install.sh --home $HOME_DIR"
}
