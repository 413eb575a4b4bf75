#!/usr/bin/env bash
# bench/model_speed.sh: decoding speed of the files people download (llama-quantize's mixes,
# which are what users run, not the single-type files `convert` writes), all measured in one run.
#
#   bash bench/model_speed.sh [BUILD_DIR]      (default build/)
#
# The models are synthetic (random weights, decbench synth) in the real shapes, written once to
# $CACHE = ${DECBENCH_BENCH_CACHE:-~/.cache/decbench} in llama-quantize's mixes (model/
# convert_mix.c): Q4_0 (q4_0, output q6_k), Q4_K_M (q4_k; output, and attn_v / ffn_down of the
# layers llama.cpp's use_more_bits picks, q6_k; rows that are not whole super-blocks fall back as
# llama-quantize does) and Q6_K. For each preset of $PRESETS (default: 1.1B, TinyLlama's shape,
# and llama-3.1-8b when memory and disk allow; any `decbench synth` preset works, e.g.
# PRESETS=qwen2.5-0.5b) and mix of $MIXES:
#   1. greedy tokens/s (generate -n $N --stats, decode only) and the weight traffic it implies,
#      in each of the $PAIRS pairs below (the median is printed);
#   2. T=1 against the read bandwidth (target >= 90%: greedy decoding is bound by memory, and
#      llama.cpp streams ~100% on these machines), $PAIRS `decbench cost` processes, each
#      measuring it two ways: interleaved
#      (`--bandwidth-rounds $ROUNDS`: rounds of one read of the probe's buffer and one-row passes
#      as long, the median of the rounds' shares; harness/measure.h says why) and as before (the
#      best of 5 reads, then the mean of a second of passes); the median over the processes of each;
#   3. the cost curve, rows 1..64 (context 64): ms per pass and t(T)/t(1);
#   4. with LLAMA_BENCH=/path/to/llama-bench: its tg$N tokens/s on the same file, same threads
#      (synthetic files carry a vocabulary for it: tok32000.bin for 1.1B, Llama 3's for 8B), run
#      right after greedy in each pair (-r 1); the ratio printed is the median of the pairs'
#      ratios. (Pairs, because one greedy run per file can be a single slow one: such a run read
#      as 0.89x where three pairs minutes later gave 1.20-1.32x.)
# Memory: an 8B Q6_K file is 6.6 GB and is read from the page cache; the preset is skipped when
# MemAvailable is under 1.5x its largest file (other work on the machine needs the rest).
# Timings are noisy on shared machines: compare figures from the same run only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
S=${DECBENCH_SHARED:-../shared}
THREADS=${THREADS:-$(nproc)}
N=${N:-64}
PAIRS=${PAIRS:-3}
ROUNDS=${ROUNDS:-20}
ROWS=1,2,4,8,16,32,64
PRESETS=${PRESETS:-1.1B llama-3.1-8b}
MIXES=${MIXES:-Q4_0 Q4_K_M Q6_K}
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
source bench/cache.sh
source bench/llama_csv.sh
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
free_gb() { df -Pk "$CACHE" | awk 'NR == 2 {printf "%d", $4 / 1e6}'; }
avail_gb() { awk '/^MemAvailable/ {printf "%.1f", $2 / 1e6}' /proc/meminfo; }
vocab_for() { # the vocabulary a preset's file carries (llama-bench needs one)
    case $1 in
    llama-3*) echo "$S/tokenizer-vectors/ggml-vocab-llama-bpe.gguf" ;;
    qwen*) echo "$S/tokenizer-vectors/ggml-vocab-qwen2.gguf" ;;
    deepseek-coder*) echo "$S/tokenizer-vectors/ggml-vocab-deepseek-coder.gguf" ;;
    *) echo "$S/models/tok32000.bin" ;;
    esac
}
# synth_gguf PRESET MIX: the cached file, written on first use
synth_gguf() {
    local f=$CACHE/synthgguf_${1}_v$("$B" synth --version)_$2.gguf
    [ -f "$f" ] || "$B" synth --config "$1" --type "$2" --tokenizer "$(vocab_for "$1")" --seed 1 -o "$f" >&2
    echo "$f"
}
rows_ms() { awk -v r="$2" '$1 == r && $8 == 1 {print $2; exit}' "$1"; } # the pass with one row's logits
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

