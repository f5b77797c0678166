#!/usr/bin/env bash
# Provisions LiveKit egress v1.8.6 into $TALLY_TOOLS_DIR/bin/egress (next to livekit-server, lk):
#   - the Debian packages it links against and runs with (GStreamer 1.22, and Chromium, Xvfb,
#     PulseAudio for RoomComposite), installed only when missing
#   - the RoomComposite web template (template-default of the module, @livekit/egress-sdk pinned
#     to 0.2.1, built with pnpm 9 from npm), embedded into the binary
#   - the binary, built through the wrapper module in go/egress from a patched copy of the module
#     (templates folder filled in; AAC encoder faac -> voaacenc, which Debian ships, followed by
#     aacparse for segment and stream outputs, whose MPEG-TS muxer needs parsed AAC; and the
#     patches in go/egress/patches, applied in name order, see apply_patches)
# A build is skipped when the binary exists and its stamp records the same version + recipe.
# TALLY_FORCE_REBUILD=1 forces a rebuild (seconds to a minute with the warm Go and pnpm caches).
#
# Usage: bash scripts/provision/egress.sh [--skip-apt]
set -euo pipefail
# shellcheck source=scripts/provision/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

EGRESS_VERSION="v1.8.6"
EGRESS_MODULE="github.com/livekit/egress"
EGRESS_WRAPPER_DIR="$TALLY_PROVISION_DIR/go/egress"
EGRESS_SDK_VERSION="0.2.1" # 0.2.0, which template-default asks for, is missing from the registry
PNPM_VERSION="9.15.9"      # plain npm hits a react-scripts / typescript peer conflict
# Bump when the build steps below change in a way the wrapper files do not show.
EGRESS_RECIPE=2

EGRESS_APT_PACKAGES=(
  # build (cgo) and pipelines
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev libglib2.0-dev patch
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
  gstreamer1.0-libav gstreamer1.0-tools gstreamer1.0-x gstreamer1.0-pulseaudio
  # RoomComposite: Chromium renders the layout on an Xvfb display, PulseAudio carries its sound
  chromium xvfb pulseaudio fonts-dejavu-core fonts-liberation
)

skip_apt=0
for arg in "$@"; do
  case "$arg" in
    --skip-apt) skip_apt=1 ;;
    *) die "egress.sh: unknown argument: $arg" ;;
  esac
done

mkdir -p "$TALLY_BIN_DIR" "$TALLY_STAMP_DIR" "$TALLY_TOOLS_DIR/src"

# ensure_pnpm: pnpm $PNPM_VERSION from npm (the pinned Node's), in the tools dir (nothing global).
# Prints its path.
ensure_pnpm() {
  local prefix="$TALLY_TOOLS_DIR/node/pnpm-$PNPM_VERSION"
  local bin="$prefix/node_modules/.bin/pnpm"
  if [[ ! -x "$bin" || "$("$bin" --version 2>/dev/null)" != "$PNPM_VERSION" ]]; then
    log "installing pnpm $PNPM_VERSION (npm) ..." >&2
    rm -rf "$prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "pnpm@$PNPM_VERSION" >/dev/null ||
      die "npm install pnpm@$PNPM_VERSION failed"
  fi
  printf '%s\n' "$bin"
}

# build_template SRC OUT: builds SRC/template-default into OUT (cached under the tools dir by
# egress version, sdk pin and pnpm version).
build_template() {
  local module_dir="$1" out="$2"
  local key="egress-$EGRESS_VERSION-sdk-$EGRESS_SDK_VERSION-pnpm-$PNPM_VERSION"
  local cache="$TALLY_TOOLS_DIR/cache/egress-template/$key"
  if [[ -f "$cache/index.html" ]]; then
    log "egress template: cached ($cache)"
  else
    local pnpm work="$TALLY_TOOLS_DIR/src/egress-template" start=$SECONDS
    use_tools_node
    pnpm="$(ensure_pnpm)"
    log "building the RoomComposite template (pnpm $PNPM_VERSION, @livekit/egress-sdk $EGRESS_SDK_VERSION) ..."
    rm -rf "$work"
    cp -r "$module_dir/template-default" "$work"
    chmod -R u+w "$work"
    # The pin must change the manifest exactly once, or the module's template changed under us.
    grep -q '"@livekit/egress-sdk": "^0.2.0"' "$work/package.json" ||
      die "template-default/package.json no longer asks for @livekit/egress-sdk ^0.2.0: review the pin"
    sed -i "s|\"@livekit/egress-sdk\": \"^0.2.0\"|\"@livekit/egress-sdk\": \"$EGRESS_SDK_VERSION\"|" "$work/package.json"
    (
      cd "$work"
      # The lockfile pins 0.2.0, so it must be re-resolved; peer warnings (livekit-client,
      # typescript vs react-scripts) are expected and harmless for the build.
      "$pnpm" install --no-frozen-lockfile --reporter=silent --store-dir "$TALLY_TOOLS_DIR/node/pnpm-store" >/dev/null ||
        die "pnpm install of the egress template failed (in $work)"
      CI=false GENERATE_SOURCEMAP=false "$pnpm" build >"$work.log" 2>&1 ||
        {
          tail -n 30 "$work.log" >&2
          die "pnpm build of the egress template failed (log: $work.log)"
        }
    )
    [[ -f "$work/build/index.html" ]] || die "the template build produced no build/index.html"
    rm -rf "$cache"
    mkdir -p "$(dirname "$cache")"
    mv "$work/build" "$cache"
    rm -rf "$work" "$work.log"
    log "built the egress template in $(fmt_duration $((SECONDS - start)))"
  fi
  rm -rf "$out"
  mkdir -p "$out"
  cp -r "$cache/." "$out/"
}

