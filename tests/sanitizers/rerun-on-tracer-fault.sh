#!/bin/sh
# The asan test setup's wrapper (tests/meson.build): runs a test and, where it
# failed only because LeakSanitizer's own stop-the-world tracer crashed at the
# process's exit ("Tracer caught signal 11" then "LeakSanitizer has
# encountered a fatal error": a fault of the sanitizer runtime when a thread
# ends while it suspends them all, seen now and then in processes with
# OpenCL driver threads, not a finding of the test), runs it again, at most
# twice more.  A leak report, an AddressSanitizer or UndefinedBehaviorSanitizer
# error or any other failure is returned as it is.
log=$(mktemp "${TMPDIR:-/tmp}/gpudetect-test-stderr.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
try=1
while :; do
  "$@" 2>"$log"
  status=$?
  cat "$log" >&2
  [ "$status" -ne 0 ] || exit 0
  [ "$try" -lt 3 ] || exit "$status"
  grep -q 'Tracer caught signal' "$log" && grep -q 'LeakSanitizer has encountered a fatal error' "$log" || exit "$status"
  if grep -q -e 'ERROR: LeakSanitizer: detected memory leaks' -e 'ERROR: AddressSanitizer' -e 'runtime error:' "$log"; then
    exit "$status"
  fi
  echo "rerun-on-tracer-fault.sh: LeakSanitizer's tracer crashed at exit (run $try); running the test again" >&2
  try=$((try + 1))
done
