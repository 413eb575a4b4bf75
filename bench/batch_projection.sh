#!/usr/bin/env bash
# bench/batch_projection.sh: up to which batch size each decoder pays at real model sizes: the
# TinyStories pair's pass trace (stories260K target, llama2xs draft) priced on cost curves of the
# 1.1B and 8B synthetic presets measured with B = 1, 2, 4, 8, 16 sequences a pass
# (`decbench cost --batch B`; a figure's run: docs/measurements/2026-11-29-batch-projection.md).
#
#   bash bench/batch_projection.sh [BUILD_DIR]
#        (LIMIT=4 prompts, MAX_NEW=64, MIX=Q4_K_M, THREADS=nproc, SECONDS_MS=300,
#         BATCHES="1 2 4 8 16", ROWS=1,2,4,8,16, CONTEXTS=16,160)
#
# 1. The pair runs the decoders below once with the pass trace (run --trace): each pass's rows,
#    context and logit rows, one sequence at a time.
# 2. For each B, cost curves of passes of B sequences, each feeding `rows` rows (results/report/
#    cost.h, batched curves): 1.1B (TinyLlama's shape) with the 110M shape as its draft, and 8B
#    (Llama-3.1-8B's shape) with Llama-3.2-1B's as its draft. The 8B curve is extended from
#    models of 1 and 4 layers as bench/your_cpu.sh does (t_32 = t_1 + 31 (t_4 - t_1) / 3, point
#    by point): each layer does the same work for each of the B sequences, and the embedding and
#    the classifier do not depend on the layer count, so the extension holds at every B. The
#    extension multiplies the difference of two measurements by 10, so a load change between
#    them (a shared machine) can turn it negative: the two curves are measured twice,
#    alternating, and their means extended; a B whose 4-layer curve still measures below the
#    1-layer one somewhere is left out of the 8B table and named.
# 3. The trace priced on each B's curves (`report --layout projected`): every pass as B
#    sequences' in lockstep, greedy's one-row passes too, so the figure is the decoder's
#    speed-up over greedy when serving B sequences that accept as the traced ones did. Printed:
#    decoder x B projected decode speed-ups per target, and for each decoder the largest B at
#    which it pays (above 1) and the first at which it does not.
# Rows above the largest of ROWS are priced along the curve's end segment (the report's basis
# says 'extrapolated'): a wide pass of 16 sequences of 32 rows takes seconds at 1.1B here, so the
# grid stops at 16 rows a sequence; beyond, a pass is compute-bound and its time linear in rows.
# The models are written once to $CACHE (bench/cache.sh); the curves are measured on every run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-4} MAX_NEW=${MAX_NEW:-64} MIX=${MIX:-Q4_K_M}
THREADS=${THREADS:-$(nproc)} SECONDS_MS=${SECONDS_MS:-300}
BATCHES=${BATCHES:-1 2 4 8 16} ROWS=${ROWS:-1,2,4,8,16} CONTEXTS=${CONTEXTS:-16,160}
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
source bench/cache.sh
V=$("$B" synth --version)
cached() { # NAME CONFIG: as bench/your_cpu.sh (same files)
    local f=$CACHE/synth_${1}_v${V}_$MIX.gguf
    [ -f "$f" ] || "$B" synth --config "$2" --type "$MIX" --seed 1 -o "$f" >&2
    echo "$f"
}
L8=llama:4096,14336
t11=$(cached 1.1B 1.1B) d11=$(cached 110M 110M)
t8a=$(cached 8B-1layer $L8,1,32,8,128256,2048)
t8b=$(cached 8B-4layers $L8,4,32,8,128256,2048)
d8=$(cached llama-3.2-1b llama-3.2-1b)

W=$(mktemp -d)
DB=$W/pair.db
"$B" datastore build --model "$M/stories260K.bin" --from tinystories --offset 64 -o "$W/ts.ds" >/dev/null
DECODERS=(greedy spec:gamma=2 spec:gamma=4 tree:mode=dynamic pld suffix lookahead:W=4,N=3,G=4
          "rest:ds=$W/ts.ds,num_draft=8")
args=()
for d in "${DECODERS[@]}"; do args+=(--decoder "$d"); done
echo "# $(date -u +%FT%TZ) $(cat /proc/loadavg)"
"$B" run --model "$M/stories260K.bin" --draft "$M/llama2xs.bin" --dataset tinystories \
    --limit "$LIMIT" --max-new "$MAX_NEW" --threads "$THREADS" --trace --db "$DB" "${args[@]}" \
    >/dev/null 2>"$W/run.log"

