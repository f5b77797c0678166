#!/usr/bin/env bash
# Host preparation: preflight checks, the runtimes (Node.js, Go), packages and binaries
# (scripts/provision.sh), npm dependencies, the service users, kernel UDP buffers. Source it; do
# not execute it.

SYSCTL_CONF="${TALLY_SYSCTL_CONF:-/etc/sysctl.d/60-tally.conf}"
UDP_BUFFER_BYTES=16777216

preflight() {
  if ! dry && [[ "$(id -u)" -ne 0 ]]; then
    die "run as root (it installs packages, creates the service users and starts services); --dry-run works without"
  fi
  command -v dpkg-query >/dev/null 2>&1 || die "this installer supports Debian 12 / Ubuntu hosts only"
  log "    repository $TALLY_REPO, home $HOME_DIR"
}

# ensure_runtimes [node|go]...: the pinned Node.js and Go (default: both; scripts/provision/runtimes.sh:
# from the npm registry and the Go module proxy, or copies from the origin on --join, hash-checked,
# under the tools directory), whatever the host has. The installer runs node and npm from there;
# the services run the copy install_node_binary puts in DIR/bin (the service users cannot read
# root's tools directory).
ensure_runtimes() {
  local which=("$@")
  [[ ${#which[@]} -gt 0 ]] || which=(node go)
  # shellcheck disable=SC2016 # expanded by the inner shell
  {
    read -r TOOLS_NODE_DIR
    read -r TOOLS_GO_DIR
    read -r NODE_VERSION
    read -r GO_VERSION
  } < <(bash -c 'source "$1/scripts/provision/lib.sh" && printf "%s\n" "$TALLY_NODE_DIR" "$TALLY_GO_DIR" "$TALLY_NODE_VERSION" "$TALLY_GO_VERSION"' _ "$TALLY_REPO")
  NODE_BIN="$HOME_DIR/bin/node"
  if dry; then
    log "    would run: bash $TALLY_REPO/scripts/provision/runtimes.sh ${which[*]} (Node.js $NODE_VERSION to $TOOLS_NODE_DIR, Go $GO_VERSION to $TOOLS_GO_DIR)"
  else
    bash "$TALLY_REPO/scripts/provision/runtimes.sh" "${which[@]}" 2>&1 | sed 's/^/[install]     /' ||
      die "the runtimes could not be installed (above: what failed)"
  fi
  export PATH="$TOOLS_NODE_DIR/bin:$PATH"
}

# runtimes_summary: which runtimes this install uses and where they came from (each runtime's
# .source, written by runtimes.sh).
runtimes_summary() {
  local go="Go $GO_VERSION: not installed (nothing was built here)"
  if [[ -x "$TOOLS_GO_DIR/bin/go" ]]; then go="Go $GO_VERSION ($(cat "$TOOLS_GO_DIR/.source" 2>/dev/null || echo 'pinned')) at $TOOLS_GO_DIR"; fi
  printf 'Node.js %s (%s) at %s, run from %s\n' "$NODE_VERSION" "$(cat "$TOOLS_NODE_DIR/.source" 2>/dev/null || echo pinned)" "$TOOLS_NODE_DIR" "$NODE_BIN"
  printf '%s\n' "$go"
}

provision_host() {
  log "    bash scripts/provision.sh --platform (apt packages; livekit-server, egress and ingress builds are skipped when current)"
  if dry; then
    log "    would run: bash $TALLY_REPO/scripts/provision.sh --platform"
    return 0
  fi
  bash "$TALLY_REPO/scripts/provision.sh" --platform | sed 's/^/[install]     /'
}

# install_node_deps: `npm install` (the lock cannot list other platforms' optional binaries the
# registry mirror lacks, so `npm ci` refuses it) when node_modules is missing or older than package-lock.json,
# then the Prisma client (always: it is quick and follows the schema) and the build: the services
# as JavaScript bundles in dist/ and the dashboard (served at /dashboard).
install_node_deps() {
  ensure_checkout_node_modules
  log "    bash scripts/db-generate.sh"
  generate_prisma_client
  # The dashboard is built through Nx, whose task cache (~/.nx) restores the build of unchanged
  # sources: a re-run or a change of options does not rebuild it. No Nx daemon, no Nx Cloud.
  log "    npm run build (api, worker, agent and the dashboard, into dist/ and apps/dashboard/dist)"
  run env NX_DAEMON=false NX_NO_CLOUD=true bash -c 'cd "$1" && npm run --silent build >/dev/null' _ "$TALLY_REPO"
  stamp_dashboard
  install_runtime_deps
}

# ensure_checkout_node_modules: `npm install` in the checkout when node_modules is missing or older
# than package-lock.json.
ensure_checkout_node_modules() {
  local marker="$TALLY_REPO/node_modules/.package-lock.json"
  if [[ ! -f "$marker" || "$TALLY_REPO/package-lock.json" -nt "$marker" ]]; then
    log "    node_modules missing or stale: npm install"
    run bash -c 'cd "$1" && npm install --no-audit --no-fund' _ "$TALLY_REPO"
  else
    log "    node_modules: up to date"
  fi
}

# install_runtime_deps: the services run dist/*.js, which resolve their packages from
# dist/node_modules first: the production dependencies only (dist/package.json, written by the
# build), no compiler or test tooling.
install_runtime_deps() {
  log "    npm install --omit=dev in dist/ (production dependencies of the built services)"
  run bash -c 'cd "$1/dist" && npm install --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error' _ "$TALLY_REPO"
}

# ensure_service_users: one system user (with a group of its own) per service; the tally user
# also joins the media user's group, which owns the recordings and live HLS directories.
ensure_service_users() {
  local user
  for user in "$TALLY_USER" "$TALLY_MEDIA_USER" "$TALLY_LIVEKIT_USER" "$TALLY_PG_USER" "$TALLY_REDIS_USER"; do
    ensure_system_user "$user"
  done
  if object_store_bundled_wanted; then ensure_system_user "$TALLY_OBJECTS_USER"; fi
  if ! grep -qxF "$TALLY_MEDIA_USER" <<<"$(id -nG "$TALLY_USER" 2>/dev/null | tr ' ' '\n')"; then
    log "    adding $TALLY_USER to the group $TALLY_MEDIA_USER (reads and tidies recordings, live HLS)"
    run usermod -aG "$TALLY_MEDIA_USER" "$TALLY_USER"
  fi
  dry && return 0
  # The services run the code from the checkout as these users.
  for user in "$TALLY_USER" "$TALLY_MEDIA_USER"; do
    as_user "$user" test -r "$TALLY_REPO/apps/api/src/main.ts" ||
      die "user $user cannot read $TALLY_REPO (a parent directory is private?); put the checkout somewhere like /opt/tally"
  done
}

ensure_system_user() {
  if id -u "$1" >/dev/null 2>&1; then
    log "    user $1: present"
  else
    log "    creating system user $1"
    run useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1"
  fi
}

# tune_kernel: net.core.rmem_max / wmem_max >= 16 MB for WebRTC media (never lowered),
# persisted in /etc/sysctl.d. Skipped with the reason where the kernel does not allow it
# (containers usually mount /proc/sys read-only).
tune_kernel() {
  if [[ "$DO_SYSCTL" == 0 ]]; then
    log "    kernel UDP buffers: skipped (--no-sysctl)"
    return 0
  fi
  local key current error lines=()
  for key in net.core.rmem_max net.core.wmem_max; do
    if ! current="$(sysctl -n "$key" 2>&1)"; then
      log "    kernel UDP buffers: skipped, cannot read $key: $current"
      return 0
    fi
    if ((current >= UDP_BUFFER_BYTES)); then
      log "    $key = $current (>= $UDP_BUFFER_BYTES, kept)"
      lines+=("$key = $current")
      continue
    fi
    if dry; then
      log "    would set $key = $UDP_BUFFER_BYTES (now $current)"
      lines+=("$key = $UDP_BUFFER_BYTES")
      continue
    fi
    if ! error="$(sysctl -q -w "$key=$UDP_BUFFER_BYTES" 2>&1)"; then
      log "    kernel UDP buffers: skipped, the kernel refused $key=$UDP_BUFFER_BYTES (${error:-permission denied}; containers cannot change it - set it on the host)"
      return 0
    fi
    log "    $key = $UDP_BUFFER_BYTES (was $current)"
    lines+=("$key = $UDP_BUFFER_BYTES")
  done
  write_file "$SYSCTL_CONF" 644 root < <(
    echo "# Written by Tally's install.sh: UDP buffers for WebRTC media (livekit-server)."
    printf '%s\n' "${lines[@]}"
  )
}

# generate_prisma_client: the Prisma client of this checkout (scripts/db-generate.sh).
generate_prisma_client() {
  if dry; then
    log "    would run: bash $TALLY_REPO/scripts/db-generate.sh"
    return 0
  fi
  bash "$TALLY_REPO/scripts/db-generate.sh" 2>&1 | sed 's/^/[install]     /'
}
