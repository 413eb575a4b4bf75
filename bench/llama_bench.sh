#!/usr/bin/env bash
# bench/llama_bench.sh: decbench against llama.cpp's llama-bench on the same GGUF files, as
# ratios of back-to-back pairs measured in one run. The targets: greedy decoding and passes of
# 8 and 64 rows at least at llama-bench's speed, one-row passes at 90% of the read bandwidth.
#
#   LLAMA_BENCH=/path/to/llama-bench bash bench/llama_bench.sh [BUILD_DIR]
#
# The project neither vendors nor builds llama.cpp: point LLAMA_BENCH at a llama-bench you
# built (e.g. cmake -DGGML_NATIVE=ON, OpenMP on). Without it the script says so and exits 2.
#
# For each preset in $PRESETS (default "110M 1.1B": random weights of the real shapes, written
# once to $CACHE by bench/cache.sh), each weight type in $TYPES (default "f32 f16 q8_0 Q4_K_M
# Q6_K": `decbench convert --type`, the last two llama-quantize's mixes), each thread count in
# $THREADS_LIST (default
# "1 $(nproc)") and each decbench kernel mode in $KERNELS (default "auto": exact-int8 for the
# quantized files, exact for the float ones, as decbench picks it), $PAIRS pairs
# (default 3), each pair run back to back:
#   decbench: greedy decode tok/s (`generate -n $N --stats`, decode only, N=128 after BOS:
#             llama-bench's tg$N also decodes N tokens from an empty context), rows/s of one
#             pass of T=8 and T=64 rows from an empty context (`cost --rows 8,64 --context 0
#             --logits last`: like llama-bench's pp, which asks for the last row's logits only),
#             and the T=1 pass's weight GB/s beside the read bandwidth the same `cost` run
#             probes just before it (`cost --rows 1`), and the same share measured interleaved
#             (`--bandwidth-rounds $ROUNDS`: rounds of one read and one-row passes as long, the
#             median of the rounds' shares; harness/measure.h says why);
#   llama-bench -p 8,64 -n $N -r 1 -o csv: tg$N, pp8 and pp64 tokens/s.
# Each figure is the median over the pairs of decbench / llama-bench (>= 1.00 is the target),
# printed with the medians of the two speeds. The raw llama-bench CSV of every pair is kept in
# $OUT (default $CACHE/llama_bench) for `decbench plot --kind cost --llama-csv FILE`.
# On a shared machine, speeds move by 20-40% within minutes: only the ratios of pairs mean
# anything, and the pairs' spread (min..max, printed) says how noisy the run was.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
if [ -z "${LLAMA_BENCH:-}" ] || [ ! -x "$LLAMA_BENCH" ]; then
    echo "set LLAMA_BENCH=/path/to/llama-bench (a llama.cpp build of your own; this project does not build it)"
    exit 2
fi
PRESETS=${PRESETS:-110M 1.1B}
TYPES=${TYPES:-f32 f16 q8_0 Q4_K_M Q6_K}
THREADS_LIST=${THREADS_LIST:-1 $(nproc)}
KERNELS=${KERNELS:-auto}
PAIRS=${PAIRS:-3}
N=${N:-128}
ROUNDS=${ROUNDS:-10}
# The vocabulary generate reads BOS from: a cached file written by `synth --type MIX` has none
# (tokenizer model 'none', which llama-bench accepts); the presets have 32000 tokens.
TOK=${TOKENIZER:-${DECBENCH_MODELS:-${DECBENCH_SHARED:-../shared}/models}/tok32000.bin}
source bench/cache.sh
source bench/llama_csv.sh
OUT=${OUT:-$CACHE/llama_bench}
mkdir -p "$OUT"