load_start=$(loadavg)
results=()
for preset in $PRESETS; do
    files=()
    for mix in $MIXES; do
        if [ "$(free_gb)" -lt 8 ]; then echo "note: $(free_gb) GB free in $CACHE: skipping $preset $mix"; continue; fi
        files+=("$mix $(synth_gguf "$preset" "$mix")")
    done
    for fm in "${files[@]}"; do
        read -r mix g <<<"$fm"
        gb=$(du -k "$g" | awk '{printf "%.1f", $1 / 1e6}')
        if awk -v a="$(avail_gb)" -v g="$gb" 'BEGIN {exit !(a < 1.5 * g)}'; then
            echo "note: $(avail_gb) GB available, under 1.5 x $gb GB: skipping $preset $mix"
            continue
        fi
        cost=$CACHE/model_cost_${preset}_$mix.txt
        # a one-word prompt: Qwen's and DeepSeek's vocabularies add no BOS, and generate needs a
        # token to start from (decode speed does not depend on it)
        ratios=() ilv=() tpss=() lbs=() tgr=()
        for i in $(seq "$PAIRS"); do
            tps=$($B generate --model "$g" --prompt Once -n "$N" --threads "$THREADS" --stats 2>&1 >/dev/null |
                awk '/^speed/ {print $2}')
            tpss+=("$tps")
            if [ -n "${LLAMA_BENCH:-}" ]; then
                "$LLAMA_BENCH" -m "$g" -p 0 -n "$N" -t "$THREADS" -r 1 -o csv >"$CACHE/model_speed_llama.csv" 2>/dev/null
                lb=$(llama_ts "$CACHE/model_speed_llama.csv" 0 "$N")
                lbs+=("$lb")
                tgr+=("$(awk -v a="$tps" -v b="$lb" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')")
                echo "$preset $mix pair $i: greedy $tps tok/s, llama-bench tg$N $lb tok/s"
            fi
            out=$($B cost --model "$g" --rows 1 --context 64 --threads "$THREADS" --bandwidth-rounds "$ROUNDS")
            bw=$(sed -n 's/.*memory read bandwidth \([0-9.]*\) GB\/s.*/\1/p' <<<"$out")
            gs=$(awk '$1 == 1 {print $5}' <<<"$out")
            ratios+=("$(awk -v g="$gs" -v bw="$bw" 'BEGIN {printf "%.3f", g / bw}')")
            ilv+=("$(sed -n 's/.*interleaved.*: \([0-9.]*\)% (rounds.*/\1/p' <<<"$out" | awk '{printf "%.3f", $1 / 100}')")
            echo "$preset $mix pair $i: read bandwidth $bw GB/s, T=1 pass $gs GB/s of weights; $(grep interleaved <<<"$out" | sed 's/^# //')"
        done
        med=$(printf "%s\n" "${ratios[@]}" | median)
        imed=$(printf "%s\n" "${ilv[@]}" | median)
        tps=$(printf "%s\n" "${tpss[@]}" | median)
        lb=- tg=-
        if [ ${#lbs[@]} -gt 0 ]; then
            lb=$(printf "%s\n" "${lbs[@]}" | median)
            tg=$(printf "%s\n" "${tgr[@]}" | median)
        fi
        $B cost --model "$g" --rows $ROWS --context 64 --threads "$THREADS" --no-bandwidth > "$cost"
        mb=$(sed -n 's/.* weights, \([0-9.]*\) MB$/\1/p' "$cost" | head -1)
        results+=("$preset $mix $mb $tps $med $imed $lb $tg $cost")
    done
done
load_end=$(loadavg)

echo
echo "== model speed: $THREADS threads; load average $load_start at the start, $load_end at the end"
printf "%-13s %-7s %8s %10s %9s %9s %9s %7s %9s %7s %9s %9s\n" model mix MB "greedy t/s" "gen GB/s" \
    "T=1 ms" "T=1/bw il" "before" "llama t/s" "ratio" "t(8)/t(1)" "t(64)/t(1)"
for r in "${results[@]}"; do
    read -r preset mix mb tps med imed lb tg cost <<<"$r"
    t1=$(rows_ms "$cost" 1) t8=$(rows_ms "$cost" 8) t64=$(rows_ms "$cost" 64)
    awk -v p="$preset" -v m="$mix" -v mb="$mb" -v tps="$tps" -v t1="$t1" -v med="$med" -v imed="$imed" \
        -v lb="$lb" -v tg="$tg" -v t8="$t8" -v t64="$t64" 'BEGIN {
        printf "%-13s %-7s %8.1f %10.2f %9.1f %9.2f %8.0f%% %6.0f%% %9s %7s %9.2f %9.2f\n", p, m, mb, tps,
            mb * tps / 1e3, t1, 100 * imed, 100 * med, lb, tg == "-" ? "-" : sprintf("%.2fx", tg),
            t8 / t1, t64 / t1 }'
done
echo "(greedy t/s, llama t/s, ratio: medians over $PAIRS back-to-back pairs; T=1/bw il: interleaved, the"
echo " median over $PAIRS processes of $ROUNDS rounds each; before: best of 5 reads, then a second of passes)"
echo
echo "== cost curves (ms per pass, context 64)"
printf "%-6s" rows
for r in "${results[@]}"; do read -r preset mix _ <<<"$r"; printf " %19s" "$preset/$mix"; done
echo
for rows in ${ROWS//,/ }; do
    printf "%-6s" "$rows"
    for r in "${results[@]}"; do read -r _ _ _ _ _ _ _ _ cost <<<"$r"; printf " %19s" "$(rows_ms "$cost" "$rows")"; done
    echo
done
