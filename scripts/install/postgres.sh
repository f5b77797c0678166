#!/usr/bin/env bash
# Tally's own PostgreSQL cluster in DIR/postgres/data (socket in DIR/postgres), owned by its own
# system user (initdb refuses root), listening on 127.0.0.1 (and on the --cluster-bind address for
# the addresses in --control-nodes, scripts/install/control.sh). Source it; do not execute it.
#
# Authentication (DIR/postgres/data/pg_hba.conf, rewritten on every run): the superuser `postgres`
# only over the socket and only for the cluster's system user (peer, mapped in pg_ident.conf; this
# script uses it); the role `tally`, which owns the database `tally`, only over TCP with its
# password (scram-sha-256); nothing else.

PG_DATA_DIR=""
DATABASE_MODE=local     # local: the cluster under DIR; external: --database-url-file / $TALLY_DATABASE_URL
EXTERNAL_DATABASE_URL=""

# resolve_database: an external PostgreSQL given now (file or environment) or remembered in
# tally.env, else the local cluster. An external one must answer before tally.env is written.
resolve_database() {
  local given=""
  if [[ -n "$DATABASE_URL_FILE_ARG" ]]; then
    given="$(tr -d '\r\n' <"$DATABASE_URL_FILE_ARG" 2>/dev/null || true)"
    [[ -n "$given" ]] || dry || die "--database-url-file $DATABASE_URL_FILE_ARG is empty"
  elif [[ -n "${TALLY_DATABASE_URL:-}" ]]; then
    given="$TALLY_DATABASE_URL"
  elif [[ "${OLD[TALLY_DATABASE]:-local}" == external ]]; then
    given="${OLD[DATABASE_URL]:-}"
    [[ -n "$given" ]] || die "TALLY_DATABASE=external in $ENV_FILE but no DATABASE_URL; put it back or give --database-url-file"
  fi
  if [[ -z "$given" ]]; then
    log "    postgres: the cluster in $HOME_DIR/postgres (port ${PORT[pg]})"
    return 0
  fi
  [[ "$given" =~ ^postgres(ql)?://[^[:space:][:cntrl:]\'\"\`\$]+$ ]] ||
    die "the external database URL must be postgresql://USER:PASSWORD@HOST:PORT/DB without spaces, quotes or control characters (got $(redact_database_url "$given"))"
  DATABASE_MODE=external EXTERNAL_DATABASE_URL="$given"
  if dry; then
    log "    postgres: external, $(redact_database_url "$given") (would check that it answers)"
    return 0
  fi
  local answer
  answer="$(database_probe "$given" 2>&1)" ||
    die "the external PostgreSQL $(redact_database_url "$given") does not answer: ${answer:-no reply}; tally.env was left as it was"
  log "    postgres: external, $(redact_database_url "$given") ($answer)"
}

# redact_database_url URL: the URL without its password, for logs and errors.
redact_database_url() {
  sed -E 's#^([a-z]+://[^:/@]*):[^@]*@#\1:***@#' <<<"$1"
}

# database_probe URL: connects with the repo's PostgreSQL driver (the URL stays out of any command
# line) and prints the server's version; fails with the driver's message.
database_probe() {
  (cd "$TALLY_REPO" && TALLY_PROBE_DATABASE_URL="$1" timeout 20 "$NODE_BIN" -e '
    const { Client } = require("pg");
    const client = new Client({ connectionString: process.env.TALLY_PROBE_DATABASE_URL, connectionTimeoutMillis: 10000 });
    client.connect()
      .then(() => client.query("SHOW server_version"))
      .then((r) => { console.log(`PostgreSQL ${r.rows[0].server_version}`); return client.end(); })
      .catch((e) => { console.error(e.message); process.exit(1); });')
}

# database_url: what the API, the worker and the migrations connect to.
database_url() {
  if [[ "$DATABASE_MODE" == external ]]; then
    printf '%s' "$EXTERNAL_DATABASE_URL"
  else
    printf 'postgresql://tally:%s@127.0.0.1:%s/tally' "$DB_PASSWORD" "${PORT[pg]}"
  fi
}

# database_env_lines: tally.env's lines for the database.
database_env_lines() {
  printf 'DATABASE_URL=%s\n' "$(database_url)"
  if [[ "$DATABASE_MODE" == external ]]; then
    printf '# An external PostgreSQL (--database-url-file): install.sh runs no cluster of its own.\nTALLY_DATABASE=external\n'
  fi
}

as_pg_user() { as_user "$TALLY_PG_USER" "$@"; }

postgres_init_cluster() {
  PG_DATA_DIR="$HOME_DIR/postgres/data"
  if [[ -f "$PG_DATA_DIR/PG_VERSION" ]]; then
    log "    cluster: $PG_DATA_DIR (PostgreSQL $(cat "$PG_DATA_DIR/PG_VERSION"), kept)"
    return 0
  fi
  if dry; then
    log "    would run initdb -D $PG_DATA_DIR (as $TALLY_PG_USER)"
    return 0
  fi
  log "    initdb -D $PG_DATA_DIR (as $TALLY_PG_USER)"
  as_pg_user "$PG_BIN/initdb" -D "$PG_DATA_DIR" -U postgres -E UTF8 --locale=C \
    --auth-local=peer --auth-host=scram-sha-256 >/dev/null
}

pg_hba_content() {
  cat <<EOF
# Written by Tally's install.sh (re-running it rewrites this file).
# TYPE  DATABASE  USER      ADDRESS        METHOD
local   all       postgres                 peer map=tally
host    tally     tally     127.0.0.1/32   scram-sha-256
host    tally     tally     ::1/128        scram-sha-256
EOF
  pg_hba_control_lines
}

pg_ident_content() {
  cat <<EOF
# Written by Tally's install.sh: the cluster's system user is its superuser.
# MAPNAME  SYSTEM-USERNAME  PG-USERNAME
tally      $TALLY_PG_USER  postgres
EOF
}

# postgres_write_auth: pg_hba.conf and pg_ident.conf. A running cluster reloads them after
# postgres_setup_database (one from a previous layout trusted local connections until then).
PG_AUTH_CHANGED=0
postgres_write_auth() {
  local before after
  before="$( (cat "$PG_DATA_DIR/pg_hba.conf" "$PG_DATA_DIR/pg_ident.conf" 2>/dev/null || true) | sha)"
  write_file "$PG_DATA_DIR/pg_hba.conf" 600 "$TALLY_PG_USER" < <(pg_hba_content)
  write_file "$PG_DATA_DIR/pg_ident.conf" 600 "$TALLY_PG_USER" < <(pg_ident_content)
  after="$( (cat "$PG_DATA_DIR/pg_hba.conf" "$PG_DATA_DIR/pg_ident.conf" 2>/dev/null || true) | sha)"
  [[ "$before" == "$after" ]] || PG_AUTH_CHANGED=1
}

# As the cluster's user: a probe is a connection attempt, which would log a failed peer
# authentication for any other user.
postgres_ready() {
  as_pg_user "$PG_BIN/pg_isready" -q -h "$HOME_DIR/postgres" -p "${PORT[pg]}" -U postgres -d postgres
}

# postgres_setup_database: role `tally` with the password from tally.env (set on every run,
# so a restored tally.env and the cluster always agree) and the database `tally` it owns.
postgres_setup_database() {
  if dry; then
    log "    would ensure role tally (password from tally.env) and database tally"
    return 0
  fi
  as_pg_user "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOME_DIR/postgres" -p "${PORT[pg]}" \
    -U postgres -d postgres >/dev/null <<SQL
SELECT 'CREATE ROLE tally LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tally') \gexec
ALTER ROLE tally WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '$DB_PASSWORD';
SELECT 'CREATE DATABASE tally OWNER tally' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'tally') \gexec
SQL
  log "    role tally and database tally: ready"
}

start_postgres() {
  if [[ "$DATABASE_MODE" == external ]]; then
    log "    external PostgreSQL: no cluster here"
    if service_running postgres; then
      log "    stopping the local cluster (its data stays in $HOME_DIR/postgres)"
      service_stop postgres
      [[ "$SERVICE_MODE" != systemd ]] || run systemctl disable --quiet tally-postgres.service
    fi
    return 0
  fi
  postgres_init_cluster
  PG_DATA_DIR="$HOME_DIR/postgres/data"
  dry || postgres_write_auth
  service_start postgres
  if ! dry; then
    wait_until 60 postgres postgres_ready || service_fail postgres
    log "    postgres: accepting connections on 127.0.0.1:${PORT[pg]}"
  fi
  postgres_setup_database
  if ((PG_AUTH_CHANGED)); then
    as_pg_user "$PG_BIN/psql" -X -q -h "$HOME_DIR/postgres" -p "${PORT[pg]}" -U postgres -d postgres -c 'SELECT pg_reload_conf()' >/dev/null
    log "    pg_hba.conf: role tally by password (scram-sha-256) over TCP only, the superuser only as $TALLY_PG_USER (reloaded)"
  fi
  postgres_end_removed_sessions
}

migrate_db() {
  log "    node dist/migrate.js deploy (npm run db:migrate, built)"
  if dry; then
    log "    would run: DATABASE_URL=$(redact_database_url "$(database_url)") node dist/migrate.js deploy"
    return 0
  fi
  (cd "$TALLY_REPO" && env DATABASE_URL="$(database_url)" \
    CHECKPOINT_DISABLE=1 "$NODE_BIN" dist/migrate.js deploy) | sed 's/^/[install]     /'
}
