#!/usr/bin/env bash
# Builds the pinned LiveKit binaries into $TALLY_TOOLS_DIR/bin:
#   livekit-server  v1.13.5   (the upstream module with the patches in go/livekit-server/patches,
#                              applied in name order, see build_livekit_server)
#   lk              v2.18.2   (livekit-cli, via the wrapper module in go/lk, -tags portaudio_system;
#                              its load-test sample media, Git LFS pointers in the module zip,
#                              generated with ffmpeg to the names, sizes and bitrates it expects)
# A build is skipped when the binary exists and its stamp records the same version + recipe.
# TALLY_FORCE_REBUILD=1 forces a rebuild (still fast with the warm Go cache).
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIVEKIT_SERVER_VERSION="v1.13.5"
LK_VERSION="v2.18.2"
LK_WRAPPER_DIR="$TALLY_PROVISION_DIR/go/lk"
LIVEKIT_SERVER_PATCH_DIR="$TALLY_PROVISION_DIR/go/livekit-server/patches"
LK_MODULE="github.com/livekit/livekit-cli/v2"
# Bump when the lk build steps below change in a way the wrapper files do not show.
LK_RECIPE=2

mkdir -p "$TALLY_BIN_DIR" "$TALLY_STAMP_DIR" "$TALLY_TOOLS_DIR/src"

# check_binary_version BIN VERSION: `BIN --version` must mention VERSION (without the v).
check_binary_version() {
  local out
  out="$("$1" --version 2>&1 || true)"
  [[ "$out" == *"${2#v}"* ]] || die "$1 --version printed '$out', expected ${2#v}"
}

