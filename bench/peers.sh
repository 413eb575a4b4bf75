#!/usr/bin/env bash
# bench/peers.sh: decbench against llama.cpp's and ik_llama.cpp's llama-bench on the same GGUF
# files, every ratio of the grid measured in one run, as medians of back-to-back triples.
#
#   IK_LLAMA_BENCH=/path/to/ik/llama-bench LLAMA_BENCH=/path/to/llama-bench bash bench/peers.sh [BUILD_DIR]
#
# The project neither vendors nor builds either peer: point the variables at llama-bench builds
# of your own. ik_llama.cpp's runs with -rtr 1 (its weights repacked at load into its
# interleaved-row types, as decbench's int8b mode copies them into its 16-row layout). Either
# variable may be left out (its columns then print "-"); with neither the script exits 2.
#
# For each preset in $PRESETS (default "110M 1.1B": random weights of the real shapes, cached by
# bench/cache.sh), each type in $TYPES (default "q8_0 Q4_0 Q4_K_M Q6_K": `decbench convert
# --type`), each thread count in $THREADS_LIST (default "1 $(nproc)") and decbench kernel mode
# $KERNELS (default auto), $PAIRS rounds (default 3), each round back to back:
#   decbench: tg = greedy decode tok/s (`generate -n $N --stats`: N tokens after BOS, as
#             llama-bench's tg$N decodes N tokens from an empty context); `cost --rows 1,8,64
#             --context 0 --logits last` (as llama-bench's pp: the last row's logits): pp8 and
#             pp64 in rows/s, t(8)/t(1), and the 64-row pass's share of the machine's int8 peak
#             (cost's int8% column: the ISA's ops per cycle x cores x measured clock); the
#             one-row pass's share of the read bandwidth measured interleaved (`cost --rows 1
#             --bandwidth-rounds $ROUNDS`, harness/measure.h);
#   llama.cpp and ik_llama.cpp: llama-bench -p 8,64 -n $N -r 1 -o csv (ik: -rtr 1).
# Each ratio is decbench / peer per round; the table has their medians (>= 1.00: decbench as
# fast or faster), the rounds' range in brackets for the ik ratios. The raw CSVs stay in $OUT
# (default $CACHE/peers). On a shared machine speeds move by a third within minutes, and the
# peers' OpenMP threads wait on each other when a core is busy: only the ratios of rounds mean
# anything, and the load average printed with each row says how busy the machine was.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
IK=${IK_LLAMA_BENCH:-}
LL=${LLAMA_BENCH:-}
[ -n "$IK" ] && [ ! -x "$IK" ] && { echo "IK_LLAMA_BENCH=$IK is not executable"; exit 2; }
[ -n "$LL" ] && [ ! -x "$LL" ] && { echo "LLAMA_BENCH=$LL is not executable"; exit 2; }
if [ -z "$IK" ] && [ -z "$LL" ]; then
    echo "set IK_LLAMA_BENCH=/path/to/ik_llama.cpp's llama-bench and/or LLAMA_BENCH=/path/to/llama.cpp's (builds of your own; this project builds neither)"
    exit 2
fi
PRESETS=${PRESETS:-110M 1.1B}
TYPES=${TYPES:-q8_0 Q4_0 Q4_K_M Q6_K}
THREADS_LIST=${THREADS_LIST:-1 $(nproc)}
KERNELS=${KERNELS:-auto}
PAIRS=${PAIRS:-3}
N=${N:-128}
ROUNDS=${ROUNDS:-10}
TOK=${TOKENIZER:-${DECBENCH_MODELS:-${DECBENCH_SHARED:-../shared}/models}/tok32000.bin}
source bench/cache.sh
source bench/llama_csv.sh
OUT=${OUT:-$CACHE/peers}
mkdir -p "$OUT"

gguf() { # PRESET TYPE: the converted file, made on first use
    local g
    g=$(gguf_name "$1" "$2")
    [ -f "$g" ] || $B convert --model "$(synth_cached "$1")" --type "$2" -o "$g" >&2
    echo "$g"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.2f-%.2f", lo, hi; else printf "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 <= 0) print ""; else printf "%.4f\n", a / b }'; }
# peer BIN EXTRA CSV PRESET TYPE THREADS: the peer's tg, pp8, pp64 (tokens/s) into its CSV
peer() {
    "$1" -m "$4" $2 -p 8,64 -n "$N" -t "$6" -r 1 -o csv >"$3" 2>/dev/null || true
    echo "$(llama_ts "$3" 0 "$N") $(llama_ts "$3" 8 0) $(llama_ts "$3" 64 0)"
}
col() { # VALUES...: median, or "-" without values
    local m
    m=$(printf '%s\n' "$@" | grep -v '^$' | median)
    [ "$m" = nan ] && printf '%5s' - || printf '%5.2f' "$m"
}

echo "# peers.sh: $(date -u +%FT%TZ), $(nproc) cores, decbench $(git rev-parse --short HEAD 2>/dev/null || echo ?) ($B), kernels $KERNELS"
echo "# ik_llama.cpp: ${IK:--} (-rtr 1); llama.cpp: ${LL:--}; $PAIRS rounds per row, N = $N"
printf "%-5s %-6s %-3s | %-22s | %-22s | %-22s | %5s %5s %5s | %s\n" preset type thr \
    "tg: /ik (range) /llama" "pp8: /ik (range) /llama" "pp64: /ik (range) /llama" \
    "t8/t1" "T1bw%" "int8%" "decbench tg/pp8/pp64, ik, llama (medians); load"
