#!/usr/bin/env bash
# bench/speed.sh: the runtime's speed figures, all measured in one run on one machine.
#
#   bash bench/speed.sh [BUILD_DIR]          (default build/; run ./setup.sh first)
#
# 1. greedy tokens/s (decode only, 256 new tokens after BOS) for stories260K and the synthetic
#    15M and 110M presets (random weights of the real shapes, written once to $CACHE);
# 2. the cost curve of the 110M preset: forward latency vs rows per pass T = 1..128 with the
#    achieved GFLOP/s and the weight GB/s, for the exact kernels and for OpenBLAS sgemm
#    (--kernels blas) on the same shapes, and the ratio at T=64 (target: exact >= 60%);
# 3. the machine's streaming-read bandwidth (the T=1 bound).
# Optional: RUNC=/path/to/llama2.c/run (built by you, -Ofast -march=native -fopenmp) adds
# run.c's tokens/s on the same files and threads (OMP_NUM_THREADS=$THREADS) for comparison.
# Timings are noisy on shared machines: compare figures from the same run only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
THREADS=${THREADS:-$(nproc)}
N=${N:-256}
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
shared=${DECBENCH_SHARED:-../shared}
MODELS=${DECBENCH_MODELS:-$shared/models}
source bench/cache.sh
m15=$(synth_cached 15M) m110=$(synth_cached 110M)

greedy_tps() { # model tokenizer -> decode tok/s
    $B generate --model "$1" --tokenizer "$2" -n "$N" --threads "$THREADS" --stats 2>&1 >/dev/null |
        awk '/^speed/ {print $2}'
}
runc_tps() {
    [ -n "${RUNC:-}" ] || { echo "-"; return; }
    OMP_NUM_THREADS=$THREADS "$RUNC" "$1" -z "$2" -t 0 -n "$N" 2>&1 | sed -n 's/.*achieved tok\/s: \([0-9.]*\).*/\1/p'
}

echo "== greedy decoding, $N new tokens, $THREADS threads (tok/s, decode only)"
printf "%-14s %12s %12s\n" model decbench run.c
for m in "stories260K:$MODELS/stories260K.bin:$MODELS/tok512.bin" \
         "synth-15M:$m15:$MODELS/tok32000.bin" \
         "synth-110M:$m110:$MODELS/tok32000.bin"; do
    IFS=: read -r name file tokf <<<"$m"
    printf "%-14s %12s %12s\n" "$name" "$(greedy_tps "$file" "$tokf")" "$(runc_tps "$file" "$tokf")"
done

echo
echo "== cost curve, synth-110M, $THREADS threads, context 128"
$B cost --model "$m110" --rows 1,2,4,8,16,32,64,128 --threads "$THREADS" | tee "$CACHE/cost_exact.txt"
$B cost --model "$m110" --rows 1,2,4,8,16,32,64,128 --threads "$THREADS" --kernels blas --no-bandwidth | tee "$CACHE/cost_blas.txt"
exact64=$(awk '$1 == 64 {print $4}' "$CACHE/cost_exact.txt")
blas64=$(awk '$1 == 64 {print $4}' "$CACHE/cost_blas.txt")
echo
echo "T=64: exact $exact64 GFLOP/s, OpenBLAS $blas64 GFLOP/s: exact reaches $(awk -v a="$exact64" -v b="$blas64" 'BEGIN {printf "%.0f", 100 * a / b}')% (target >= 60%)"
