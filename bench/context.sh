#!/usr/bin/env bash
# bench/context.sh: a one-row pass at long contexts against its bandwidth bound: the weights and
# the keys and values it reads, over the machine's read rate, for each KV cache type.
#
#   bash bench/context.sh [BUILD_DIR]
#   LLAMA_BENCH=/path/to/llama-bench IK_LLAMA_BENCH=/path/to/ik/llama-bench bash bench/context.sh
#
# For each preset in $PRESETS (default "llama-3.2-1b qwen2.5-0.5b qwen2.5-1.5b": random weights
# of the real shapes, `decbench synth --type $TYPE`, TYPE default q8_0, cached in $CACHE as
# bench/cache.sh names them), each KV cache type in $KV_TYPES (default "f32 f16") and each
# context in $CONTEXTS (default "0 1024 4096 16384 32768"; one the preset's context cannot hold
# is measured at its last position, as cost does), one run of
#   decbench cost --rows 1 --context C --kv-type K --threads $THREADS --bandwidth-rounds $ROUNDS
# whose last line is the pass against its bound measured interleaved (harness/measure.h): rounds
# of one read of the probe's buffer and one-row passes as long, per round the mean pass over
# (weight bytes + KV bytes read at that context) / the round's read rate; the medians and the
# rounds' range. Columns: the cache's MB one pass reads, the pass and its bound in ms, their
# ratio (1.00: at the bound; the rounds' range in brackets), the load average. The 1.1B preset
# is not in the default list: its context stops at 2048.
#
# Peers, optional and built by you (this project neither vendors nor builds them): with
# LLAMA_BENCH and/or IK_LLAMA_BENCH set, each context of $PEER_CONTEXTS (default: $CONTEXTS up to
# 16384; the peer's prompt pass before each point is not timed but takes minutes on two cores)
# is also measured by the peer's depth option when its --help lists one: llama.cpp's `-d C`
# (tg $N tokens after a prompt of C), ik_llama.cpp's `-gp C,$N`; N default 32. Their ms per
# generated token are printed beside decbench's one-row pass, with the peer's cache in the
# same type (-ctk/-ctv; ik_llama.cpp with -rtr 1, as bench/peers.sh). A peer without a depth
# option prints "no depth option".
#
# On a shared machine the read rate moves by a third within a minute: only the interleaved
# ratios mean anything, and the load average says how busy the machine was.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
PRESETS=${PRESETS:-llama-3.2-1b qwen2.5-0.5b qwen2.5-1.5b}
TYPE=${TYPE:-q8_0}
KV_TYPES=${KV_TYPES:-f32 f16}
CONTEXTS=${CONTEXTS:-0 1024 4096 16384 32768}
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-5}
SECONDS_PER_POINT=${SECONDS_PER_POINT:-300ms}
N=${N:-32}
LL=${LLAMA_BENCH:-}
IK=${IK_LLAMA_BENCH:-}
[ -n "$LL" ] && [ ! -x "$LL" ] && { echo "LLAMA_BENCH=$LL is not executable"; exit 2; }
[ -n "$IK" ] && [ ! -x "$IK" ] && { echo "IK_LLAMA_BENCH=$IK is not executable"; exit 2; }
PEER_CONTEXTS=${PEER_CONTEXTS:-$(for c in $CONTEXTS; do if [ "$c" -le 16384 ]; then echo "$c"; fi; done)}
TOK=${TOKENIZER:-${DECBENCH_MODELS:-${DECBENCH_SHARED:-../shared}/models}/tok32000.bin}
source bench/cache.sh
source bench/llama_csv.sh
OUT=${OUT:-$CACHE/context}
mkdir -p "$OUT"

