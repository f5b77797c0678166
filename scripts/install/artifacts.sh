#!/usr/bin/env bash
# The origin's built files for the nodes that join it (docs/adr/0031-joins-take-the-origins-builds.md).
# Source it; do not execute it.
#
# Origin: publish_artifacts puts into DIR/artifacts (root:tally 750, served by the API at
# GET /v1/nodes/artifacts to holders of a valid join token) what it built for its platform:
#   livekit-server, egress, ingress   the LiveKit binaries; version = their build stamp
#   node-linux-*.tgz, npm-*.tgz, v0.0.1-go*.zip   the runtimes' registry downloads; version = the file
#   dist.tar.gz                       the built services (dist/ with its production node_modules);
#                                     version = the hash of the sources they are built from
#   dashboard.tar.gz                  the dashboard's build (apps/dashboard/dist), for control nodes;
#                                     version = the hash of the sources it is built from
# and manifest.json listing each with its sha256 and size.
# Node: fetch_origin_artifacts (install.sh --join) takes from that list what its role needs, checks
# each file's sha256 against the manifest (the runtimes also against the pins in runtimes.sh), and
# leaves everything else to the usual provisioning, which builds only what is still missing or whose
# version differs from the one this checkout wants.

ARTIFACT_BINARIES=(livekit-server egress ingress)

# tools_paths: TOOLS_BIN_DIR, TOOLS_STAMP_DIR, TOOLS_ARCHIVE_DIR and ARTIFACT_PLATFORM from
# scripts/provision/lib.sh (the tools directory of root, which runs the installer).
tools_paths() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  {
    read -r TOOLS_BIN_DIR
    read -r TOOLS_STAMP_DIR
    read -r TOOLS_ARCHIVE_DIR
    read -r ARTIFACT_PLATFORM
  } < <(bash -c 'source "$1/scripts/provision/lib.sh" &&
    printf "%s\n" "$TALLY_BIN_DIR" "$TALLY_STAMP_DIR" "$TALLY_TOOLS_DIR/archives" "linux-$TALLY_GO_ARCH"' _ "$TALLY_REPO")
}

# bundle_source_hash -> what dist/ is built from: the apps' and libs' sources, the package manifests
# and the build script (the same checkout gives the same hash on the origin and on a node).
bundle_source_hash() {
  (
    cd "$TALLY_REPO" && {
      find apps libs \( -name node_modules -o -name dist -o -path libs/db/src/generated \) -prune -o \
        -type f -path '*/src/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
      sha256sum package.json package-lock.json scripts/build.mjs
    } | sha256sum | cut -c1-16
  )
}

# dashboard_source_hash -> what apps/dashboard/dist is built from: the dashboard's files (its page,
# sources and Vite config), the contracts it imports, the package manifests and the shared
# TypeScript settings. install_node_deps stamps the build with it (apps/dashboard/dist/.source).
dashboard_source_hash() {
  (
    cd "$TALLY_REPO" && {
      find apps/dashboard libs/contracts \( -name node_modules -o -name dist -o -name test -o -name '*.spec.ts*' \) -prune -o \
        -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
      sha256sum package.json package-lock.json tsconfig.base.json
    } | sha256sum | cut -c1-16
  )
}

# stamp_dashboard: marks apps/dashboard/dist as built from this checkout's sources.
stamp_dashboard() {
  dry && return 0
  dashboard_source_hash >"$TALLY_REPO/apps/dashboard/dist/.source"
}

# publish_file SRC DIR/NAME: a hard link when SRC is on the same filesystem, else a copy; replaced
# by rename.
publish_file() {
  [[ "$1" -ef "$2" ]] && return 0
  ln -f "$1" "$2.tmp" 2>/dev/null || cp -f "$1" "$2.tmp"
  mv -f "$2.tmp" "$2"
}

# manifest_version FILE NAME -> the version recorded for NAME in a manifest (empty if none).
manifest_version() {
  [[ -f "$1" ]] || return 0
  manifest_entries <"$1" | awk -F'\t' -v n="$2" '$2 == n { print $3 }'
}