# gguf PRESET TYPE: the converted file, made on first use.
gguf() {
    local g
    g=$(gguf_name "$1" "$2")
    [ -f "$g" ] || $B convert --model "$(synth_cached "$1")" --type "$2" -o "$g" >&2
    echo "$g"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f..%.2f", lo, hi }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }'; }

echo "# llama_bench.sh: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# llama-bench: $LLAMA_BENCH; decbench: $B ($(git rev-parse --short HEAD 2>/dev/null || echo ?))"
printf "%-6s %-5s %-3s %-11s | %-26s | %-26s | %-26s | %s\n" preset type thr kernels \
    "tg$N tok/s dec/llama ratio" "pp8 rows/s dec/llama ratio" "pp64 rows/s dec/llama ratio" \
    "T=1 of probe: interleaved | before (GB/s pass/probe)"
for preset in $PRESETS; do
    for t in $TYPES; do
        g=$(gguf "$preset" "$t")
        for th in $THREADS_LIST; do
            for km in $KERNELS; do
                tg=() p8=() p64=() dtg=() dp8=() dp64=() ltg=() lp8=() lp64=() bwr=() gbs=() ilv=()
                for i in $(seq "$PAIRS"); do
                    d_tg=$($B generate --model "$g" --tokenizer "$TOK" -n "$N" --threads "$th" --kernels "$km" --stats 2>&1 >/dev/null |
                        awk '/^speed/ { print $2 }')
                    cost=$($B cost --model "$g" --rows 8,64 --context 0 --logits last --threads "$th" \
                        --kernels "$km" --no-bandwidth --seconds 500ms)
                    d_p8=$(awk '$1 == 8 { print 8000 / $2 }' <<<"$cost")
                    d_p64=$(awk '$1 == 64 { print 64000 / $2 }' <<<"$cost")
                    one=$($B cost --model "$g" --rows 1 --context 0 --threads "$th" --kernels "$km" --seconds 500ms \
                        --bandwidth-rounds "$ROUNDS")
                    ilv+=("$(sed -n 's/.*interleaved.*: \([0-9.]*\)% (rounds.*/\1/p' <<<"$one")")
                    bw=$(sed -n 's/.*memory read bandwidth \([0-9.]*\) GB\/s.*/\1/p' <<<"$one")
                    g1=$(awk '$1 == 1 { print $5 }' <<<"$one")
                    kres=$(sed -n 's/.* \([a-z0-9-]*\) kernels,.*/\1/p' <<<"$one") # what auto chose
                    csv=$OUT/${preset}_${t}_t${th}_pair$i.csv
                    "$LLAMA_BENCH" -m "$g" -p 8,64 -n "$N" -t "$th" -r 1 -o csv >"$csv" 2>/dev/null
                    l_tg=$(llama_ts "$csv" 0 "$N") l_p8=$(llama_ts "$csv" 8 0) l_p64=$(llama_ts "$csv" 64 0)
                    dtg+=("$d_tg") dp8+=("$d_p8") dp64+=("$d_p64") ltg+=("$l_tg") lp8+=("$l_p8") lp64+=("$l_p64")
                    tg+=("$(ratio "$d_tg" "$l_tg")") p8+=("$(ratio "$d_p8" "$l_p8")") p64+=("$(ratio "$d_p64" "$l_p64")")
                    bwr+=("$(ratio "$g1" "$bw")") gbs+=("$g1/$bw")
                done
                col() { # speeds-dec speeds-llama ratios
                    printf "%7.1f/%-7.1f %5.2fx (%s)" "$(printf '%s\n' $1 | median)" \
                        "$(printf '%s\n' $2 | median)" "$(printf '%s\n' $3 | median)" "$(printf '%s\n' $3 | minmax)"
                }
                printf "%-6s %-5s %-3s %-11s | %s | %s | %s | %3.0f%% (%s) | %3.0f%% (%s)\n" "$preset" "$t" "$th" "$kres" \
                    "$(col "${dtg[*]}" "${ltg[*]}" "${tg[*]}")" "$(col "${dp8[*]}" "${lp8[*]}" "${p8[*]}")" \
                    "$(col "${dp64[*]}" "${lp64[*]}" "${p64[*]}")" \
                    "$(printf '%s\n' "${ilv[@]}" | median)" "${ilv[*]}" \
                    "$(printf '%s\n' "${bwr[@]}" | median | awk '{ print 100 * $1 }')" "${gbs[*]}"
            done
        done
    done
done
echo "# ratios: medians over $PAIRS back-to-back pairs (decbench then llama-bench), range in brackets;"
echo "# T=1 of probe, interleaved: the median over the pairs of each pair's median of $ROUNDS rounds (read, then"
echo "#   one-row passes as long), each pair's in brackets; before: weight bytes / mean T=1 pass over the"
echo "#   best of 5 reads probed just before the passes, in the same process"