curve() { # MODEL BATCH CSV
    "$B" cost --model "$1" --batch "$2" --rows "$ROWS" --context "$CONTEXTS" \
        --threads "$THREADS" --seconds "${SECONDS_MS}ms" --no-bandwidth --csv "$3" >"$3.txt"
}
# the 8B curve of batch B from the 1- and 4-layer ones (same points, same order; version 2 at
# B = 1, version 3 above: the batch is the first column)
# the mean of curves measured on the same grid (same points, same order; either version)
mean_csv() {
    awk -F, '/^#/ {next} /^(rows|batch),/ {if (FNR == NR) print; next}
        {k = FNR; c = NF == 4 ? 2 : 3; line[k] = $0; sum[k] += $c; n[k]++; col[k] = c
         if (k > last) last = k}
        END {for (k = 1; k <= last; k++) if (n[k]) {m = split(line[k], a, ","); a[col[k]] = sprintf("%.9g", sum[k] / n[k])
            s = a[1]; for (i = 2; i <= m; i++) s = s "," a[i]; print s}}' "$@"
}
extend8() { # ONE FOUR OUT: 1 when some point of FOUR is below ONE's (nothing written then)
    if paste -d, "$1" "$2" | awk -F, '/^[0-9]/ {c = NF == 8 ? 2 : 3; if ($(c + NF / 2) < $c) bad = 1}
        END {exit !bad}'; then return 1; fi
    paste -d, "$1" "$2" | awk -F, '
        /^#/ {next} /^rows/ {print "rows,seconds,context,logit_rows"; h = 4; next}
        /^batch/ {print "batch,rows,seconds,context,logit_rows"; h = 5; next}
        h == 4 {printf "%s,%.9g,%s,%s\n", $1, $2 + 31 * ($6 - $2) / 3, $3, $4}
        h == 5 {printf "%s,%s,%.9g,%s,%s\n", $1, $2, $3 + 31 * ($8 - $3) / 3, $4, $5}' >"$3"
}
speedups() { # TARGET_CSV DRAFT_CSV: "spec speed-up" lines, the projected decode speed-up
    "$B" report --db "$DB" --layout projected --project-cost "$1" --project-draft-cost "$2" \
        --format csv | awk -v cols=spec,projected_speedup -f bench/report_csv.awk | short_names
}
short_names() { # "SPEC X" lines: SPEC shown as the longest of DECODERS it starts with
    awk -v list="$(printf '%s\n' "${DECODERS[@]}")" 'BEGIN {n = split(list, d, "\n")}
        {best = $1; len = 0
         for (i = 1; i <= n; i++)
             if (d[i] != "" && index($1, d[i]) == 1 && length(d[i]) > len) {best = d[i]; len = length(d[i])}
         if (best ~ /^rest:/) {m = best; sub(/.*num_draft=/, "", m); sub(/,.*/, "", m)
             best = "rest:num_draft=" m} # its datastore is a temporary file
         print best, $2}'
}
for b in $BATCHES; do
    echo "# batch $b: curves ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
    curve "$t11" "$b" "$W/1.1B-b$b.csv"
    curve "$d11" "$b" "$W/110M-b$b.csv"
    for k in 1 2; do
        curve "$t8a" "$b" "$W/8B-1layer-b$b-$k.csv"
        curve "$t8b" "$b" "$W/8B-4layers-b$b-$k.csv"
    done
    mean_csv "$W/8B-1layer-b$b-1.csv" "$W/8B-1layer-b$b-2.csv" >"$W/8B-1layer-b$b.csv"
    mean_csv "$W/8B-4layers-b$b-1.csv" "$W/8B-4layers-b$b-2.csv" >"$W/8B-4layers-b$b.csv"
    curve "$d8" "$b" "$W/1B-b$b.csv"
    speedups "$W/1.1B-b$b.csv" "$W/110M-b$b.csv" | sed "s/^/1.1B $b /" >>"$W/speedups.txt"
    if extend8 "$W/8B-1layer-b$b.csv" "$W/8B-4layers-b$b.csv" "$W/8B-b$b.csv"; then
        speedups "$W/8B-b$b.csv" "$W/1B-b$b.csv" | sed "s/^/8B $b /" >>"$W/speedups.txt"
    else
        echo "# batch $b: 8B left out: a 4-layer point measured below its 1-layer point (load)"
    fi
done
echo "# $(date -u +%FT%TZ) $(cat /proc/loadavg)"

# the tables: decoder x B, then where each decoder stops paying
for tgt in 1.1B 8B; do
    echo
    echo "## projected decode speed-up over greedy at the same batch size, $tgt target (PROJECTED)"
    awk -v tgt="$tgt" -v batches="$BATCHES" '
        $1 == tgt {v[$3, $2] = $4; if (!($3 in seen)) {seen[$3] = 1; order[n++] = $3}}
        END {
            nb = split(batches, bs, " ")
            printf "| decoder |"; for (i = 1; i <= nb; i++) printf " B = %s |", bs[i]
            printf " pays up to B | stops at B |\n|---|"
            for (i = 1; i <= nb; i++) printf "---:|"
            printf "---:|---:|\n"
            for (k = 0; k < n; k++) {
                d = order[k]; if (d == "greedy") continue
                printf "| %s |", d; pays = "-"; stops = "-"
                for (i = 1; i <= nb; i++) {
                    x = v[d, bs[i]]; printf " %s |", x == "" ? "" : sprintf("%.2fx", x)
                    if (x != "" && x > 1) pays = bs[i]
                    if (x != "" && x <= 1 && stops == "-") stops = bs[i]
                }
                printf " %s | %s |\n", pays, stops
            }
        }' "$W/speedups.txt"
done
echo
for b in $BATCHES; do
    awk -F, -v b=$b '/^[0-9]/ && (NF == 4 ? $1 == 1 && $4 == 1 : $2 == 1 && $5 == 1) && !s++ {
        printf "t(1) at B = %s: 1.1B %.2f ms/pass   ", b, 1e3 * (NF == 4 ? $2 : $3)}' "$W/1.1B-b$b.csv"
    [ -f "$W/8B-b$b.csv" ] && awk -F, '/^[0-9]/ && (NF == 4 ? $1 == 1 && $4 == 1 : $2 == 1 && $5 == 1) && !s++ {
        printf "8B %.2f ms/pass", 1e3 * (NF == 4 ? $2 : $3)}' "$W/8B-b$b.csv"
    echo
done
echo "files: $W (pair.db, curves *-b<B>.csv with the cost output *.csv.txt, speedups.txt)"
