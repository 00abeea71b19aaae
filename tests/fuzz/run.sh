#!/bin/sh
# Runs one libFuzzer target for a while, at the lowest priority:
#   run.sh TARGET SECONDS WORKDIR SEEDS DICT [MORE_CORPUS_DIRS...]
# New inputs go to WORKDIR/corpus (the seeds and the other directories are
# only read); crash, leak, timeout and out-of-memory inputs to
# WORKDIR/crashes/.  Exits non-zero when libFuzzer found something.
# FUZZ_TIMEOUT (seconds per input, default 5), FUZZ_RSS_MB (default 2048) and
# FUZZ_ARGS (more libFuzzer options) change the limits.
set -eu
[ $# -ge 5 ] || { echo "usage: $0 TARGET SECONDS WORKDIR SEEDS DICT [CORPUS_DIR...]" >&2; exit 2; }
target=$1 seconds=$2 work=$3 seeds=$4 dict=$5
shift 5
mkdir -p "$work/corpus" "$work/crashes"
dirs="$work/corpus $seeds"
for d in "$@"; do
  [ -d "$d" ] && dirs="$dirs $d"
done
# shellcheck disable=SC2086  # the corpus directories are separate words
exec nice -n 19 "$target" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-5}" \
  -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -dict="$dict" -artifact_prefix="$work/crashes/" \
  -print_final_stats=1 ${FUZZ_ARGS:-} $dirs
