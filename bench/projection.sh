#!/usr/bin/env bash
# bench/projection.sh: how close the projected speed-up comes to the measured one, per decoder.
#
#   bash bench/projection.sh [BUILD_DIR]
#        (TYPE=q8_0 or f32, UNITS=8 prompts, MAX_NEW=64, THREADS=nproc, SECONDS_MS=300)
#
# The target is the synthetic 110M model, the draft the synthetic 15M one (both TYPE, GGUF via
# `decbench convert`, cached by bench/cache.sh). The machine's load moves by tens of percent
# within a minute on a shared machine, and not evenly: a one-row pass streams the weights and
# slows when another job streams memory, a wide pass computes and slows when another job
# computes. A cost curve measured at one moment and a run at another then disagree by more
# than any projection error (a first version of this script, curves and runs minutes apart:
# errors from -29% to +172% for the same decoder). So the two are interleaved finely: UNITS
# times, both cost curves (`decbench cost`, a few rounds over the grid) and then one prompt
# through every decoder (`run --trace --offset k --limit 1`, greedy first), and once more the
# curves at the end. The projection (`report --layout projected`) prices every run's passes on
# the mean of all the curves; its 'all' rows add the runs up (ratio of total times), and the
# per-unit errors show the noise. The random draft agrees with the target on no token, so spec
# and Ouroboros accept nothing: what is checked for them is the price of their draft passes.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
TYPE=${TYPE:-q8_0} UNITS=${UNITS:-8} MAX_NEW=${MAX_NEW:-64}
THREADS=${THREADS:-$(nproc)} SECONDS_MS=${SECONDS_MS:-300}
ROWS=${ROWS:-1,2,3,4,6,8,12,16,24,32,48,64} CONTEXTS=${CONTEXTS:-16,128}
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
echo "# target $target, draft $draft ($TYPE), $UNITS tinystories prompts x $MAX_NEW tokens, $THREADS threads"
echo "# $(uptime)"

curves() { # K: both cost curves, as CSV files
    for m in target draft; do
        local f=$target
        [ $m = draft ] && f=$draft
        "$B" cost --model "$f" --rows "$ROWS" --context "$CONTEXTS" --threads "$THREADS" \
            --seconds "${SECONDS_MS}ms" --no-bandwidth --csv "$W/$m$1.csv" >"$W/$m$1.txt"
    done
}
# the mean of curves measured on the same grid (same points, same order)
mean_csv() {
    awk -F, '/^#/ {next} /^rows/ {if (FNR == NR) print; next}
        {k = FNR; key[k] = $1 "," $3 "," $4; sum[k] += $2; n[k]++; if (k > last) last = k}
        END {for (k = 1; k <= last; k++) if (n[k]) {split(key[k], a, ",");
            printf "%s,%.9g,%s,%s\n", a[1], sum[k] / n[k], a[2], a[3]}}' "$@"
}

args=()
for d in "${DECODERS[@]}"; do args+=(--decoder "$d"); done
runs=""
for ((k = 0; k < UNITS; k++)); do
    curves $k
    "$B" run --model "$target" --tokenizer "$M/tok32000.bin" --draft "$draft" --dataset tinystories \
        --offset "$k" --limit 1 --max-new "$MAX_NEW" --threads "$THREADS" --warmup 0 --trace \
        --db "$DB" --label "unit $k" "${args[@]}" 2>"$W/run$k.log" >/dev/null
    runs="$runs${runs:+,}$((k + 1))"
done
curves $UNITS
mean_csv "$W"/target[0-9]*.csv >"$W/target.csv"
mean_csv "$W"/draft[0-9]*.csv >"$W/draft.csv"
"$B" report --db "$DB" --run "$runs" --layout projected --project-cost "$W/target.csv" \
    --project-draft-cost "$W/draft.csv" --format csv >"$W/projection.csv"

# columns: run, dataset, spec, measured, measured e2e, tok/step, rows/step, ms/pass, tok/s,
# projected, projected e2e, basis; a spec in quotes has commas: keep the parameters set here
python3 - "$W/projection.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:  # one unit: no run column, its rows are the total
    r.setdefault("run", "all")
def short(spec):
    for cut in (",seed_pool=", ",beta=", ",init="):
        spec = spec.split(cut)[0]
    return spec
def err(r, e2e=False):
    m = float(r["measured_speedup_e2e" if e2e else "measured_speedup"])
    p = float(r["projected_speedup_e2e" if e2e else "projected_speedup"])
    return m, p, 100 * (p / m - 1)
print("\nper decoder, all units added up (ratio of total times); per-unit errors: median [min, max]\n")
print("%-24s %9s %9s %8s   %9s %9s %8s   %s" % ("decoder", "measured", "projected", "error",
      "meas e2e", "proj e2e", "error", "per unit (decode)"))
for r in rows:
    if r["run"] != "all":
        continue
    per = sorted(err(u)[2] for u in rows if u["run"] != "all" and u["spec"] == r["spec"]) or [err(r)[2]]
    m, p, e = err(r)
    me, pe, ee = err(r, True)
    print("%-24s %8.3fx %8.3fx %+7.1f%%   %8.3fx %8.3fx %+7.1f%%   %+.1f%% [%+.1f%%, %+.1f%%]" % (
        short(r["spec"]), m, p, e, me, pe, ee, statistics.median(per), per[0], per[-1]))
EOF

echo
echo "noise: t(1) of the target and the draft at each measurement (ms), and greedy's tok/s per unit"
for m in target draft; do
    printf "  %-7s" $m
    for ((k = 0; k <= UNITS; k++)); do
        awk -F, '$1 == 1 && $4 == 1 && !seen++ {printf " %.1f", 1e3 * $2}' "$W/$m$k.csv"
    done
    echo
done
printf "  greedy "
for ((k = 1; k <= UNITS; k++)); do
    "$B" report --db "$DB:$k" --format csv |
        awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
                 $c["decoder"] == "greedy" {printf " %.1f", $c["tps_decode"]}'
done
echo
echo "# $(uptime)"
echo "files: $W (database projection.db, curves target*.csv draft*.csv, projection.csv)"
