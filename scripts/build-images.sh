#!/usr/bin/env bash
# Builds Tally's media worker images with no registry: a Debian bookworm rootfs from debootstrap
# (minbase) imported into the engine, a base image on it, then egress and ingress on the base with
# the binaries scripts/provision/{egress,ingress}.sh built. Tags are the agent's defaults.
#   tally/debian-rootfs:bookworm  imported rootfs
#   tally/base:bookworm           deploy/images/base
#   tally/egress:1.8.6            deploy/images/egress
#   tally/ingress:1.5.0           deploy/images/ingress
# An image whose tag already exists is skipped unless --force. The apt mirror is the host's
# (TALLY_APT_MIRROR overrides it). Needs root (debootstrap), the docker CLI and debootstrap.
#
# --save FILE then writes the egress and ingress images to FILE (for `docker load` elsewhere).
#
# Usage: bash scripts/build-images.sh [--socket PATH] [--force] [--only base|egress|ingress] [--save FILE]
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGES_DIR="$REPO_ROOT/deploy/images"
TOOLS_BIN="${TALLY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tally/tools}/bin"
EGRESS_BIN="${TALLY_EGRESS_BIN:-$TOOLS_BIN/egress}"
INGRESS_BIN="${TALLY_INGRESS_BIN:-$TOOLS_BIN/ingress}"
ROOTFS_IMAGE="tally/debian-rootfs:bookworm"
BASE_IMAGE="tally/base:bookworm"
EGRESS_IMAGE="${TALLY_EGRESS_IMAGE:-tally/egress:1.8.6}"
INGRESS_IMAGE="${TALLY_INGRESS_IMAGE:-tally/ingress:1.5.0}"

log() { printf '[images] %s\n' "$*"; }
die() {
  printf '[images] ERROR: %s\n' "$*" >&2
  exit 1
}

socket=""
force=0
only=""
save=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --socket)
      socket="${2:?--socket needs a path}"
      shift 2
      ;;
    --force)
      force=1
      shift
      ;;
    --only)
      only="${2:?--only needs base, egress or ingress}"
      shift 2
      ;;
    --save)
      save="${2:?--save needs a file}"
      shift 2
      ;;
    -h | --help)
      sed -n '2,14p' "$0"
      exit 0
      ;;
    *) die "unknown argument: $1" ;;
  esac
done

docker_cmd=(docker)
[[ -n "$socket" ]] && docker_cmd+=(-H "unix://$socket")
dk() { "${docker_cmd[@]}" "$@"; }
command -v docker >/dev/null 2>&1 || die "the docker CLI is required (apt-get install docker.io)"
dk version --format '{{.Server.Version}}' >/dev/null || die "no Docker engine at ${socket:-the default socket}"

# host_mirror [security]: the first Debian URI in the host's apt sources (deb822 or one-line).
host_mirror() {
  local want="$1" uri
  # shellcheck disable=SC2013 # words on purpose: a deb822 URIs field may list several
  for uri in $(sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null); do
    if [[ "$want" == security && "$uri" == *security* ]] || [[ "$want" != security && "$uri" != *security* ]]; then
      printf '%s\n' "$uri"
      return 0
    fi
  done
  return 1
}

have_image() { dk image inspect "$1" >/dev/null 2>&1; }
want() { [[ -z "$only" || "$only" == "$1" ]]; }

# timed LABEL CMD...: runs CMD and logs how long it took.
timed() {
  local label="$1" start=$SECONDS
  shift
  "$@"
  log "$label: $((SECONDS - start)) s"
}

build_rootfs() {
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is required (apt-get install debootstrap)"
  [[ "$(id -u)" -eq 0 ]] || die "debootstrap needs root"
  local mirror security dir
  mirror="${TALLY_APT_MIRROR:-$(host_mirror main || echo http://deb.debian.org/debian)}"
  security="${TALLY_APT_SECURITY_MIRROR:-$(host_mirror security || echo http://deb.debian.org/debian-security)}"
  dir="$(mktemp -d /tmp/tally-rootfs.XXXXXX)"
  # shellcheck disable=SC2064 # expand now: the directory is local to this function
  trap "rm -rf '$dir'" RETURN
  log "debootstrap minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$dir/rootfs" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
    die "debootstrap failed: $(tail -5 "$dir/debootstrap.log")"
  cat >"$dir/rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SOURCES
  rm -rf "$dir/rootfs/var/cache/apt/archives/"*.deb "$dir/rootfs/var/lib/apt/lists/"*
  tar -C "$dir/rootfs" --numeric-owner -c . | dk import - "$ROOTFS_IMAGE" >/dev/null
}

# build IMAGE DOCKERFILE_DIR [FILE...]: docker build with the listed files added to the context.
build() {
  local image="$1" src="$2" ctx
  shift 2
  ctx="$(mktemp -d /tmp/tally-image-ctx.XXXXXX)"
  # shellcheck disable=SC2064 # expand now: the directory is local to this function
  trap "rm -rf '$ctx'" RETURN
  cp -a "$src/." "$ctx/"
  [[ $# -gt 0 ]] && cp "$@" "$ctx/"
  # The legacy builder: BuildKit cannot build FROM an image that only exists in this engine here.
  DOCKER_BUILDKIT=0 dk build --network host --build-arg "ROOTFS_IMAGE=$ROOTFS_IMAGE" \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$image" "$ctx" >"$ctx/build.log" 2>&1 ||
    die "building $image failed: $(tail -20 "$ctx/build.log")"
}

step() {
  local image="$1"
  shift
  if [[ "$force" == 0 ]] && have_image "$image"; then
    log "$image: present (skipped; --force rebuilds)"
    return 0
  fi
  timed "$image built" "$@"
}

total=$SECONDS
if want base; then
  step "$ROOTFS_IMAGE" build_rootfs
  step "$BASE_IMAGE" build "$BASE_IMAGE" "$IMAGES_DIR/base"
fi
if want egress; then
  [[ -x "$EGRESS_BIN" ]] || die "no egress binary at $EGRESS_BIN (run scripts/provision/egress.sh)"
  have_image "$BASE_IMAGE" || die "$BASE_IMAGE is missing (run without --only)"
  step "$EGRESS_IMAGE" build "$EGRESS_IMAGE" "$IMAGES_DIR/egress" "$EGRESS_BIN" "$REPO_ROOT/deploy/workers/egress-entrypoint.sh"
fi
if want ingress; then
  [[ -x "$INGRESS_BIN" ]] || die "no ingress binary at $INGRESS_BIN (run scripts/provision/ingress.sh)"
  have_image "$BASE_IMAGE" || die "$BASE_IMAGE is missing (run without --only)"
  step "$INGRESS_IMAGE" build "$INGRESS_IMAGE" "$IMAGES_DIR/ingress" "$INGRESS_BIN"
fi
if [[ -n "$save" ]]; then
  mkdir -p "$(dirname "$save")"
  timed "saved to $save" dk save -o "$save" "$EGRESS_IMAGE" "$INGRESS_IMAGE"
fi
log "done in $((SECONDS - total)) s"
dk image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep '^tally/' || true
