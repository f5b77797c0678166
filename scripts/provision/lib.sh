#!/usr/bin/env bash
# Shared helpers for Tally's provisioning scripts. Source it; do not execute it.
#
# Environment (all optional):
#   TALLY_TOOLS_DIR   where built tools and the Go caches live
#                     (default: ${XDG_CACHE_HOME:-$HOME/.cache}/tally/tools)
#   TALLY_FORCE_REBUILD=1   rebuild Go tools even when their stamp matches
# Layout under TALLY_TOOLS_DIR:
#   bin/            livekit-server, lk
#   runtimes/       the pinned Node.js and Go (runtimes.sh; docs/adr/0024-runtimes-from-registries.md)
#   stamps/         <name>.stamp: version (+ recipe hash) of what is in bin/
#   go/path         GOPATH
#   go/cache        GOCACHE (warm cache => rebuilds take seconds)
#   go/mod          GOMODCACHE
#   src/            scratch copies of the wrapper modules used for builds

if [[ -n "${TALLY_PROVISION_LIB_LOADED:-}" ]]; then
  return 0
fi
TALLY_PROVISION_LIB_LOADED=1

# The runtimes (scripts/provision/runtimes.sh fetches and verifies them). Go: the go.mod files of
# livekit-server v1.13.5 and livekit-cli v2.18.2 declare `go 1.26`.
TALLY_NODE_VERSION=24.21.0
TALLY_NPM_VERSION=11.19.1
TALLY_GO_VERSION=1.26.8
case "$(uname -m)" in
  x86_64 | amd64) TALLY_NODE_ARCH=x64 TALLY_GO_ARCH=amd64 ;;
  aarch64 | arm64) TALLY_NODE_ARCH=arm64 TALLY_GO_ARCH=arm64 ;;
  *) TALLY_NODE_ARCH="unsupported-$(uname -m)" TALLY_GO_ARCH="unsupported-$(uname -m)" ;;
esac

TALLY_PROVISION_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TALLY_REPO_ROOT="$(cd "$TALLY_PROVISION_DIR/../.." && pwd)"
TALLY_TOOLS_DIR="${TALLY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tally/tools}"
TALLY_BIN_DIR="$TALLY_TOOLS_DIR/bin"
TALLY_STAMP_DIR="$TALLY_TOOLS_DIR/stamps"
TALLY_NODE_DIR="$TALLY_TOOLS_DIR/runtimes/node-$TALLY_NODE_VERSION-linux-$TALLY_NODE_ARCH"
TALLY_GO_DIR="$TALLY_TOOLS_DIR/runtimes/go-$TALLY_GO_VERSION-linux-$TALLY_GO_ARCH"
export TALLY_TOOLS_DIR TALLY_BIN_DIR TALLY_PROVISION_DIR TALLY_REPO_ROOT TALLY_NODE_DIR TALLY_GO_DIR

log() { printf '[provision] %s\n' "$*"; }
warn() { printf '[provision] WARNING: %s\n' "$*" >&2; }
die() {
  printf '[provision] ERROR: %s\n' "$*" >&2
  exit 1
}

# Prefix for commands that need root (apt-get). Empty when already root.
as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

# pkg_installed PKG -> 0 when dpkg reports the package as fully installed.
pkg_installed() {
  local status
  status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]]
}

# apt_install_missing PKG... : installs only the packages that are not installed yet;
# runs `apt-get update` only when something has to be installed.
apt_install_missing() {
  command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: these scripts need a Debian/Ubuntu host"
  local missing=() pkg
  for pkg in "$@"; do
    if pkg_installed "$pkg"; then
      log "$pkg: present"
    else
      log "$pkg: missing"
      missing+=("$pkg")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    return 0
  fi
  log "apt-get update ..."
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  log "apt-get install ${missing[*]} ..."
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
  for pkg in "${missing[@]}"; do
    pkg_installed "$pkg" || die "apt package $pkg is still not installed"
  done
  log "installed: ${missing[*]}"
}

# version_ge A B -> 0 when dotted version A >= B (e.g. 1.26.8 >= 1.24).
version_ge() {
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]
}

# use_tools_node: the pinned Node (and its npm) first on PATH, fetched when missing.
use_tools_node() {
  [[ -x "$TALLY_NODE_DIR/bin/node" ]] || bash "$TALLY_PROVISION_DIR/runtimes.sh" node
  export PATH="$TALLY_NODE_DIR/bin:$PATH"
}

# ensure_go: the pinned Go first on PATH (fetched when missing), with GOPATH/GOCACHE/GOMODCACHE
# in TALLY_TOOLS_DIR so builds are cached.
ensure_go() {
  [[ -x "$TALLY_GO_DIR/bin/go" ]] || bash "$TALLY_PROVISION_DIR/runtimes.sh" go
  export PATH="$TALLY_GO_DIR/bin:$PATH"
  export GOROOT="$TALLY_GO_DIR"
  export GOPATH="$TALLY_TOOLS_DIR/go/path"
  export GOCACHE="$TALLY_TOOLS_DIR/go/cache"
  export GOMODCACHE="$TALLY_TOOLS_DIR/go/mod"
  # Never download another toolchain (no internet besides the module proxy).
  export GOTOOLCHAIN=local
  # Module proxy here is a filtered mirror and sum.golang.org lacks some LiveKit versions.
  export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/livekit,github.com/go-gst"
  # -modcacherw: the module cache stays deletable with plain rm -rf.
  export GOFLAGS="-buildvcs=false -modcacherw"
  export CGO_ENABLED=1
  mkdir -p "$GOPATH" "$GOCACHE" "$GOMODCACHE"
  log "go: $(go env GOVERSION) at $(command -v go)"
}

# Stamp helpers: a stamp records what was built; a build is skipped when the binary exists
# and its stamp equals the wanted value.
stamp_file() { printf '%s/%s.stamp\n' "$TALLY_STAMP_DIR" "$1"; }

stamp_matches() { # NAME WANTED
  local f
  f="$(stamp_file "$1")"
  [[ "${TALLY_FORCE_REBUILD:-0}" != "1" && -x "$TALLY_BIN_DIR/$1" && -f "$f" && "$(cat "$f")" == "$2" ]]
}

stamp_write() { # NAME VALUE
  mkdir -p "$TALLY_STAMP_DIR"
  printf '%s\n' "$2" >"$(stamp_file "$1").tmp"
  mv -f "$(stamp_file "$1").tmp" "$(stamp_file "$1")"
}

# ensure_apt_packages LABEL SKIP PKG...: one line when every package is there (or SKIP is 1, for
# --skip-apt); apt only for what is missing.
ensure_apt_packages() {
  local label="$1" skip="$2" missing=() pkg
  shift 2
  if [[ "$skip" == 1 ]]; then
    log "$label system packages: skipped (--skip-apt)"
    return 0
  fi
  for pkg in "$@"; do
    pkg_installed "$pkg" || missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "$label system packages: present ($#)"
    return 0
  fi
  apt_install_missing "${missing[@]}"
}

# hash_files FILE... -> short sha256 over the files' contents (for stamps of build recipes).
hash_files() {
  cat "$@" | sha256sum | cut -c1-16
}

# fmt_duration SECONDS -> "2m05s"
fmt_duration() {
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}