# build_livekit_server: built from a patched copy of the module (its own go.mod and go.sum). Each
# patch in go/livekit-server/patches is a unified diff from the module's root (`a/` and `b/`
# prefixes) that must apply exactly, without fuzz, or the module changed under us; they are part of
# the build's stamp.
#   ingress-state-after-delete.patch: an ingress that reports its state while it is being deleted
#     (an RTMP push that stops as its ingress is deleted) no longer crashes livekit-server with a nil
#     pointer, which dropped every room on the node. Upstream fixed it in v1.13.10 (#4806).
#   node-available-through-failover.patch: a node whose stats in Redis are up to 20 s old (LiveKit:
#     5 s) is still taken for alive. No node can update its stats during a Redis Sentinel failover
#     (5 s down-after, then the promotion and the reconnect); with 5 s a client that rejoins right
#     after one gets a second copy of its room on another node, and the recording and the stream
#     end with the copy it left (docs/cluster.md).
#   redis-api-keys.patch: API keys added and revoked while the server runs. A key not in `keys` /
#     `key_file` is looked up in the Redis hash tally:{lk}:keys (field: key, value: secret), each
#     answer cached for 3 s; `NumKeys` counts the configured keys only. Joined worker and GPU nodes
#     get their keys there (docs/adr/0025-per-node-credentials.md).
build_livekit_server() {
  local name=livekit-server recipe
  recipe="$(hash_files "$LIVEKIT_SERVER_PATCH_DIR"/*.patch)"
  local stamp="livekit-server $LIVEKIT_SERVER_VERSION recipe=$recipe.2"
  if stamp_matches "$name" "$stamp"; then
    log "$name $LIVEKIT_SERVER_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  log "building $name $LIVEKIT_SERVER_VERSION ..."
  local start=$SECONDS work="$TALLY_TOOLS_DIR/src/livekit-server" module_dir patch
  module_dir="$(cd "$TALLY_TOOLS_DIR/src" && go mod download -json "github.com/livekit/livekit-server@$LIVEKIT_SERVER_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$module_dir" && -f "$module_dir/go.mod" ]] || die "go mod download livekit-server@$LIVEKIT_SERVER_VERSION failed"
  # Scratch copy: the module cache and the repo are never written to.
  rm -rf "$work"
  cp -r "$module_dir" "$work"
  chmod -R u+w "$work"
  for patch in "$LIVEKIT_SERVER_PATCH_DIR"/*.patch; do
    patch --quiet --forward --fuzz=0 -p1 -d "$work" <"$patch" || die "$patch did not apply to livekit-server $LIVEKIT_SERVER_VERSION"
  done
  (cd "$work" && go build -mod=readonly -trimpath -o "$TALLY_BIN_DIR/$name.tmp" ./cmd/server)
  mv -f "$TALLY_BIN_DIR/$name.tmp" "$TALLY_BIN_DIR/$name"
  rm -rf "$work"
  check_binary_version "$TALLY_BIN_DIR/$name" "$LIVEKIT_SERVER_VERSION"
  stamp_write "$name" "$stamp"
  log "built $name $LIVEKIT_SERVER_VERSION in $(fmt_duration $((SECONDS - start)))"
}

# lk_sample_media DIR: writes the load tester's sample media into DIR (pkg/provider/resources of
# the module): per video set three simulcast layers (180p/360p/720p at 15/20/30 fps, or the
# portrait "circles" 180/360/540 wide), H.264 Annex B (baseline, one slice per frame, no B-frames)
# or VP8 IVF, at the bitrate the file name states; Opus in Ogg for the audio loops. 8 s each.
lk_sample_media() {
  local dir="$1" seconds=8 name spec codec size kbps fps w h
  local ff=(ffmpeg -nostdin -hide_banner -loglevel error -y)
  local videos=(
    "butterfly h264 180 150 15" "butterfly h264 360 400 20" "butterfly h264 720 2000 30"
    "cartoon h264 180 120 15" "cartoon h264 360 400 20" "cartoon h264 720 1500 30"
    "crescent vp8 180 150 15" "crescent vp8 360 600 20" "crescent vp8 720 2000 30"
    "neon vp8 180 150 15" "neon vp8 360 600 20" "neon vp8 720 2000 30"
    "tunnel vp8 180 150 15" "tunnel vp8 360 600 20" "tunnel vp8 720 2000 30"
    "circles h264 p180 200 15" "circles h264 p360 700 20" "circles h264 p540 2000 30"
  )
  for spec in "${videos[@]}"; do
    read -r name codec size kbps fps <<<"$spec"
    if [[ "$size" == p* ]]; then
      w="${size#p}" h=$((${size#p} * 4 / 3))
    else
      h="$size" w=$((size * 16 / 9))
    fi
    local src=(-f lavfi -i "testsrc2=size=${w}x${h}:rate=$fps:duration=$seconds")
    if [[ "$codec" == h264 ]]; then
      "${ff[@]}" "${src[@]}" -c:v libx264 -profile:v baseline -preset veryfast -tune zerolatency -bf 0 \
        -x264-params "slices=1:sliced-threads=0:repeat-headers=1" -g $((fps * 2)) -pix_fmt yuv420p \
        -b:v "${kbps}k" -maxrate "${kbps}k" -bufsize "$((kbps * 2))k" -f h264 "$dir/${name}_${size}_${kbps}.h264"
    else
      "${ff[@]}" "${src[@]}" -c:v libvpx -deadline realtime -cpu-used 8 -g $((fps * 2)) -pix_fmt yuv420p \
        -b:v "${kbps}k" -f ivf "$dir/${name}_${size}_${kbps}.ivf"
    fi
  done
  local voices=(amelia benjamin clint elena emma ken sophie) i=0 voice
  for voice in "${voices[@]}"; do
    i=$((i + 1))
    "${ff[@]}" -f lavfi -i "sine=frequency=$((220 * i)):sample_rate=48000:duration=$seconds" -ac 2 \
      -c:a libopus -b:a 32k -frame_duration 20 -page_duration 20000 -f ogg "$dir/change-$voice.ogg"
  done
}

build_lk() {
  local name=lk recipe
  recipe="$(hash_files "$LK_WRAPPER_DIR/go.mod" "$LK_WRAPPER_DIR/go.sum" "$LK_WRAPPER_DIR/tools.go")"
  local stamp="lk $LK_VERSION recipe=$recipe.$LK_RECIPE"
  if stamp_matches "$name" "$stamp"; then
    log "$name $LK_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  pkg-config --exists portaudio-2.0 ||
    die "pkg-config cannot find portaudio-2.0: run scripts/provision/system.sh (needs portaudio19-dev libasound2-dev pkg-config)"
  grep -q "github.com/livekit/livekit-cli/v2 $LK_VERSION\$" "$LK_WRAPPER_DIR/go.mod" ||
    die "$LK_WRAPPER_DIR/go.mod does not require livekit-cli $LK_VERSION"
  log "building $name (livekit-cli) $LK_VERSION ..."
  local start=$SECONDS work="$TALLY_TOOLS_DIR/src/lk"
  # Build from a scratch copy so the repo's wrapper files are never rewritten by the go tool.
  rm -rf "$work"
  mkdir -p "$work"
  cp "$LK_WRAPPER_DIR/go.mod" "$LK_WRAPPER_DIR/go.sum" "$LK_WRAPPER_DIR/tools.go" "$work/"
  # The module's sample media are Git LFS pointers: build from a copy with real ones.
  local module_dir resources
  module_dir="$(cd "$work" && go mod download -json "$LK_MODULE@$LK_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$module_dir" && -f "$module_dir/go.mod" ]] || die "go mod download $LK_MODULE@$LK_VERSION failed"
  cp -r "$module_dir" "$work/livekit-cli"
  chmod -R u+w "$work/livekit-cli"
  resources="$work/livekit-cli/pkg/provider/resources"
  command -v ffmpeg >/dev/null 2>&1 || die "ffmpeg is required to make lk's sample media: run scripts/provision/system.sh"
  find "$resources" -type f ! -name README.md -delete
  lk_sample_media "$resources"
  (cd "$work" && go mod edit -replace "$LK_MODULE=./livekit-cli" && go build -mod=readonly -trimpath -tags portaudio_system \
    -o "$TALLY_BIN_DIR/$name.tmp" "$LK_MODULE/cmd/lk")
  mv -f "$TALLY_BIN_DIR/$name.tmp" "$TALLY_BIN_DIR/$name"
  check_binary_version "$TALLY_BIN_DIR/$name" "$LK_VERSION"
  stamp_write "$name" "$stamp"
  log "built $name $LK_VERSION in $(fmt_duration $((SECONDS - start)))"
}

# Usage: bash scripts/provision/livekit.sh [livekit-server] [lk]   (default: both)
wanted=("$@")
[[ ${#wanted[@]} -gt 0 ]] || wanted=(livekit-server lk)
for name in "${wanted[@]}"; do
  case "$name" in
    livekit-server) build_livekit_server ;;
    lk) build_lk ;;
    *) die "livekit.sh: unknown argument: $name (livekit-server or lk)" ;;
  esac
done
log "livekit binaries: done ($TALLY_BIN_DIR)"
