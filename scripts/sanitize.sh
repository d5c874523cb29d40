#!/usr/bin/env bash
# The sanitizer runs of issue 14 (docs/sanitizers.md has the results).
#   scripts/sanitize.sh tsan [TEST...]     the threaded test programs (or those named) under
#                                          ThreadSanitizer (build/tsan)
#   scripts/sanitize.sh asan [LABEL...]    ctest under AddressSanitizer + UBSan (build/debug-asan):
#                                          every test, or only those ctest labels (engine, profiler, ...)
#   scripts/sanitize.sh all                both, whole suite
# Exits non-zero when a test fails or any sanitizer reports, in the tests or in a
# program they start (every report is written to build/<preset>/sanitizer-logs/).
# Builds run under nice (AMPSCOPE_NICE, default 19) with AMPSCOPE_JOBS (default 2) jobs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nice_level="${AMPSCOPE_NICE:-19}"
jobs="${AMPSCOPE_JOBS:-2}"
log() { printf '\033[1m[sanitize]\033[0m %s\n' "$*" >&2; }

# The test programs with threads of their own: trainer and event queues, the
# run follower, the profiler worker and session writer, the CUPTI record
# processing fed by the synthetic source, the comparison runner, the GUI controllers.
TSAN_TESTS="test_trainer test_run_follower test_config_optim
  test_store_roundtrip test_store_robustness test_cupti_records test_cupti_source
  test_profiler_session test_op_observer test_comparison_runner test_profiler_truth
  test_ui_live_run test_ui_comparison test_ui_sessions"

# LibTorch and libgomp are not instrumented: one OpenMP thread (TSan cannot see
# libgomp's barriers) and one intra-op thread; the engine's own threads stay.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 QT_QPA_PLATFORM=offscreen

configure() { AMPSCOPE_PRESET="$1" "$here/scripts/dev.sh" configure; }

build_targets() {
  local dir="$1"; shift
  nice -n "$nice_level" cmake --build "$here/$dir" -j "$jobs" ${1:+--target "$@"}
}

# Reports of every process (tests and the programs they start) as files: a test
# that expects a child to fail must not hide a sanitizer report in it.
reports_in() {
  local logs="$1"
  if compgen -G "$logs/*" >/dev/null; then
    log "sanitizer reports in $logs:"
    grep -h -E "^(WARNING|ERROR|SUMMARY): |runtime error" "$logs"/* | sort | uniq -c >&2 || true
    return 0
  fi
  return 1
}

# The deliberate bug of tests/sanitizers/sanitizer_canary.cpp must be reported
# (exit non-zero, a report file): the sanitizer is on and its reports are caught.
check_canary() {
  local dir="$1" logs="$2"
  if "$here/$dir/tests/sanitizer_canary" 2>/dev/null || ! compgen -G "$logs/*" >/dev/null; then
    log "the canary's deliberate bug was not reported: is $dir built with its sanitizer?"
    return 1
  fi
  log "canary: its deliberate bug was reported, as it must be"
  rm -f "$logs"/*
}

run_tsan() {
  local tests="${*:-$TSAN_TESTS}"
  configure tsan
  local dir=build/tsan
  # shellcheck disable=SC2086
  build_targets "$dir" sanitizer_canary $tests
  local logs="$here/$dir/sanitizer-logs"
  rm -rf "$logs" && mkdir -p "$logs"
  export TSAN_OPTIONS="suppressions=$here/tests/sanitizers/tsan.supp:second_deadlock_stack=1:history_size=4:log_path=$logs/tsan"
  check_canary "$dir" "$logs"
  local failed=0 t start
  for t in $tests; do
    start=$(date +%s)
    if (cd "$here/$dir/tests" && timeout 1200 "./$t" --gtest_brief=1 >"$logs/../$t.tsan.out" 2>&1); then
      log "$t: passed ($(sed -n 's/^\[  PASSED  \] //p' "$logs/../$t.tsan.out" | head -1) $(($(date +%s) - start)) s)"
    else
      log "$t: FAILED (exit $?; $dir/$t.tsan.out)"
      tail -20 "$logs/../$t.tsan.out" >&2
      failed=1
    fi
  done
  if reports_in "$logs"; then failed=1; fi
  return $failed
}

run_asan() {
  configure debug-asan
  local dir=build/debug-asan targets=() labels=() l src
  # One regex: ctest ANDs repeated -L options.
  if [ $# -gt 0 ]; then labels=(-L "^($(IFS='|'; echo "$*"))\$"); fi
  for l in "$@"; do
    for src in "$here"/tests/"$l"/test_*.cpp; do [ -e "$src" ] && targets+=("$(basename "$src" .cpp)"); done
  done
  [ ${#targets[@]} -eq 0 ] || targets+=(sanitizer_canary)
  build_targets "$dir" "${targets[@]}"
  local logs="$here/$dir/sanitizer-logs"
  rm -rf "$logs" && mkdir -p "$logs"
  # exitcode=86: a test that expects a program to exit 1 must not pass on an ASan abort.
  # LSan suppressions: tests/sanitizers/lsan.supp says what and why.
  export ASAN_OPTIONS="exitcode=86:detect_leaks=1:log_path=$logs/asan"
  export LSAN_OPTIONS="suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
  check_canary "$dir" "$logs"
  local failed=0
  nice -n "$nice_level" ctest --test-dir "$here/$dir" -j "$jobs" --output-on-failure "${labels[@]}" || failed=1
  if reports_in "$logs"; then failed=1; fi
  return $failed
}

what="${1:-}"; shift || true
case "$what" in
  tsan) run_tsan "$@" ;;
  asan) run_asan "$@" ;;
  all) status=0; run_tsan || status=1; run_asan || status=1; exit $status ;;
  *) sed -n '2,10p' "$0"; exit 2 ;;
esac
