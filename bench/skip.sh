#!/usr/bin/env bash
# bench/skip.sh: layer-skip self-speculation (decoder `skip`) on the TinyStories models against
# greedy, prompt lookup, SuffixDecoding and lookahead, measured, then priced on a 1.1B shape
# (docs/measurements/2026-11-29-skip.md).
#
#   bash bench/skip.sh [BUILD_DIR]      (LIMIT=10 prompts, MAX_NEW=256, THREADS=1, COST_THREADS=2)
#
# 1. One run per target (stories260K, llama2xs: 5 layers each; no draft model) with the pass
#    trace: skip at its defaults (SWIFT's starting set, the odd layers 1 and 3), layer 2 alone
#    (gamma 8 and 2), SWIFT's on-the-fly optimisation and the offline search.
# 2. Cost curves of TinyLlama-1.1B's shape in llama-quantize's Q4_K_M mix, measured on models
#    of 1 and 4 layers and extended to L layers point by point (t_L = t_1 + (L-1)(t_4-t_1)/3, as
#    bench/your_cpu.sh does for 8B): the target has 22 layers; a skipped pass is priced as a
#    model of L' = 22 (1 - 0.214 a - 0.786 m) layers, a and m the shares of attention and MLP
#    sublayers the variant's draft passes skipped on the small model (0.214: attention's share of
#    a 1.1B layer's weights, 2 x 2048 x 2048 + 2 x 2048 x 256 of 2048 x (2 x 2048 + 2 x 256 +
#    3 x 5632)). A pass with L' of L layers costs about L'/L of the layers' time plus the
#    embedding and classifier, which every pass pays.
# 3. `report --layout projected` per variant with its own draft curve.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-10} MAX_NEW=${MAX_NEW:-256} THREADS=${THREADS:-1} COST_THREADS=${COST_THREADS:-2}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
W=$(mktemp -d)
source bench/cache.sh
SKIPS=(skip skip:layers=2 skip:layers=2,gamma=2,conf=0 skip:adapt=swift skip:adapt=search)
for t in stories260K llama2xs; do
    args=()
    for s in greedy pld:ngram=3,k=10 suffix lookahead:W=15,N=5,G=15 "${SKIPS[@]}"; do
        args+=(--decoder "$s")
    done
    $B run --model "$M/$t.bin" --dataset tinystories --limit "$LIMIT" --max-new "$MAX_NEW" \
        --repeats 1 --warmup 1 --threads "$THREADS" --trace --db "$W/$t.db" --label "skip-$t" \
        "${args[@]}" >/dev/null
    $B report --db "$W/$t.db"
done
for l in 1 4; do
    f=$CACHE/skip_1.1B_${l}layers_v$("$B" synth --version)_Q4_K_M.gguf
    [ -f "$f" ] || $B synth --config "2048,5632,$l,32,4,32000,2048" --type Q4_K_M --seed 1 -o "$f" >&2
    $B cost --model "$f" --rows 1,2,3,4,5,6,9,17,33,64 --context 256 --threads "$COST_THREADS" \
        --no-bandwidth --csv "$W/cost_l$l.csv" >/dev/null
done
# extend CSV: L layers from the 1- and 4-layer curves
extend() {
    python3 - "$W/cost_l1.csv" "$W/cost_l4.csv" "$1" >"$2" <<'EOF'
import sys
def read(p):
    return {tuple(int(x) for x in (r, c, lr)): float(s) for r, s, c, lr in
            (l.strip().split(',') for l in open(p) if l[0].isdigit())}
a, b, L = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
print("# decbench cost curve v2: 1.1B shape, Q4_K_M, %g layers (from 1 and 4)" % L)
print("rows,seconds,context,logit_rows")
for k in sorted(a):
    print("%d,%.10f,%d,%d" % (k[0], a[k] + (L - 1) * (b[k] - a[k]) / 3, k[1], k[2]))
EOF
}
extend 22 "$W/t22.csv"
for t in stories260K llama2xs; do
    echo "## $t: projected on the 1.1B shape (22 layers)"
    $B report --db "$W/$t.db" --layout projected --project-cost "$W/t22.csv" |
        grep -E '^\| (dataset|tinystories \| (greedy|pld|suffix|lookahead))'
    # each variant: its layers run, from its counters (chain draft passes = drafted tokens)
    python3 - "$W/$t.db" <<'EOF' | while read -r spec layers; do
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for spec, drafted, attn, mlp in c.execute(
        "SELECT s.spec, SUM(s.drafted),"
        " SUM((SELECT value FROM counters WHERE sample_id = s.id AND name = 'skip_attn')),"
        " SUM((SELECT value FROM counters WHERE sample_id = s.id AND name = 'skip_mlp'))"
        " FROM samples s WHERE s.decoder = 'skip' GROUP BY s.spec"):
    a, m = attn / (5.0 * drafted), mlp / (5.0 * drafted)
    print(spec, round(22 * (1 - 0.214 * a - 0.786 * m), 1))
EOF
        extend "$layers" "$W/d.csv"
        echo "(draft passes priced as $layers layers)"
        $B report --db "$W/$t.db" --layout projected --project-cost "$W/t22.csv" \
            --project-draft-cost "$W/d.csv" | grep -F "| $spec "
    done
done
rm -rf "$W"