# manifest_entries < manifest.json -> one line per file: kind TAB name TAB version TAB sha256 TAB bytes.
# The manifest is this installer's own (or the origin API's re-serialisation of it): flat objects
# whose string values hold no quotes or braces (NodeArtifact in libs/contracts), so no JSON parser
# is needed on a host without Node.
manifest_entries() {
  local object field value
  tr -d '\n' | grep -o '{[^{}]*}' | while IFS= read -r object; do
    local -A f=()
    for field in kind name version sha256 bytes; do
      value="$(sed -n "s/.*\"$field\":\"\{0,1\}\([^\",}]*\)\"\{0,1\}[,}].*/\1/p" <<<"$object")"
      f[$field]="$value"
    done
    [[ -n "${f[name]}" && -n "${f[sha256]}" ]] && printf '%s\t%s\t%s\t%s\t%s\n' "${f[kind]}" "${f[name]}" "${f[version]}" "${f[sha256]}" "${f[bytes]}"
  done
}

publish_artifacts() {
  local dir="$HOME_DIR/artifacts"
  ensure_dir "$dir" 750 "root:$TALLY_USER"
  if dry; then
    log "    would publish the built binaries, the runtimes' downloads, dist/ and the dashboard's build in $dir for joining nodes (GET /v1/nodes/artifacts)"
    return 0
  fi
  tools_paths
  local started=$SECONDS entries=() name file hash old
  for name in "${ARTIFACT_BINARIES[@]}"; do
    [[ -x "$TOOLS_BIN_DIR/$name" && -f "$TOOLS_STAMP_DIR/$name.stamp" ]] || continue
    publish_file "$TOOLS_BIN_DIR/$name" "$dir/$name"
    entries+=("binary	$name	$(cat "$TOOLS_STAMP_DIR/$name.stamp")")
  done
  for file in "$TOOLS_ARCHIVE_DIR"/*; do
    [[ -f "$file" ]] || continue
    name="${file##*/}"
    publish_file "$file" "$dir/$name"
    entries+=("runtime	$name	$name")
  done
  if [[ -f "$TALLY_REPO/dist/agent.js" && -f "$TALLY_REPO/dist/agent-leave.js" && -d "$TALLY_REPO/dist/node_modules" ]]; then
    hash="$(bundle_source_hash)"
    old="$(manifest_version "$dir/manifest.json" dist.tar.gz)"
    if [[ "$old" != "$hash" || ! -f "$dir/dist.tar.gz" ]]; then
      # gzip -1: a quarter of the size, at a fraction of the default level's CPU.
      tar -C "$TALLY_REPO" --exclude=dist/.source -I 'gzip -1' -cf "$dir/dist.tar.gz.tmp" dist
      mv -f "$dir/dist.tar.gz.tmp" "$dir/dist.tar.gz"
    fi
    entries+=("bundle	dist.tar.gz	$hash")
  fi
  local dashboard="$TALLY_REPO/apps/dashboard/dist"
  hash="$(cat "$dashboard/.source" 2>/dev/null || true)"
  if [[ -f "$dashboard/index.html" && "$hash" == "$(dashboard_source_hash)" ]]; then
    old="$(manifest_version "$dir/manifest.json" dashboard.tar.gz)"
    if [[ "$old" != "$hash" || ! -f "$dir/dashboard.tar.gz" ]]; then
      tar -C "$dashboard" --exclude=./.source -I 'gzip -1' -cf "$dir/dashboard.tar.gz.tmp" .
      mv -f "$dir/dashboard.tar.gz.tmp" "$dir/dashboard.tar.gz"
    fi
    entries+=("bundle	dashboard.tar.gz	$hash")
  fi
  # Whatever an earlier run published and this one did not (an older runtime) goes.
  local keep=" manifest.json " entry
  for entry in "${entries[@]}"; do keep+="$(cut -f2 <<<"$entry") "; done
  for file in "$dir"/*; do
    [[ -e "$file" && "$keep" != *" ${file##*/} "* ]] && rm -f "$file"
  done
  local kind version sha bytes json=""
  for entry in "${entries[@]}"; do
    IFS=$'\t' read -r kind name version <<<"$entry"
    sha="$(sha256sum "$dir/$name" | cut -d' ' -f1)"
    bytes="$(stat -c %s "$dir/$name")"
    json+="${json:+,}"$'\n'"    {\"name\":\"$name\",\"kind\":\"$kind\",\"version\":\"$version\",\"sha256\":\"$sha\",\"bytes\":$bytes}"
  done
  write_file "$dir/manifest.json" 640 "root:$TALLY_USER" <<<"{\"platform\":\"$ARTIFACT_PLATFORM\",\"files\":[$json
  ]}" >/dev/null
  log "    $dir: ${#entries[@]} files for joining nodes ($(du -sh "$dir" | cut -f1), $((SECONDS - started))s)"
}

