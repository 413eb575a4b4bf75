#!/usr/bin/env bash
# bench/scaling.sh: how one forward pass scales with the thread count on this machine (the
# project's own figures are from 2-core machines; this says what more cores give).
#
#   bash bench/scaling.sh [BUILD_DIR]                  (default build/)
#
# For each file of $FILES (default: the 110M and 1.1B presets in q8_0 and Q4_K_M, written once to
# the bench cache by bench/cache.sh and `decbench convert`) and each thread count of
# $THREADS_LIST (default: 1, the powers of two below the core count, and the core count), one
# `decbench cost` process probes the read bandwidth with that many threads, then times passes of
# T = 1, 8 and 64 rows from an empty context (the last row's logits, as llama-bench's pp).
# Printed per line: ms per pass, the speed-up over the 1-thread line of the same file
# (t(1 thread) / t(n threads)), the parallel efficiency (speed-up / n) and the T=1 pass's weight
# GB/s against that thread count's probe. With LLAMA_BENCH=/path/to/llama-bench, llama-bench's
# tg$N and pp64 at the same thread count print beside (same file, run just after).
#
# With more than one thread, the "apart" column runs as many one-thread processes at once (T=64,
# each its own copy of the file; $APART_SECONDS per process, default 2s, so that their
# measurements overlap; APART=0 skips it) and prints their mean ms per pass and its efficiency
# against the 1-thread line: what the machine itself gives n independent copies (cores that are
# SMT siblings or shared by a VM's host, a shared cache, memory). The T=64 efficiency over the
# apart one is then the runtime's own: its joins, and the activations that cross from core to core.
#
# What to read from it: T=1 (plain decoding) is bound by memory bandwidth, so its speed-up stops
# where the threads saturate the memory controller (look at the probe column: once it stops
# growing, more threads cannot help T=1); T=64 is bound by arithmetic and should scale with
# physical cores until the joins between matrix products (one per product, tpool.c) dominate,
# which happens first on small models. Timings are noisy on shared machines: compare lines of
# one run only. On NUMA machines, see README "Many cores and NUMA" before reading the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
source bench/cache.sh
source bench/llama_csv.sh
N=${N:-64}
SECONDS_PER_POINT=${SECONDS_PER_POINT:-500ms}
TOK=${TOKENIZER:-${DECBENCH_MODELS:-${DECBENCH_SHARED:-../shared}/models}/tok32000.bin}
default_threads() {
    local n=$(nproc) t=1 out=""
    while [ "$t" -lt "$n" ]; do out+="$t "; t=$((t * 2)); done
    echo "$out$n"
}
THREADS_LIST=${THREADS_LIST:-$(default_threads)}
APART=${APART:-1}
APART_SECONDS=${APART_SECONDS:-2s}
# apart FILE N: the mean ms per 64-row pass of N one-thread processes of FILE run at once.
apart() {
    local dir i
    dir=$(mktemp -d)
    for ((i = 0; i < $2; i++)); do
        $B cost --model "$1" --rows 64 --context 0 --logits last --threads 1 --no-bandwidth \
            --seconds "$APART_SECONDS" >"$dir/$i" &
    done
    wait
    awk '$1 == 64 { s += $2; n++ } END { if (n) printf "%.2f", s / n }' "$dir"/*
    rm -rf "$dir"
}
# gguf PRESET TYPE: the converted file, made on first use (as bench/llama_bench.sh).
gguf() {
    local g
    g=$(gguf_name "$1" "$2")
    [ -f "$g" ] || $B convert --model "$(synth_cached "$1")" --type "$2" -o "$g" >&2
    echo "$g"
}
if [ -z "${FILES:-}" ]; then
    FILES=""
    for p in 110M 1.1B; do for t in q8_0 Q4_K_M; do FILES+="$(gguf "$p" "$t") "; done; done
fi

echo "# scaling.sh: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# decbench: $B ($(git rev-parse --short HEAD 2>/dev/null || echo ?)); threads: $THREADS_LIST"
printf "%-34s %4s | %-22s | %-22s | %-22s | %-17s | %-15s%s\n" file thr "T=1 ms (speed-up, eff)" \
    "T=8 ms (speed-up, eff)" "T=64 ms (speed-up, eff)" "T=1 GB/s of probe" "T=64 apart (eff)" \
    "${LLAMA_BENCH:+ | llama-bench tg$N / pp64 tok/s}"
for f in $FILES; do
    declare -A base=()
    for th in $THREADS_LIST; do
        out=$($B cost --model "$f" --rows 1,8,64 --context 0 --logits last --threads "$th" \
            --seconds "$SECONDS_PER_POINT")
        bw=$(sed -n 's/.*memory read bandwidth \([0-9.]*\) GB\/s.*/\1/p' <<<"$out")
        line=""
        for r in 1 8 64; do
            ms=$(awk -v r="$r" '$1 == r { print $2 }' <<<"$out")
            [ -n "${base[$r]:-}" ] || base[$r]=$ms
            line+=$(awk -v ms="$ms" -v b="${base[$r]}" -v n="$th" \
                'BEGIN { s = b / ms; printf "%8.2f (%5.2fx %3.0f%%) | ", ms, s, 100 * s / n }')
        done
        gbs=$(awk '$1 == 1 { print $5 }' <<<"$out")
        sep=""
        if [ "$APART" != 0 ] && [ "$th" -gt 1 ]; then
            sep=$(awk -v ms="$(apart "$f" "$th")" -v b="${base[64]}" \
                'BEGIN { printf "%8.2f (%3.0f%%)", ms, (ms > 0 ? 100 * b / ms : 0) }')
        fi
        peer=""
        if [ -n "${LLAMA_BENCH:-}" ]; then
            csv=$CACHE/scaling_llama.csv
            "$LLAMA_BENCH" -m "$f" -p 64 -n "$N" -t "$th" -r 1 -o csv >"$csv" 2>/dev/null
            peer=$(printf " | %.1f / %.1f" "$(llama_ts "$csv" 0 "$N")" "$(llama_ts "$csv" 64 0)")
        fi
        printf "%-34s %4s | %s%6.1f/%-5.1f (%3.0f%%) | %-15s%s\n" "$(basename "$f")" "$th" "$line" \
            "$gbs" "$bw" "$(awk -v g="$gbs" -v b="$bw" 'BEGIN { print (b > 0 ? 100 * g / b : 0) }')" \
            "$sep" "$peer"
    done
    unset base
done
echo "# speed-up: t(1 thread) / t(n threads) of the same file and rows; eff = speed-up / n"
echo "# apart: n one-thread processes at once, T=64; eff = t(1 thread) / their mean t"
