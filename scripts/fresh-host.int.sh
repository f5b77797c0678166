#!/usr/bin/env bash
# Proves the README's first command on a truly fresh host: a minimal Debian 12 root made with
# debootstrap (no Node, no Go, no LiveKit, no PostgreSQL), the repository copied in (no
# node_modules, no build), then, chrooted into it:
#   ./install.sh --dry-run    lists the runtime steps (Node.js and Go, pinned, from the registries)
#   ./install.sh --offline    installs everything from the package registries and starts Tally
# and checks GET /healthz and that one stream can be created. It prints the time each phase took
# (the script's own phases and the installer's).
#
# Isolation: the install runs in a network namespace of its own (loopback and a veth pair, no
# route out) and in mount and PID namespaces of its own (its services end with it). The registries
# are reached through a proxy on the veth's host end that connects to them and to nothing else
# (scripts/fresh-host/registry-proxy.mjs): apt's mirror (from this host's apt sources), npm's
# registry and the Go module proxy. Services do not use the proxy (install.sh gives them a clean
# environment). No systemd in a chroot: install.sh runs the services as supervised background
# processes, as it does on any host without systemd. Debian's packages are kept from starting
# their own daemons inside the root (policy-rc.d), as in any chroot or container.
#
# Not part of npm test: it downloads ~1.5 GB and builds every LiveKit binary from scratch
# (docs/cluster.md and README give the time measured). Needs root, debootstrap (apt) and ~6 GB
# under TALLY_FRESH_DIR (default /var/tmp).
#
# Usage: bash scripts/fresh-host.int.sh      (TALLY_KEEP_ROOT=1 keeps the root;
#        TALLY_FRESH_ROOT_CACHE=/var/tmp/bookworm-minbase.tar reuses the debootstrap between runs)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"

INT_NAME=fresh-host
# shellcheck source=scripts/int-lib.sh
source scripts/int-lib.sh
[[ "$(id -u)" -eq 0 ]] || fail "must run as root (debootstrap, chroot, namespaces)"

declare -a phase_lines=()
phase_started=0
phase_name=""
phase() { # phase NAME: ends the running phase (recording its duration) and starts NAME
  if [[ -n "$phase_name" ]]; then
    phase_lines+=("$(printf '%6ds  %s' $((SECONDS - phase_started)) "$phase_name")")
    say "phase done in $((SECONDS - phase_started))s: $phase_name"
  fi
  phase_name="$1" phase_started=$SECONDS
  [[ -z "$1" ]] || say "phase: $1"
}
print_phases() {
  phase ""
  say "phases:"
  local line
  for line in "${phase_lines[@]}"; do say "  $line"; done
}

work="$(mktemp -d "${TALLY_FRESH_DIR:-/var/tmp}/tally-fresh-host.XXXXXX")"
root="$work/root"
ns="tally-fresh-$$" host_if="tfresh$$" proxy_pid=""
cleanup() {
  local rc=$?
  if [[ -n "$proxy_pid" ]]; then kill "$proxy_pid" 2>/dev/null || true; fi
  ip link del "$host_if" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  # Mounts made for the chroot live in its own mount namespace; nothing to unmount here.
  if [[ "${TALLY_KEEP_ROOT:-0}" == 1 ]]; then say "kept $work"; else rm -rf "$work"; fi
  if [[ $rc -eq 0 ]]; then say "PASS"; else say "FAILED (exit $rc)"; fi
}
trap cleanup EXIT

# ------------------------------------------------------------------ 1. a minimal Debian 12 root
phase "debootstrap: a minimal Debian 12 root"
command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
# The mirror this host's apt uses (deb822 sources, else the one-line format).
mirror="$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1)"
[[ -n "$mirror" ]] || mirror="$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)"
[[ -n "$mirror" ]] || fail "no Debian mirror found in /etc/apt/sources.list(.d)"
mirror_host="$(sed -E 's#^[a-z]+://([^/:]+).*#\1#' <<<"$mirror")"
# TALLY_FRESH_ROOT_CACHE=FILE keeps the untouched root as a tarball between runs (a rerun skips the
# debootstrap; the root it unpacks is just as fresh).
cache="${TALLY_FRESH_ROOT_CACHE:-}"
if [[ -n "$cache" && -f "$cache" ]]; then
  mkdir -p "$root"
  tar -C "$root" -xf "$cache"
  say "root: unpacked from $cache (debootstrap of $mirror, cached)"
else
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap failed"; }
  say "root: $(du -sh "$root" | cut -f1) from $mirror"
  if [[ -n "$cache" ]]; then tar -C "$root" -cf "$cache.tmp" . && mv "$cache.tmp" "$cache"; fi
fi
in_root_plain() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
check "the root has no node, no npm, no go" in_root_plain sh -c '! command -v node && ! command -v npm && ! command -v go && ! test -e /usr/local/go'
# Packages' maintainer scripts must not start daemons in the root.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Where this machine's own way out to the registries re-signs TLS with a local CA, the root trusts
# that CA as this host does (ca-certificates, installed in the root by the installer, adds it).
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi

# ------------------------------------------------------------------ 2. the repository
phase "copy the repository (no node_modules, no build)"
mkdir -p "$root/opt/tally"
chmod 755 "$root/opt/tally"
tar -C "$repo" --exclude=node_modules --exclude=./dist --exclude=./.git --exclude=libs/db/src/generated \
  --exclude=./.tally --exclude=./bench/results -cf - . | tar -C "$root/opt/tally" -xf -