# role_binaries -> the LiveKit binaries the join's role runs.
role_binaries() {
  case "$JOIN_ROLE" in
    media) echo livekit-server ;;
    worker) echo egress ingress ;;
    gpu) echo egress ;;
    control) ;; # no LiveKit binary; dist/ (the API and worker) only
  esac
}

# fetch_origin_artifacts: on --join, what the origin built for this platform (see the top of this
# file). Anything missing, refused or of another version is left to provisioning, which builds it.
# Exports TALLY_RUNTIME_ARCHIVES (the runtimes' downloads from the origin, for runtimes.sh).
fetch_origin_artifacts() {
  if [[ "$DO_PROVISION" == 0 ]]; then
    log "    skipped (--no-provision)"
    return 0
  fi
  local url="$JOIN_URL/v1/nodes/artifacts" auth="Authorization: Bearer $JOIN_TOKEN"
  if [[ ! "$JOIN_TOKEN" =~ ^[A-Za-z0-9_-]+$ ]]; then
    log "    --token has unexpected characters: nothing fetched"
    return 0
  fi
  if dry; then
    local dashboard=""
    [[ "$JOIN_ROLE" != control ]] || dashboard=", the dashboard's build"
    log "    would GET $url (with the join token, not spending it) and fetch, sha256-checked, what the origin has of: $(role_binaries | sed 's/$/, /')the runtimes, dist/ (the built services)$dashboard"
    return 0
  fi
  tools_paths
  # A bare host may have no curl yet (runtimes.sh would install it, but that comes after).
  if ! command -v curl >/dev/null 2>&1; then
    log "    curl missing: apt-get install ca-certificates curl"
    env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
      env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates curl >/dev/null ||
      die "could not install curl (apt-get)"
  fi
  local response status manifest
  response="$(curl -sS -m 30 -H "$auth" -w '\n%{http_code}' "$url" 2>&1)" || {
    warn "could not fetch $url (${response##*$'\n'}): everything is built here"
    return 0
  }
  status="${response##*$'\n'}" manifest="${response%$'\n'*}"
  case "$status" in
    200) ;;
    401)
      log "    the origin refused the token for its built files (spent or expired; a re-run can pass a new one): everything is built here"
      return 0
      ;;
    404)
      log "    the origin offers no built files (an older origin, or none published): everything is built here"
      return 0
      ;;
    *)
      warn "GET $url answered $status: everything is built here"
      return 0
      ;;
  esac
  local platform
  platform="$(sed -n 's/.*"platform":"\([^"]*\)".*/\1/p' <<<"$manifest" | head -n1)"
  if [[ "$platform" != "$ARTIFACT_PLATFORM" ]]; then
    log "    the origin built for ${platform:-an unknown platform}, this host is $ARTIFACT_PLATFORM: everything is built here"
    return 0
  fi
  local entries
  entries="$(manifest_entries <<<"$manifest")"
  local scratch started=$SECONDS fetched=0 fetched_bytes=0
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/tally-join-artifacts.XXXXXX")"
  export TALLY_RUNTIME_ARCHIVES="$scratch/archives"
  mkdir -p "$TALLY_RUNTIME_ARCHIVES" "$TOOLS_BIN_DIR" "$TOOLS_STAMP_DIR"
  JOIN_ARTIFACTS_SCRATCH="$scratch"

  local kind name version sha bytes missing_binary=0 bin
  for bin in $(role_binaries); do
    grep -q "^binary	$bin	" <<<"$entries" || missing_binary=1
  done
  while IFS=$'\t' read -r kind name version sha bytes; do
    [[ -n "$name" ]] || continue
    case "$kind" in
      binary)
        [[ " $(role_binaries) " == *" $name "* ]] || continue
        if [[ -x "$TOOLS_BIN_DIR/$name" && "$(cat "$TOOLS_STAMP_DIR/$name.stamp" 2>/dev/null)" == "$version" ]]; then
          log "    $name: present ($version)"
          continue
        fi
        fetch_artifact "$name" "$sha" "$scratch/$name" || continue
        chmod 755 "$scratch/$name"
        mv -f "$scratch/$name" "$TOOLS_BIN_DIR/$name"
        printf '%s\n' "$version" >"$TOOLS_STAMP_DIR/$name.stamp"
        ;;
      runtime)
        # Go only builds: fetched only when a binary of the role is not among the origin's.
        [[ "$name" != v0.0.1-go* || "$missing_binary" == 1 ]] || continue
        [[ ! -f "$TOOLS_ARCHIVE_DIR/$name" ]] || continue
        fetch_artifact "$name" "$sha" "$TALLY_RUNTIME_ARCHIVES/$name" || continue
        ;;
      bundle)
        if [[ "$name" == dashboard.tar.gz && "$JOIN_ROLE" == control ]]; then
          if [[ "$version" != "$(dashboard_source_hash)" ]]; then
            log "    dashboard.tar.gz: built from other sources than this checkout's ($version): built here"
            continue
          fi
          if [[ "$(cat "$TALLY_REPO/apps/dashboard/dist/.source" 2>/dev/null)" == "$version" ]]; then
            log "    apps/dashboard/dist: present ($version)"
            continue
          fi
          fetch_artifact "$name" "$sha" "$scratch/$name" || continue
          install_dashboard "$scratch/$name" "$version"
          fetched=$((fetched + 1)) fetched_bytes=$((fetched_bytes + bytes))
          continue
        fi
        [[ "$name" == dist.tar.gz ]] || continue
        if [[ "$version" != "$(bundle_source_hash)" ]]; then
          log "    dist.tar.gz: built from other sources than this checkout's ($version): built here"
          continue
        fi
        if [[ "$(cat "$TALLY_REPO/dist/.source" 2>/dev/null)" == "$version" && -f "$TALLY_REPO/dist/agent.js" ]]; then
          log "    dist/: present ($version)"
          continue
        fi
        fetch_artifact "$name" "$sha" "$scratch/$name" || continue
        install_bundle "$scratch/$name" "$version"
        ;;
    esac
    fetched=$((fetched + 1)) fetched_bytes=$((fetched_bytes + bytes))
  done <<<"$entries"
  log "    from the origin: $fetched files, $((fetched_bytes / 1048576)) MB, sha256-checked, in $((SECONDS - started))s"
}

