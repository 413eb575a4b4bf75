#!/usr/bin/env bash
# bench/projection.sh: how close the projected speed-up comes to the measured one, per decoder.
#
#   bash bench/projection.sh [BUILD_DIR]
#        (TYPE=q8_0 or f32, ROUNDS=3, LIMIT=3 prompts, MAX_NEW=64, THREADS=nproc, SECONDS_MS=300)
#
# The target is the synthetic 110M model, the draft the synthetic 15M one (both TYPE, GGUF via
# `decbench convert`, cached by bench/cache.sh). Each round measures both models' cost curves
# (`decbench cost`: t(rows, context, logit rows)), runs every decoder below on the same prompts
# with the pass trace (`run --trace`, greedy measured prompt by prompt beside them), and the
# next round starts with new curves; after the last round the curves are measured once more.
# Each round's run is projected (`report --layout projected`) on the mean of the curves measured
# just before and just after it, so a slow drift of the machine's speed cancels to first order,
# and the error of each decoder's projected speed-up against its measured one is printed, then
# per decoder the median, smallest and largest error over the rounds: the spread is the noise.
# The random draft agrees with the target on no token, so spec and Ouroboros accept nothing:
# what is checked for them is the price of their draft passes, which the projection adds.
#
# Noise: the measured speed-up is itself a ratio of two timings on a shared machine. The script
# prints greedy's tok/s per round and the drift of t(1) between the curves around each run;
# when these move by more than the errors, the errors say more about the machine than about the
# projection.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
TYPE=${TYPE:-q8_0} ROUNDS=${ROUNDS:-3} LIMIT=${LIMIT:-3} MAX_NEW=${MAX_NEW:-64}
THREADS=${THREADS:-$(nproc)} SECONDS_MS=${SECONDS_MS:-300}
ROWS=${ROWS:-1,2,3,4,6,8,12,16,24,32,48,64,96} CONTEXTS=${CONTEXTS:-16,192}
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
source bench/cache.sh
gguf() { # PRESET -> its TYPE GGUF in the cache, converted on first use
    local g
    g=$(gguf_name "$1" "$TYPE")
    [ -f "$g" ] || "$B" convert --model "$(synth_cached "$1")" --type "$TYPE" -o "$g" >&2
    echo "$g"
}
target=$(gguf 110M) draft=$(gguf 15M)
DECODERS=(greedy pld:ngram=3,k=10 jacobi:window=4 lookahead:W=4,N=3,G=4 lookahead:W=8,N=4,G=8
          spec:gamma=2 spec:gamma=4 ouroboros:gamma=2,W=4)
W=$(mktemp -d)
DB=$W/projection.db
echo "# target $target, draft $draft ($TYPE), $LIMIT tinystories prompts x $MAX_NEW tokens, $THREADS threads"
echo "# $(uptime)"

curves() { # ROUND: both cost curves, as CSV files
    for m in target draft; do
        local f=$target
        [ $m = draft ] && f=$draft
        "$B" cost --model "$f" --rows "$ROWS" --context "$CONTEXTS" --threads "$THREADS" \
            --seconds "$SECONDS_MS" --no-bandwidth --csv "$W/$m$1.csv" >"$W/$m$1.txt"
    done
}
# mean of two curves measured on the same grid (same points, same order)
mean_csv() {
    paste -d, "$1" "$2" | awk -F, '/^#/ || /^rows/ {n = split($0, a, ","); print a[1] "," a[2] "," a[3] "," a[4]; next}
        {printf "%s,%.9g,%s,%s\n", $1, ($2 + $6) / 2, $3, $4}'
}
t1() { awk -F, '$1 == 1 && $4 == 1 {print $2; exit}' "$1"; }