# ------------------------------------------------------------------ 3. an isolated network
phase "network namespace and registry proxy"
net="10.235.$((RANDOM % 250 + 1))"
ip netns add "$ns"
ip link add "$host_if" type veth peer name fresh0 netns "$ns"
ip addr add "$net.1/24" dev "$host_if"
ip link set "$host_if" up
ip -n "$ns" link set lo up
ip -n "$ns" addr add "$net.2/24" dev fresh0
ip -n "$ns" link set fresh0 up
# shellcheck source=scripts/provision/lib.sh
node_bin="$(bash -c 'source scripts/provision/lib.sh && use_tools_node >/dev/null && command -v node')"
npm_host="$(sed -E 's#^[a-z]+://([^/:]+).*#\1#' <<<"$("$(dirname "$node_bin")/npm" config get registry)")"
proxy_port=3128
"$node_bin" scripts/fresh-host/registry-proxy.mjs "$net.1" "$proxy_port" "$mirror_host" "$npm_host" \
  proxy.golang.org sum.golang.org >"$work/proxy.log" 2>&1 &
proxy_pid=$!
eventually 10 grep -q listening "$work/proxy.log" || fail "the registry proxy did not start: $(cat "$work/proxy.log")"
say "namespace $ns: node address $net.2, registries through http://$net.1:$proxy_port ($mirror_host, $npm_host, proxy.golang.org, sum.golang.org)"

# in_root SCRIPT: runs SCRIPT (bash) chrooted into the root, in the namespace, with /proc, /sys,
# /dev mounted in a mount namespace of its own and a PID namespace of its own (whatever it
# started ends with it).
in_root() {
  local proxy="http://$net.1:$proxy_port"
  nsenter --net="/run/netns/$ns" unshare --mount --propagation private --pid --fork bash -c '
    set -e
    root="$1"; shift
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs tmpfs "$root/run"
    mkdir -p "$root/run/lock"
    exec chroot "$root" "$@"
  ' _ "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    http_proxy="$proxy" https_proxy="$proxy" HTTP_PROXY="$proxy" HTTPS_PROXY="$proxy" no_proxy=127.0.0.1,localhost \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    bash -c "cd /opt/tally && $1"
}

# ------------------------------------------------------------------ 4. the installer
phase "./install.sh --dry-run"
in_root './install.sh --dry-run --offline' >"$work/dry.out" 2>&1 || { cat "$work/dry.out" >&2; fail "install.sh --dry-run failed"; }
check "--dry-run lists the runtime steps (Node.js and Go, pinned)" \
  grep -qE 'would run: bash /opt/tally/scripts/provision/runtimes.sh node go \(Node.js 24\.[0-9.]+ to .*, Go [0-9.]+ to ' "$work/dry.out"
check "--dry-run installed nothing (still no node in the root)" in_root_plain sh -c '! command -v node && ! test -d /root/.cache/tally'

phase "./install.sh --offline, /healthz, one stream, --stop"
# One session in the root: the install, then the checks against what it left running, then --stop
# (the PID namespace ends the services anyway when the session does).
status=0
touch "$work/install.out"
# Progress while it runs: the installer's phase lines.
tail -n +1 -f "$work/install.out" > >(grep --line-buffered -E '^\[install\] \([0-9]+\) |took|^\[fresh-host\]|ERROR') &
progress=$!
in_root '
  started=$SECONDS
  ./install.sh --offline || exit 10
  echo "[fresh-host] install.sh took $((SECONDS - started))s"
  base=http://127.0.0.1:8080
  code="$(curl -s -o /dev/null -w "%{http_code}" $base/healthz)"
  echo "[fresh-host] GET /healthz: $code"
  [ "$code" = 200 ] || exit 11
  key="$(cat /var/lib/tally/admin.key)"
  app="$(curl -s -X POST $base/v1/apps -H "Authorization: Bearer $key" -H "Content-Type: application/json" -d "{\"name\":\"fresh\"}")"
  app_id="$(printf "%s" "$app" | sed -n "s/.*\"id\":\"\([^\"]*\)\".*/\1/p")"
  [ -n "$app_id" ] || { echo "[fresh-host] POST /v1/apps answered: $app"; exit 12; }
  stream="$(curl -s -w "\n%{http_code}" -X POST $base/v1/apps/$app_id/streams -H "Authorization: Bearer $key" -H "Content-Type: application/json" -d "{\"name\":\"s\"}")"
  echo "[fresh-host] POST /v1/apps/$app_id/streams: ${stream##*
}"
  [ "${stream##*
}" = 201 ] || { echo "$stream"; exit 13; }
  ./install.sh --stop >/dev/null || exit 14
' >"$work/install.out" 2>&1 || status=$?
kill "$progress" 2>/dev/null || true
case "$status" in
  0) ;;
  10) tail -n 60 "$work/install.out" >&2; fail "./install.sh --offline failed on the fresh root" ;;
  *) tail -n 30 "$work/install.out" >&2; fail "the check after the install failed (exit $status)" ;;
esac
check "GET /healthz answered 200" grep -q '^\[fresh-host\] GET /healthz: 200$' "$work/install.out"
check "a stream was created (201)" grep -qE '^\[fresh-host\] POST /v1/apps/[^ ]+/streams: 201$' "$work/install.out"
check "the summary names the runtimes and where they came from" \
  grep -qE 'Runtime: +Node\.js 24\.[0-9.]+ \(npm registry package node-linux-[a-z0-9]+@' "$work/install.out"
say "the installer's phases:"
sed -n '/Phases:/,/Stop:\|Try it/p' "$work/install.out" | grep -E '^\[install\] +[0-9.]+s ' | sed 's/^\[install\]/   /' || true
print_phases