# fetch_artifact NAME SHA256 DEST: streams one file from the origin; 1 (with a warning) when it
# cannot be fetched or its sha256 differs from the manifest's (DEST is then removed).
fetch_artifact() {
  local name="$1" want="$2" dest="$3" got
  if ! curl -fsS -m 1800 -H "Authorization: Bearer $JOIN_TOKEN" -o "$dest" "$JOIN_URL/v1/nodes/artifacts/$name"; then
    warn "could not fetch $name from the origin: it is built here"
    rm -f "$dest"
    return 1
  fi
  got="$(sha256sum "$dest" | cut -d' ' -f1)"
  if [[ "$got" != "$want" ]]; then
    warn "$name from the origin has sha256 $got, its manifest says $want: refused, it is built here"
    rm -f "$dest"
    return 1
  fi
  log "    $name: fetched from the origin, sha256 $want"
}

# install_bundle TARBALL HASH: the origin's dist/ replaces this checkout's (marked with HASH in
# dist/.source, which install_join_deps reads).
install_bundle() {
  install_tarball "$1" "$2" "$TALLY_REPO/dist" --strip-components=1
}

# install_dashboard TARBALL HASH: the origin's dashboard build replaces this checkout's (marked with
# HASH in apps/dashboard/dist/.source, which install_control_deps reads).
install_dashboard() {
  install_tarball "$1" "$2" "$TALLY_REPO/apps/dashboard/dist"
}

# install_tarball TARBALL HASH DIR [TAR ARGS...]: TARBALL unpacked beside DIR, marked with HASH in
# .source, then swapped in by rename.
install_tarball() {
  local tarball="$1" hash="$2" dir="$3"
  shift 3
  local next="$dir.next.$$"
  rm -rf "$next"
  mkdir -p "$next"
  tar -xzf "$tarball" -C "$next" --no-same-owner "$@"
  printf '%s\n' "$hash" >"$next/.source"
  rm -rf "$dir.old.$$"
  if [[ -e "$dir" ]]; then mv "$dir" "$dir.old.$$"; fi
  mv "$next" "$dir"
  rm -rf "$dir.old.$$" "$tarball"
}

# remove_join_artifacts: the scratch directory of fetch_origin_artifacts.
remove_join_artifacts() {
  [[ -z "${JOIN_ARTIFACTS_SCRATCH:-}" ]] || rm -rf "$JOIN_ARTIFACTS_SCRATCH"
}
