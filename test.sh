#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it (.ci/run calls exactly this).
#  1. installs the Debian packages if any is missing (apt-get; sudo when not root),
#  2. builds Release and runs every CTest test,
#  3. builds with AddressSanitizer + UndefinedBehaviorSanitizer and runs every test again,
#  4. builds the libFuzzer targets (clang + ASan + UBSan) and runs each for $DECBENCH_FUZZ_SECONDS
#     (default 30) from the seed corpora step 2's replay tests wrote (tests/fuzz_smoke.sh),
#  5. runs the CI regression gate (bench/ci_gate.sh) when it exists.
# Data: ../shared beside the checkout, or $DECBENCH_SHARED.
set -euo pipefail
cd "$(dirname "$0")"
bash ./deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== Release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" 2>&1 | grep -E "warning|error" && { echo "build is not warning-clean"; exit 1; } || true
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDECBENCH_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    DECBENCH_SANITIZED=1 ctest --test-dir build-asan --output-on-failure -j"$jobs"

echo "== libFuzzer targets, ${DECBENCH_FUZZ_SECONDS:-30} s each (clang + ASan + UBSan)"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDECBENCH_FUZZ=ON \
    -DDECBENCH_NATIVE=OFF -DDECBENCH_FUZZ_SECONDS="${DECBENCH_FUZZ_SECONDS:-30}" \
    -DDECBENCH_FUZZ_SEEDS="$PWD/build/tests" >/dev/null
fuzz_targets=$(for f in tests/fuzz_*.c; do basename "$f" .c; done)
# shellcheck disable=SC2086 # one --target per name
cmake --build build-fuzz -j"$jobs" --target $fuzz_targets >/dev/null
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$jobs"

if [ -f bench/ci_gate.sh ]; then
    echo "== CI regression gate"
    bash bench/ci_gate.sh build/decbench
fi
