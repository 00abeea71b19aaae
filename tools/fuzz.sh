#!/bin/bash
# Fuzzes the model parsers for a while and keeps what breaks them.
#
#   tools/fuzz.sh [-b BUILD] [-m MINUTES] [-j JOBS] [TARGET...]
#
# BUILD: a build configured with -Dfuzzing=enabled (default build-fuzz; see
# docs/fuzzing.md); MINUTES per target (default 10); JOBS targets at once
# (default 1); TARGETs: cascade-xml waldboost-xml registry tuning xml (default:
# every fuzz-* target built).  Each runs at the lowest priority (nice 19) from
# its seeds, its kept regressions and the corpus of earlier runs
# (BUILD/fuzz-work/TARGET/corpus), restarted after a crash until its minutes
# are spent.  New crash, leak, timeout and out-of-memory inputs are copied to
# tests/data/fuzz-regressions/TARGET/ (to fix, then commit as regression
# cases).  FUZZ_TIMEOUT, FUZZ_RSS_MB, FUZZ_ARGS: see tests/fuzz/run.sh.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=build-fuzz minutes=10 jobs=1
while getopts b:m:j:h opt; do
  case $opt in
    b) build=$OPTARG ;;
    m) minutes=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
build=$(cd "$build" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for exe in "$build"/tests/fuzz/fuzz-*; do
    name=${exe##*/fuzz-}
    case $name in replay-* | make-*) continue ;; esac
    [ -x "$exe" ] && targets+=("$name")
  done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets in $build (configure with -Dfuzzing=enabled)" >&2; exit 1; }

fuzz_one() {
  local t=$1 work=$build/fuzz-work/$1 keep=$src/tests/data/fuzz-regressions/$1
  local end=$((SECONDS + minutes * 60)) runs=0 execs=0 left n
  mkdir -p "$work"
  : > "$work/log"
  while left=$((end - SECONDS)); [ "$left" -gt 0 ]; do
    runs=$((runs + 1))
    "$src/tests/fuzz/run.sh" "$build/tests/fuzz/fuzz-$t" "$left" "$work" "$src/tests/fuzz/corpus/$t" \
      "$src/tests/fuzz/$t.dict" "$keep" >> "$work/log" 2>&1 || true
    n=$(grep -a 'stat::number_of_executed_units' "$work/log" | tail -1 | awk '{print $2}')
    execs=$((execs + ${n:-0}))
    for f in "$work"/crashes/*; do
      [ -e "$f" ] || continue
      mkdir -p "$keep"
      [ -e "$keep/${f##*/}" ] || { cp "$f" "$keep/"; echo "$t: kept $keep/${f##*/}"; }
      rm -f "$f"
    done
  done
  local last
  last=$(grep -a -E '^#[0-9]+.*cov: ' "$work/log" | tail -1)
  printf '%-14s %4d min %3d run(s) %11d execs  %s\n' "$t" "$minutes" "$runs" "$execs" \
    "$(echo "$last" | grep -o -E 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*')" | tee -a "$build/fuzz-work/summary"
}

mkdir -p "$build/fuzz-work"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  fuzz_one "$t" &
done
wait