# patch_audio_encoder AUDIO_GO: the AAC encoder becomes voaacenc (Debian ships no faac). mpegtsmux
# (HLS segments, SRT) refuses voaacenc's unframed output, so egresses with segment or stream
# outputs get an aacparse after it; file-only egresses (MP4 recordings) keep the encoder alone,
# as their timing with aacparse differs (sound recorded before the first video frame). Each edit
# must apply exactly once, or the module's code changed under us.
patch_audio_encoder() {
  local audio="$1"
  [[ "$(grep -c 'gst.NewElement("faac")' "$audio")" == 1 ]] || die "$audio: expected one faac element to patch"
  [[ "$(grep -c 'return b.bin.AddElement(faac)' "$audio")" == 1 ]] || die "$audio: expected one faac AddElement to patch"
  sed -i 's/gst.NewElement("faac")/gst.NewElement("voaacenc")/' "$audio"
  perl -0pi -e 's/\t\treturn b\.bin\.AddElement\(faac\)\n/\t\tif b.conf.GetSegmentConfig() == nil && b.conf.GetStreamConfig() == nil {\n\t\t\treturn b.bin.AddElement(faac)\n\t\t}\n\t\taacParse, err := gst.NewElement("aacparse")\n\t\tif err != nil {\n\t\t\treturn errors.ErrGstPipelineError(err)\n\t\t}\n\t\treturn b.bin.AddElements(faac, aacParse)\n/' "$audio"
  [[ "$(grep -c 'gst.NewElement("voaacenc")' "$audio")" == 1 &&
    "$(grep -c 'gst.NewElement("aacparse")' "$audio")" == 1 &&
    "$(grep -c 'b.conf.GetSegmentConfig() == nil && b.conf.GetStreamConfig() == nil' "$audio")" == 1 &&
    "$(grep -c 'return b.bin.AddElements(faac, aacParse)' "$audio")" == 1 ]] ||
    die "$audio: the voaacenc + aacparse patch did not apply exactly once"
}

