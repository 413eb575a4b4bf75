#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it (.ci/run calls exactly this).
#  1. installs the Debian packages if any is missing (apt-get; sudo when not root),
#  2. builds Release and runs every CTest test (the full property grids),
#  3. builds with AddressSanitizer + UndefinedBehaviorSanitizer (clang), the libFuzzer targets in
#     the same tree, and runs every test again,
#  4. runs each fuzz target for $DECBENCH_FUZZ_SECONDS (default 12) from the seed corpora step
#     2's replay tests wrote (tests/fuzz_smoke.sh),
#  5. runs the CI regression gate (bench/ci_gate.sh) when it exists,
# then prints each stage's wall time (also when a stage fails: the table names it).
# Data: ../shared beside the checkout, or $DECBENCH_SHARED.
#
# Budget: CI gives 2 cores and 90 minutes; the suite should stay under 30. What keeps it there:
#  - the sanitizer build uses clang, not gcc: gcc's ASan alone took 460 s of one core on
#    model/kernels/kernels_avx512.c, clang's 115 s;
#  - one clang tree builds the sanitizer tests and the fuzz targets, the SIMD kernel files
#    compiled once for both (a fresh clone ran the whole suite in 1446-1712 s on the 2-core VM,
#    the upper figure with the learned drafters, batches and train tests;
#    with a separate fuzz build it took 1811-1851 s);
#  - the SIMD kernel files go without UBSan's pointer-overflow check in both clang builds and
#    without the fuzzer's coverage in the fuzz build (CMakeLists.txt gives the measured seconds:
#    that check alone made kernels_avx512.c a 13-minute compile); they keep ASan and the rest
#    of UBSan, and everything else keeps every check;
#  - under the sanitizers kernels_avx512.c compiles at -O1 (123 s of one core against 370 s at
#    -O2; CMakeLists.txt): a fresh clone then ran the suite in 1578 s (sanitizer build 600 s),
#    against 1769 s (682 s) the hour before, and in 1743 s in a slower hour on the same VM
#    (each of the 8 longest sanitizer tests 5-31% slower than in the 1578 s run): there the
#    margin to 30 minutes is thin;
#  - the train tests (PyTorch references, label `train`) run in the Release stage only, and the
#    fuzz targets 12 s each (20 took 129 s of the 1931 s a fresh clone took on a Zen 5 VM);
#  - the CLI tests call Debian's python3, not a version manager's shim that may come first on the
#    PATH (tests/lib_cli.sh: pyenv's took 0.7 s a call), and every test runs with
#    OPENBLAS_NUM_THREADS=1, so decbench does not restart itself at each call (tests/CMakeLists.txt);
#    with them a fresh clone ran the whole suite in 1471 s (Release tests 275 s, sanitizer tests
#    620 s; before them 1739 s: 453 and 732 s);
#  - under the sanitizers (DECBENCH_SANITIZED) the heaviest property grids of the decoder and
#    forward-pass tests visit one point in k (tests/testutil.h test_keep; each test's header
#    says what), every kind of point still visited; the Release stage runs them all.
set -euo pipefail
cd "$(dirname "$0")"

# Stage clock: `stage NAME` closes the running stage and opens NAME; on exit, pass or fail, the
# table of seconds is printed and a failure names its stage. The exit status is kept.
stage_names=() stage_secs=() stage_now="" stage_t0=$SECONDS
stage() {
    if [ -n "$stage_now" ]; then
        stage_names+=("$stage_now") stage_secs+=($((SECONDS - stage_t0)))
    fi
    stage_now=$1 stage_t0=$SECONDS
    [ -z "$1" ] || echo "== $1"
}
stage_summary() {
    local rc=$1 failed=$stage_now
    stage ""
    echo "== stage times (s)"
    for i in "${!stage_names[@]}"; do printf '%6d  %s\n' "${stage_secs[$i]}" "${stage_names[$i]}"; done
    printf '%6d  total\n' "$SECONDS"
    [ "$rc" -eq 0 ] || echo "test.sh: FAILED in stage '$failed' (exit $rc)"
    exit "$rc"
}
trap 'stage_summary $?' EXIT

stage "dependencies"
bash ./deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

stage "Release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" 2>&1 | grep -E "warning|error" && { echo "build is not warning-clean"; exit 1; } || true

stage "Release tests"
ctest --test-dir build --output-on-failure -j"$jobs"

# A build's output is kept in its folder and shown only when it fails.
quiet_build() { # DIR [cmake --build arguments]
    local dir=$1
    shift
    cmake --build "$dir" -j"$jobs" "$@" >"$dir/build.log" 2>&1 || { tail -60 "$dir/build.log"; return 1; }
}

# One clang tree serves the sanitizer tests and the libFuzzer targets: the SIMD kernel files
# (three quarters of its compile time) are compiled once for both (CMakeLists.txt).
stage "sanitizer and libFuzzer build (clang, ASan + UBSan)"
CC=clang cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDECBENCH_SANITIZE=ON \
    -DDECBENCH_FUZZ=ON -DDECBENCH_FUZZ_SECONDS="${DECBENCH_FUZZ_SECONDS:-12}" \
    -DDECBENCH_FUZZ_SEEDS="$PWD/build/tests" >/dev/null
quiet_build build-asan
if grep -E "warning:" build-asan/build.log; then echo "clang build is not warning-clean"; exit 1; fi

stage "sanitizer tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    DECBENCH_SANITIZED=1 ctest --test-dir build-asan -LE "fuzz|train" --output-on-failure -j"$jobs"

stage "libFuzzer runs, ${DECBENCH_FUZZ_SECONDS:-12} s each"
ctest --test-dir build-asan -L fuzz --output-on-failure -j"$jobs"

if [ -f bench/ci_gate.sh ]; then
    stage "CI regression gate"
    bash bench/ci_gate.sh build/decbench
fi
stage ""
