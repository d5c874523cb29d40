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
  test_ui_live_run test_ui_comparison test_ui_sessions test_ui_thread_handoff"

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
# One line is not a report: the note ASan writes when, as allocator_may_return_null
# asks, it lets an impossible allocation fail (counted, not hidden).
expected_note='^==[0-9]+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes$'
reports_in() {
  local logs="$1" f found=1 notes=0
  for f in "$logs"/*; do
    [ -e "$f" ] || continue
    notes=$((notes + $(grep -c -E "$expected_note" "$f" || true)))
    if grep -v -q -E "$expected_note" "$f"; then found=0; fi
  done
  [ $notes -eq 0 ] || log "$notes allocation(s) failed on purpose (out-of-memory tests), as allocator_may_return_null asks"
  if [ $found -eq 0 ]; then
    log "sanitizer reports in $logs:"
    grep -h -v -E "$expected_note" "$logs"/* | grep -E "^(WARNING|ERROR|SUMMARY): |runtime error" | sort | uniq -c >&2 || true
  fi
  return $found
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
  local base_options="$TSAN_OPTIONS" options
  for t in $tests; do
    start=$(date +%s)
    # Qt is not built with TSan either, and Qt 6's QMutex is a futex TSan cannot
    # see: accesses Qt makes through interceptors (its malloc/free/memmove, e.g. of
    # a QRunnable or an event handed between threads) are left out for the GUI
    # programs. Accesses by ampscope's own code are still all checked.
    options="$base_options"
    case "$t" in test_ui_*) options="$options:ignore_noninstrumented_modules=1" ;; esac
    if (cd "$here/$dir/tests" && TSAN_OPTIONS="$options" timeout 1200 "./$t" --gtest_brief=1 >"$logs/../$t.tsan.out" 2>&1); then
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
  local dir=build/debug-asan targets=() l src
  for l in "$@"; do
    for src in "$here"/tests/"$l"/test_*.cpp; do [ -e "$src" ] && targets+=("$(basename "$src" .cpp)"); done
  done
  [ ${#targets[@]} -eq 0 ] || targets+=(sanitizer_canary)
  build_targets "$dir" "${targets[@]}"
  local logs="$here/$dir/sanitizer-logs"
  rm -rf "$logs" && mkdir -p "$logs"
  # exitcode=86: a test that expects a program to exit 1 must not pass on an ASan abort.
  # LSan suppressions: tests/sanitizers/lsan.supp says what and why.
  # allocator_may_return_null: an impossible allocation (the bad-input table's 8 TB
  # batch) fails as glibc's does, so LibTorch's own out-of-memory error is tested.
  export ASAN_OPTIONS="exitcode=86:detect_leaks=1:allocator_may_return_null=1:log_path=$logs/asan"
  export LSAN_OPTIONS="suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
  check_canary "$dir" "$logs"
  # The Python capture label runs on its own (below); `selection` picks the rest.
  local failed=0 run_python=0 others=() selection=()
  for l in "$@"; do
    if [ "$l" = python_capture ]; then run_python=1; else others+=("$l"); fi
  done
  if [ $# -eq 0 ]; then
    run_python=1 selection=(-LE '^python_capture$')
  elif [ ${#others[@]} -gt 0 ]; then
    selection=(-L "^($(IFS='|'; echo "${others[*]}"))\$")  # one regex: ctest ANDs repeated -L
  fi
  # Left out under ASan: the build checks that load the Python module into a plain Python
  # (its bindings into LibTorch, its CUDA kernels). An ASan-built module loads only with the
  # runtime preloaded, which changes the very bindings they check; they run in the normal suite.
  if [ ${#selection[@]} -gt 0 ]; then selection+=(-E '^build\.python_module_'); fi
  if [ ${#selection[@]} -gt 0 ]; then
    nice -n "$nice_level" ctest --test-dir "$here/$dir" -j "$jobs" --output-on-failure "${selection[@]}" || failed=1
  fi
  if [ $run_python -eq 1 ]; then
    # The Python capture tests load the ASan-built extension into Python, which is
    # not built with ASan: its runtime is preloaded (into every program those tests
    # start: Python, the shell, the CLI). Leak checking is off for them: Python,
    # torch and the shell do not free what they hold at exit. Memory errors and
    # UBSan stay on; the C++ side's leaks are checked by the other labels. libstdc++ is
    # preloaded after it: Python does not link it, so at the runtime's start there is no
    # __cxa_throw to intercept, and the first C++ exception (torch.compile's CUDA probe on a
    # machine without a GPU, caught by torch) aborts with "real___cxa_throw != 0".
    local cxx
    cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$here/$dir/CMakeCache.txt")
    LD_PRELOAD="$("$cxx" -print-file-name=libasan.so) $("$cxx" -print-file-name=libstdc++.so.6)" \
      ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}" \
      nice -n "$nice_level" ctest --test-dir "$here/$dir" -j "$jobs" --output-on-failure -L '^python_capture$' || failed=1
  fi
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