model_of() { # PRESET: the preset's GGUF of $TYPE with a vocabulary llama.cpp loads, made on first use
    local g
    g=$(gguf_name "$1" "$TYPE")
    [ -f "$g" ] || $B synth --config "$1" --type "$TYPE" --tokenizer "$TOK" --seed 1 -o "$g" >&2
    echo "$g"
}
# depth_flag BIN: how the peer measures generation after a prompt: "d" (-d), "gp" (-gp), or ""
depth_flag() {
    local help
    help=$("$1" --help 2>&1 || true)
    if grep -qE '^ *-d, --n-depth' <<<"$help"; then echo d
    elif grep -qE '^ *-gp ' <<<"$help"; then echo gp
    fi
}
# peer_ms BIN EXTRA MODEL CONTEXT KV CSV: the peer's ms per generated token at that depth, or a word
peer_ms() {
    local flag ts
    flag=$(depth_flag "$1")
    case $flag in
    d) "$1" -m "$3" $2 -d "$4" -p 0 -n "$N" -t "$THREADS" -ctk "$5" -ctv "$5" -r 1 -o csv >"$6" 2>/dev/null || true
        ts=$(llama_ts "$6" 0 "$N") ;;
    gp) "$1" -m "$3" $2 -gp "$4,$N" -p 0 -n 0 -t "$THREADS" -ctk "$5" -ctv "$5" -r 1 -o csv >"$6" 2>/dev/null || true
        ts=$(llama_ts "$6" "$4" "$N") ;;
    *) echo "no-depth-option"; return ;;
    esac
    awk -v t="$ts" 'BEGIN { if (t + 0 > 0) printf "%.2f\n", 1000 / t; else print "failed" }'
}

echo "# context.sh: $(date -u +%FT%TZ), $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), decbench $(git rev-parse --short HEAD 2>/dev/null || echo ?), $THREADS threads, $ROUNDS rounds a point"
printf "%-14s %-4s %7s %9s %9s %9s %7s %-13s %s\n" preset kv context "KV MB" "pass ms" \
    "bound ms" ratio "(rounds)" "load; peers: ms per token at that depth"
for preset in $PRESETS; do
    m=$(model_of "$preset")
    for kv in $KV_TYPES; do
        for c in $CONTEXTS; do
            load=$(cut -d' ' -f1 /proc/loadavg)
            line=$($B cost --model "$m" --rows 1 --context "$c" --threads "$THREADS" --kv-type "$kv" \
                --seconds "$SECONDS_PER_POINT" --no-bandwidth --bandwidth-rounds "$ROUNDS" 2>/dev/null |
                grep 'against their bound' || true)
            at=$(sed -n 's/.*(context \([0-9]*\) + 1).*/\1/p' <<<"$line")
            read -r mb pass bound ratio range <<<"$(sed -n \
                's/.* KV cache.s \([0-9.]*\) MB .*pass \([0-9.]*\) ms, bound \([0-9.]*\) ms, ratio \([0-9.]*\) (rounds \([0-9.-]*\)).*/\1 \2 \3 \4 \5/p' \
                <<<"$line")"
            peers=""
            if grep -qx "$c" <<<"$PEER_CONTEXTS"; then
                [ -n "$LL" ] && peers+=" llama.cpp $(peer_ms "$LL" "" "$m" "$c" "$kv" "$OUT/${preset}_${kv}_${c}_llama.csv")"
                [ -n "$IK" ] && peers+=" ik_llama.cpp $(peer_ms "$IK" "-rtr 1" "$m" "$c" "$kv" "$OUT/${preset}_${kv}_${c}_ik.csv")"
            fi
            printf "%-14s %-4s %7s %9s %9s %9s %7s %-13s %s\n" "$preset" "$kv" "${at:-$c}" \
                "${mb:--}" "${pass:--}" "${bound:--}" "${ratio:--}" "(${range:--})" "$load;$peers"
        done
    done
done
echo "# ratio: the one-row pass over its bound, (weights + KV read) / the read probe's rate, measured"
echo "#   interleaved; the median of the rounds, their range in brackets"
