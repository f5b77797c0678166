#!/usr/bin/env bash
# Tally's own PostgreSQL cluster in DIR/postgres/data (socket in DIR/postgres), owned by the
# service user (initdb refuses root), listening on 127.0.0.1 only. Source it; do not execute it.
#
# Authentication: the socket directory is private to the service user, so local connections
# (superuser `postgres`, used by this script only) are trusted; TCP needs the password of the
# role `tally` (scram-sha-256), which owns the database `tally`.

PG_DATA_DIR=""

as_service_user() {
  (cd / && setpriv --reuid="$TALLY_USER" --regid="$TALLY_USER" --init-groups -- "$@")
}

postgres_init_cluster() {
  PG_DATA_DIR="$HOME_DIR/postgres/data"
  if [[ -f "$PG_DATA_DIR/PG_VERSION" ]]; then
    log "    cluster: $PG_DATA_DIR (PostgreSQL $(cat "$PG_DATA_DIR/PG_VERSION"), kept)"
    return 0
  fi
  if dry; then
    log "    would run initdb -D $PG_DATA_DIR (as $TALLY_USER)"
    return 0
  fi
  log "    initdb -D $PG_DATA_DIR (as $TALLY_USER)"
  as_service_user "$PG_BIN/initdb" -D "$PG_DATA_DIR" -U postgres -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
}

postgres_ready() {
  "$PG_BIN/pg_isready" -q -h "$HOME_DIR/postgres" -p "${PORT[pg]}" -U postgres -d postgres
}

# postgres_setup_database: role `tally` with the password from tally.env (set on every run,
# so a restored tally.env and the cluster always agree) and the database `tally` it owns.
postgres_setup_database() {
  if dry; then
    log "    would ensure role tally (password from tally.env) and database tally"
    return 0
  fi
  as_service_user "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOME_DIR/postgres" -p "${PORT[pg]}" \
    -U postgres -d postgres >/dev/null <<SQL
SELECT 'CREATE ROLE tally LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tally') \gexec
ALTER ROLE tally WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '$DB_PASSWORD';
SELECT 'CREATE DATABASE tally OWNER tally' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'tally') \gexec
SQL
  log "    role tally and database tally: ready"
}

start_postgres() {
  postgres_init_cluster
  service_start postgres
  if ! dry; then
    wait_until 60 postgres postgres_ready || service_fail postgres
    log "    postgres: accepting connections on 127.0.0.1:${PORT[pg]}"
  fi
  postgres_setup_database
}

migrate_db() {
  log "    node dist/migrate.js deploy (npm run db:migrate, built)"
  if dry; then
    log "    would run: DATABASE_URL=postgresql://tally:***@127.0.0.1:${PORT[pg]}/tally node dist/migrate.js deploy"
    return 0
  fi
  (cd "$TALLY_REPO" && env DATABASE_URL="postgresql://tally:$DB_PASSWORD@127.0.0.1:${PORT[pg]}/tally" \
    CHECKPOINT_DISABLE=1 "$NODE_BIN" dist/migrate.js deploy) | sed 's/^/[install]     /'
}
