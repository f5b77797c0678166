#!/usr/bin/env bash
# Provisions the docker worker runtime's images as a tarball in $TALLY_TOOLS_DIR/images (the
# docker-runtime e2e test loads it into its own dockerd: tests run in a network namespace with
# no route to the apt mirror, so images cannot be built there). Builds them with
# scripts/build-images.sh against a throwaway dockerd of its own, then stops it.
# Skipped when the tarball exists and its stamp records the same inputs (Dockerfiles, build
# script, entrypoint, egress/ingress binaries). TALLY_FORCE_REBUILD=1 forces a rebuild.
#
# Usage: bash scripts/provision/images.sh
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

repo="$(cd "$TALLY_PROVISION_DIR/../.." && pwd)"
images_dir="$TALLY_TOOLS_DIR/images"
tarball="$images_dir/tally-workers.tar"
stamp_file="$images_dir/tally-workers.stamp"
stamp="$(cat "$repo"/deploy/images/*/* "$repo/scripts/build-images.sh" "$repo/deploy/workers/egress-entrypoint.sh" \
  "$TALLY_BIN_DIR/egress" "$TALLY_BIN_DIR/ingress" | sha256sum | cut -c1-16)"

if [[ "${TALLY_FORCE_REBUILD:-0}" != 1 && -f "$tarball" && "$(cat "$stamp_file" 2>/dev/null)" == "$stamp" ]]; then
  log "worker images: $tarball is current ($stamp)"
  exit 0
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd is missing (docker.io: scripts/provision/system.sh)"
mkdir -p "$images_dir"
dir="$(mktemp -d /tmp/tally-build-dockerd.XXXXXX)"
socket="$dir/docker.sock"
stop_dockerd() {
  if [[ -f "$dir/docker.pid" ]]; then kill "$(cat "$dir/docker.pid")" 2>/dev/null || true; fi
  for _ in $(seq 1 50); do [[ -S "$socket" ]] || break; sleep 0.2; done
  # dockerd leaves its network namespace file mounted under the exec root.
  grep -o " ${dir}[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$dir"
}
trap stop_dockerd EXIT
dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=overlay2 \
  --exec-opt native.cgroupdriver=cgroupfs --data-root "$dir/data" --exec-root "$dir/exec" \
  --pidfile "$dir/docker.pid" -H "unix://$socket" >"$dir/dockerd.log" 2>&1 &
for _ in $(seq 1 60); do [[ -S "$socket" ]] && break; sleep 0.5; done
[[ -S "$socket" ]] || die "dockerd did not start: $(tail -5 "$dir/dockerd.log")"
start=$SECONDS
bash "$repo/scripts/build-images.sh" --socket "$socket" --save "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
echo "$stamp" >"$stamp_file"
log "worker images: built and saved to $tarball in $(fmt_duration $((SECONDS - start)))"