decoder_args=()
for d in "${DECODERS[@]}"; do decoder_args+=(--decoder "$d"); done
for ((k = 1; k <= ROUNDS; k++)); do
    curves $k
    "$B" run --model "$target" --tokenizer "$M/tok32000.bin" --draft "$draft" --dataset tinystories \
        --limit "$LIMIT" --max-new "$MAX_NEW" --threads "$THREADS" --trace --db "$DB" \
        --label "round $k" "${decoder_args[@]}" 2>"$W/run$k.log" >/dev/null
done
curves $((ROUNDS + 1))

printf "\n%-6s %-24s %9s %9s %8s %9s %9s %8s %7s\n" round decoder measured projected error \
    "meas e2e" "proj e2e" error tok/step
for ((k = 1; k <= ROUNDS; k++)); do
    mean_csv "$W/target$k.csv" "$W/target$((k + 1)).csv" >"$W/tmean$k.csv"
    mean_csv "$W/draft$k.csv" "$W/draft$((k + 1)).csv" >"$W/dmean$k.csv"
    "$B" report --db "$DB:$k" --layout projected --project-cost "$W/tmean$k.csv" \
        --project-draft-cost "$W/dmean$k.csv" --format csv >"$W/proj$k.csv"
    # spec: the decoder's name and the parameters the bench set (the canonical spec lists all)
    awk -F'"' -v k=$k 'NR > 1 {
            line = $0; spec = "";
            if (NF >= 3) { spec = $2; gsub(/"[^"]*"/, "X", line) }
            n = split(line, f, ","); if (spec == "") spec = f[2];
            sub(/,seed_pool=.*|,beta=.*|,init=.*/, "", spec);
            m = f[3]; p = f[9]; me = f[4]; pe = f[10]
            printf "%-6s %-24s %8.3fx %8.3fx %+7.1f%% %8.3fx %8.3fx %+7.1f%% %7.2f\n", k, spec, m, p,
                100 * (p / m - 1), me, pe, 100 * (pe / me - 1), f[5] }' "$W/proj$k.csv"
done | tee "$W/errors.txt"

echo
echo "per decoder over $ROUNDS round(s): error of the projected speed-up (decode-only; e2e), median [min, max]"
sort -k2,2 -s "$W/errors.txt" | awk '
    function flush() { if (!name) return; med = a[int((n + 1) / 2)]; mede = e[int((n + 1) / 2)];
        printf "  %-24s %+6.1f%% [%+6.1f%%, %+6.1f%%]   e2e %+6.1f%% [%+6.1f%%, %+6.1f%%]\n", name,
            med, a[1], a[n], mede, e[1], e[n] }
    { if ($2 != name) { flush(); name = $2; n = 0 }
      n++; a[n] = $5 + 0; e[n] = $8 + 0;
      for (i = n; i > 1 && a[i] < a[i - 1]; i--) { t = a[i]; a[i] = a[i - 1]; a[i - 1] = t }
      for (i = n; i > 1 && e[i] < e[i - 1]; i--) { t = e[i]; e[i] = e[i - 1]; e[i - 1] = t } }
    END { flush() }'

echo
echo "noise: greedy decode tok/s per round, and t(1) of the curves before/after each run"
for ((k = 1; k <= ROUNDS; k++)); do
    g=$("$B" report --db "$DB:$k" --format csv | awk -F, '$2 == "greedy" {print $5}')
    a=$(t1 "$W/target$k.csv") b=$(t1 "$W/target$((k + 1)).csv")
    c=$(t1 "$W/draft$k.csv") d=$(t1 "$W/draft$((k + 1)).csv")
    awk -v k=$k -v g="$g" -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {
        printf "  round %d: greedy %.1f tok/s; target t(1) %.2f -> %.2f ms (%+.0f%%); draft t(1) %.2f -> %.2f ms (%+.0f%%)\n",
            k, g, 1e3 * a, 1e3 * b, 100 * (b / a - 1), 1e3 * c, 1e3 * d, 100 * (d / c - 1) }'
done
echo "# $(uptime)"
echo "files: $W (database projection.db, curves target*.csv draft*.csv, projections proj*.csv)"