for preset in $PRESETS; do
    for t in $TYPES; do
        g=$(gguf "$preset" "$t")
        for th in $THREADS_LIST; do
            for km in $KERNELS; do
                declare -a r_tg_ik=() r_p8_ik=() r_p64_ik=() r_tg_ll=() r_p8_ll=() r_p64_ll=()
                declare -a d_tg=() d_p8=() d_p64=() k_tg=() k_p8=() k_p64=() l_tg=() l_p8=() l_p64=()
                declare -a t81=() bw=() peak=() loads=()
                for i in $(seq "$PAIRS"); do
                    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
                    dtg=$($B generate --model "$g" --tokenizer "$TOK" -n "$N" --threads "$th" --kernels "$km" --stats 2>&1 >/dev/null |
                        awk '/^speed/ { print $2 }')
                    cost=$($B cost --model "$g" --rows 1,8,64 --context 0 --logits last --threads "$th" \
                        --kernels "$km" --no-bandwidth --seconds 500ms)
                    dp8=$(awk '$1 == 8 && $8 == 1 { print 8000 / $2 }' <<<"$cost")
                    dp64=$(awk '$1 == 64 && $8 == 1 { print 64000 / $2 }' <<<"$cost")
                    t81+=("$(awk '$1 == 1 && $8 == 1 { t1 = $2 } $1 == 8 && $8 == 1 { t8 = $2 } END { if (t1 > 0) print t8 / t1 }' <<<"$cost")")
                    peak+=("$(awk '$1 == 64 && $8 == 1 { print $10 }' <<<"$cost")")
                    one=$($B cost --model "$g" --rows 1 --context 0 --threads "$th" --kernels "$km" --seconds 300ms \
                        --bandwidth-rounds "$ROUNDS" --no-bandwidth)
                    bw+=("$(sed -n 's/.*interleaved.*: \([0-9.]*\)% (rounds.*/\1/p' <<<"$one")")
                    d_tg+=("$dtg") d_p8+=("$dp8") d_p64+=("$dp64")
                    if [ -n "$IK" ]; then
                        read -r ktg kp8 kp64 <<<"$(peer "$IK" "-rtr 1" "$OUT/${preset}_${t}_t${th}_ik_$i.csv" "$g" "$t" "$th")"
                        k_tg+=("$ktg") k_p8+=("$kp8") k_p64+=("$kp64")
                        r_tg_ik+=("$(ratio "$dtg" "$ktg")") r_p8_ik+=("$(ratio "$dp8" "$kp8")")
                        r_p64_ik+=("$(ratio "$dp64" "$kp64")")
                    fi
                    if [ -n "$LL" ]; then
                        read -r ltg lp8 lp64 <<<"$(peer "$LL" "" "$OUT/${preset}_${t}_t${th}_llama_$i.csv" "$g" "$t" "$th")"
                        l_tg+=("$ltg") l_p8+=("$lp8") l_p64+=("$lp64")
                        r_tg_ll+=("$(ratio "$dtg" "$ltg")") r_p8_ll+=("$(ratio "$dp8" "$lp8")")
                        r_p64_ll+=("$(ratio "$dp64" "$lp64")")
                    fi
                done
                three() { # IK_RATIOS LLAMA_RATIOS (space-separated lists)
                    printf '%s (%s) %s' "$(col $1)" "$(printf '%s\n' $1 | grep -v '^$' | minmax)" "$(col $2)"
                }
                sp() { printf '%s\n' "$@" | grep -v '^$' | median | awk '{ printf "%.1f", $1 }'; }
                printf "%-5s %-6s %-3s | %-22s | %-22s | %-22s | %5s %5s %5s | %s/%s/%s, %s/%s/%s, %s/%s/%s; %s\n" \
                    "$preset" "$t" "$th" \
                    "$(three "${r_tg_ik[*]:-}" "${r_tg_ll[*]:-}")" "$(three "${r_p8_ik[*]:-}" "${r_p8_ll[*]:-}")" \
                    "$(three "${r_p64_ik[*]:-}" "${r_p64_ll[*]:-}")" \
                    "$(col "${t81[@]}")" "$(printf '%s\n' "${bw[@]}" | median | awk '{ printf "%.0f", $1 }')" \
                    "$(printf '%s\n' "${peak[@]}" | median | awk '{ printf "%.0f", $1 }')" \
                    "$(sp "${d_tg[@]}")" "$(sp "${d_p8[@]}")" "$(sp "${d_p64[@]}")" \
                    "$(sp "${k_tg[@]:-}")" "$(sp "${k_p8[@]:-}")" "$(sp "${k_p64[@]:-}")" \
                    "$(sp "${l_tg[@]:-}")" "$(sp "${l_p8[@]:-}")" "$(sp "${l_p64[@]:-}")" "${loads[*]}"
            done
        done
    done
done
echo "# ratios: decbench / peer per round, median over the rounds (range of the ik ratios in brackets);"
echo "# t8/t1: decbench's t(8) / t(1) (one row's logits); T1bw%: the one-row pass's share of the read"
echo "#   bandwidth, interleaved ($ROUNDS rounds, median over the rounds' medians); int8%: the 64-row"
echo "#   pass's GFLOP/s of the int8 peak cost prints; load: the 1-minute load average at each round"