# apply_patches MODULE_DIR: the module's own source changes, one unified diff per file in
# go/egress/patches (made from the module's root, `a/` and `b/` prefixes). Each must apply exactly,
# without fuzz, or the module changed under us. They are part of the build's stamp.
#   audio-mixer-follows-timestamps.patch: for Track egress (passthrough, audio-only recordings) the
#     audio mixer places every buffer at its timestamp, instead of counting samples through the gaps Opus DTX
#     leaves in a sender's silences (which moved the sound 0.2-1 s early).
#   track-egress-first-packet-arrival.patch: a Track egress's file result `started_at` is when the
#     track's first packet arrived, not when the egress got round to reading it (it waits ~1 s in
#     the subscriber's buffer while the pipeline is built); passthrough recordings align their two
#     files on it.
#   Both: docs/recordings.md, Lip sync.
#   track-egress-fragmented-mp4.patch: a Track egress writes its MP4 (an H.264 track) fragmented,
#     1 s a fragment, so a killed egress leaves a file readable up to its last whole fragment, and
#     mp4mux is told the file cannot seek, so a caps change (a new picture size) does not make it
#     rewrite a longer moov over the first fragment (docs/recordings.md, Passthrough).
#   track-egress-in-process.patch: Track requests run inside the egress service process (a handler
#     goroutine and pipeline each, on the service's one Go heap, GStreamer registry, bus and IPC
#     connection) instead of an `egress run-handler` process each; the other request types keep
#     theirs. A Track egress left running by a service process that ended is reported failed, with
#     its last state, by the next one. TALLY_EGRESS_TRACK_HANDLER=process in egress's environment
#     restores a process per Track request (docs/adr/0048-track-egress-in-the-egress-process.md).
#   update-never-reopens-a-finished-egress.patch: an update that would move an egress back from a
#     final state it already reported (a stop racing the pipeline's own end sends ENDING after
#     COMPLETE) is dropped, so LiveKit does not list a finished egress as ending for good
#     (docs/recordings.md).
apply_patches() {
  local module_dir="$1" patch
  for patch in "$EGRESS_WRAPPER_DIR"/patches/*.patch; do
    [[ -f "$patch" ]] || continue
    patch --quiet --forward --fuzz=0 -p1 -d "$module_dir" <"$patch" || die "$patch did not apply to egress $EGRESS_VERSION"
  done
}

build_egress() {
  local name=egress recipe
  recipe="$(hash_files "$EGRESS_WRAPPER_DIR/go.mod" "$EGRESS_WRAPPER_DIR/go.sum" "$EGRESS_WRAPPER_DIR/tools.go" "$EGRESS_WRAPPER_DIR"/patches/*.patch)"
  local stamp="egress $EGRESS_VERSION recipe=$recipe.$EGRESS_RECIPE sdk=$EGRESS_SDK_VERSION"
  if stamp_matches "$name" "$stamp"; then
    log "$name $EGRESS_VERSION: present ($TALLY_BIN_DIR/$name)"
    return 0
  fi
  ensure_go
  pkg-config --exists gstreamer-1.0 gstreamer-app-1.0 ||
    die "pkg-config cannot find GStreamer 1.x development files: run this script without --skip-apt"
  grep -q "$EGRESS_MODULE $EGRESS_VERSION\$" "$EGRESS_WRAPPER_DIR/go.mod" ||
    die "$EGRESS_WRAPPER_DIR/go.mod does not require egress $EGRESS_VERSION"
  log "building $name $EGRESS_VERSION ..."
  local start=$SECONDS work="$TALLY_TOOLS_DIR/src/egress" module_dir
  # The module zip (the proxy serves it; `go install` does not work for this module here).
  module_dir="$(cd "$TALLY_TOOLS_DIR/src" && go mod download -json "$EGRESS_MODULE@$EGRESS_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$module_dir" && -f "$module_dir/go.mod" ]] || die "go mod download $EGRESS_MODULE@$EGRESS_VERSION failed"

  # Scratch copy: the wrapper files and the patched module; the repo is never written to.
  rm -rf "$work"
  mkdir -p "$work"
  cp "$EGRESS_WRAPPER_DIR/go.mod" "$EGRESS_WRAPPER_DIR/go.sum" "$EGRESS_WRAPPER_DIR/tools.go" "$work/"
  cp -r "$module_dir" "$work/egress"
  chmod -R u+w "$work/egress"
  patch_audio_encoder "$work/egress/pkg/pipeline/builder/audio.go"
  apply_patches "$work/egress"
  build_template "$work/egress" "$work/egress/cmd/server/templates"

  (cd "$work" && go build -mod=readonly -trimpath -o "$TALLY_BIN_DIR/$name.tmp" "$EGRESS_MODULE/cmd/server")
  mv -f "$TALLY_BIN_DIR/$name.tmp" "$TALLY_BIN_DIR/$name"
  rm -rf "$work"
  local out
  out="$("$TALLY_BIN_DIR/$name" --version 2>&1 || true)"
  [[ "$out" == *"${EGRESS_VERSION#v}"* ]] || die "$TALLY_BIN_DIR/$name --version printed '$out', expected ${EGRESS_VERSION#v}"
  stamp_write "$name" "$stamp"
  log "built $name $EGRESS_VERSION in $(fmt_duration $((SECONDS - start)))"
}

ensure_apt_packages egress "$skip_apt" "${EGRESS_APT_PACKAGES[@]}"
build_egress
# What the pipelines need at run time, checked after the packages are in.
if [[ "$skip_apt" == 0 ]]; then
  gst-inspect-1.0 voaacenc >/dev/null 2>&1 || die "GStreamer element voaacenc is missing (gstreamer1.0-plugins-bad)"
  gst-inspect-1.0 aacparse >/dev/null 2>&1 || die "GStreamer element aacparse is missing (gstreamer1.0-plugins-good)"
fi
log "egress: done ($TALLY_BIN_DIR/egress)"
