#!/usr/bin/env bash
# Installs the Debian packages Tally's dev/CI environment needs (idempotent: apt runs only
# when a package is missing).
#   redis-server, postgresql  - throwaway instances for tests (started by the tests, not here)
#   ffmpeg                    - test media generation / RTMP push
#   iproute2                  - `ip netns` for media tests
#   docker.io busybox-static debootstrap - dockerd for the docker worker runtime's tests; local images
#   pkg-config portaudio19-dev libasound2-dev build-essential - cgo deps of `lk` (portaudio_system)
#   caddy                     - the TLS proxy install.sh puts in front with --domain; the installer
#                               tests verify its unit (systemd-analyze) before their --domain install
#   coturn                    - TURN over TLS beside Caddy with --domain (scripts/install/turn.sh)
# Note: on hosts with init scripts/systemd, installing postgresql/redis-server may auto-start
# system services (on this machine /usr/sbin/policy-rc.d prevents it). Nothing relies on them.
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TALLY_APT_PACKAGES=(
  ca-certificates
  build-essential patch # patch: the LiveKit modules built from patched copies
  gcc
  pkg-config
  iproute2
  redis-server
  postgresql
  ffmpeg
  portaudio19-dev
  libasound2-dev
  chromium fonts-liberation # the dashboard's browser tests (playwright-core drives Debian's Chromium)
  iptables libnss3-tools openssl # turn-tls.e2e: a client's firewall, the test CA its Chromium trusts
  docker.io busybox-static debootstrap # the docker worker runtime: a real dockerd, images built with no registry
  caddy                                # install.sh --domain's TLS proxy (scripts/install/tls.sh)
  coturn sqlite3                       # install.sh --domain's TURN over TLS; sqlite3 writes coturn's allowed peers (scripts/install/turn.sh)
)

log "system packages: ${TALLY_APT_PACKAGES[*]}"
apt_install_missing "${TALLY_APT_PACKAGES[@]}"
# Debian's packages start their own caddy.service (ports 80/443) and coturn.service (3478, livekit-server's
# TURN port) where systemd runs: the tests (like install.sh) run their own instances.
if [[ -d /run/systemd/system ]]; then systemctl disable --now caddy.service coturn.service >/dev/null 2>&1 || true; fi

# Sanity checks on what the rest of the project expects to find.
pg_bin="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n1)"
[[ -n "$pg_bin" && -x "$pg_bin/initdb" ]] || die "no /usr/lib/postgresql/*/bin/initdb after installing postgresql"
log "postgres: $pg_bin ($("$pg_bin/postgres" --version))"
command -v redis-server >/dev/null 2>&1 || die "redis-server not on PATH"
log "redis: $(redis-server --version | awk '{print $3}' | sed 's/^v=//')"
command -v ffmpeg >/dev/null 2>&1 || die "ffmpeg not on PATH"
pkg-config --exists portaudio-2.0 || die "pkg-config cannot find portaudio-2.0"
log "system packages: done"
