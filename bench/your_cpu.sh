#!/usr/bin/env bash
# bench/your_cpu.sh: what the decoders would give on this CPU with real-sized models: the real
# TinyStories pair's steps, rows and acceptance (stories260K target, llama2xs draft), each
# forward pass priced on the cost curves of larger models measured here (a run's figures:
# docs/measurements/2026-11-25-your-cpu.md).
#
#   bash bench/your_cpu.sh [BUILD_DIR]
#        (LIMIT=10 prompts, MAX_NEW=256, MIX=Q4_K_M, THREADS=nproc, SECONDS_MS=300, CHECK8B=1)
#
# 1. The pair runs every decoder below on TinyStories prompts with the pass trace (run --trace):
#    which rows each pass of either model evaluated, at which context, with how many logits.
# 2. Cost curves t(rows, context, logit rows) (`decbench cost`) of synthetic models (`decbench
#    synth --type MIX`: random weights of the real shapes, llama-quantize's Q4_K_M mix, the file
#    people download):
#    - 1.1B: TinyLlama-1.1B's shape; its draft, a tenth of its size: the 110M shape (TinyLlama
#      is used with drafts of 68M-160M);
#    - 8B: Llama-3.1-8B's shape (dim 4096, hidden 14336, 32 layers, 32 heads, 8 KV heads,
#      vocabulary 128256). A whole 8B pass of 64 rows takes half a minute here, so the curve is
#      measured on two models of that shape with 1 and 4 layers and extended to 32: every layer
#      does the same work on the same rows and context, and the embedding and the classifier do
#      not depend on the layer count, so t_32 = t_1 + (32 - 1) (t_4 - t_1) / 3, point by point.
#      With CHECK8B=1 the whole 8B model is measured at a few points to check that (the cached
#      file is 4.9 GB). Its draft: Llama-3.2-1B's shape, an eighth of its size, as used in
#      practice;
#    - "pair ratio": the target's own curve for the draft too: llama2xs is as large as
#      stories260K, so this is what drafting with a model as large as the target costs.
#    - eagle and medusa draft with heads (the trained stories260K heads of tests/data/heads), not a
#      draft model: their head passes are priced on the curves of random heads of each target's
#      shape (`decbench synth --head`, f16 as published; `decbench cost --head`), the EAGLE head
#      with the target's classifier (measured with the 8B-1layer file, whose classifier is the
#      8B one), Medusa's 4 heads (the trees use at most 4) each with its own classifier.
# 3. `report --layout projected` for each target and draft; eagle's and medusa's rows come from
#    reports with their head's curve as the draft curve, in a table of their own.
# The models are written once to $CACHE (bench/cache.sh, ~8 GB); the curves are measured on every
# run (they move with the kernels).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-10} MAX_NEW=${MAX_NEW:-256} MIX=${MIX:-Q4_K_M} CHECK8B=${CHECK8B:-1}
THREADS=${THREADS:-$(nproc)} SECONDS_MS=${SECONDS_MS:-300}
[ -x "$B" ] || { echo "no $B: build first (./setup.sh)"; exit 1; }
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
source bench/cache.sh
V=$("$B" synth --version)
# cached NAME CONFIG: the MIX GGUF of a synthetic model (a preset or dims), written on first use
# (without a vocabulary: the cost curves need none)
cached() {
    local f=$CACHE/synth_${1}_v${V}_$MIX.gguf
    [ -f "$f" ] || "$B" synth --config "$2" --type "$MIX" --seed 1 -o "$f" >&2
    echo "$f"
}
L8=llama:4096,14336 # Llama-3.1-8B: dim, hidden; then layers, heads, kv heads, vocabulary, context
t11=$(cached 1.1B 1.1B) d11=$(cached 110M 110M)
t8a=$(cached 8B-1layer $L8,1,32,8,128256,2048)
t8b=$(cached 8B-4layers $L8,4,32,8,128256,2048)
d8=$(cached llama-3.2-1b llama-3.2-1b)
# heads NAME CONFIG eagle|medusa: a random f16 head of a target's shape, written on first use
heads() {
    local d=$CACHE/head_${1}_v${V}_f16
    [ -f "$d/config.json" ] || "$B" synth --config "$2" --head "$3" --heads 4 --seed 1 -o "$d" >&2
    echo "$d"
}
he11=$(heads eagle-1.1B 1.1B eagle) hm11=$(heads medusa-1.1B 1.1B medusa)
he8=$(heads eagle-8B $L8,1,32,8,128256,2048 eagle) hm8=$(heads medusa-8B $L8,1,32,8,128256,2048 medusa)

W=$(mktemp -d)
DB=$W/pair.db
# REST's datastore: TinyStories records 64 on, so no measured prompt's continuation is in it
"$B" datastore build --model "$M/stories260K.bin" --from tinystories --offset 64 -o "$W/ts.ds" >/dev/null
DECODERS=(greedy jacobi:window=4 lookahead:W=4,N=3,G=4 lookahead:W=15,N=5,G=15 pld:ngram=2,k=4
          pld:ngram=3,k=10 spec:gamma=2 spec:gamma=4 ouroboros:gamma=2,W=4
          ouroboros:gamma=4,W=20,beta=8,K=3 tree tree:mode=dynamic tree:mode=sequoia,nodes=8
          tree:mode=sequoia,nodes=16 suffix suffix:budget=4 recycle recycle:nodes=8
          recycle:tree=sequoia,nodes=8 sam "rest:ds=$W/ts.ds" "rest:ds=$W/ts.ds,num_draft=8"
          eagle:head=tests/data/heads/stories260K-eagle
          eagle:head=tests/data/heads/stories260K-eagle,total_tokens=16,depth=4,top_k=4
          medusa:head=tests/data/heads/stories260K-medusa,nodes=15
          medusa:head=tests/data/heads/stories260K-medusa)
# Not skip: its drafts are the target's own passes with layers left out, which neither the
# target's curve (every layer) nor a draft model's prices; bench/skip.sh prices them on models of
# the layers they run.
args=()
for d in "${DECODERS[@]}"; do args+=(--decoder "$d"); done
echo "# $(uptime)"
"$B" run --model "$M/stories260K.bin" --draft "$M/llama2xs.bin" --dataset tinystories --limit "$LIMIT" \
    --max-new "$MAX_NEW" --threads "$THREADS" --trace --db "$DB" "${args[@]}" >/dev/null 2>"$W/run.log"

curve() { # MODEL CSV: the grid over the rows and contexts the pair's passes used
    "$B" cost --model "$1" --rows 1,2,4,8,16,32,64,128 --context 32,288 \
        --threads "$THREADS" --seconds "${SECONDS_MS}ms" --no-bandwidth --csv "$2" >"$2.txt"
}
curve "$t11" "$W/1.1B.csv"
curve "$d11" "$W/110M.csv"
curve "$t8a" "$W/8B-1layer.csv"
curve "$t8b" "$W/8B-4layers.csv"
curve "$d8" "$W/1B.csv"
hcurve() { # TARGET HEAD CSV ROWS: a head's pass (eagle: its appends and tree levels; medusa: K heads)
    "$B" cost --model "$1" --head "$2" --rows "$4" --context 32,288 \
        --threads "$THREADS" --seconds "${SECONDS_MS}ms" --no-bandwidth --csv "$3" >"$3.txt"
}
hcurve "$t11" "$he11" "$W/eagle-1.1B.csv" 1,2,4,8,16,32,64
hcurve "$t11" "$hm11" "$W/medusa-1.1B.csv" 1,2,3,4
hcurve "$t8a" "$he8" "$W/eagle-8B.csv" 1,2,4,8,16,32,64
hcurve "$t8a" "$hm8" "$W/medusa-8B.csv" 1,2,3,4
# the 8B curve from the 1- and 4-layer ones (same points, same order)
paste -d, "$W/8B-1layer.csv" "$W/8B-4layers.csv" | awk -F, '
    /^#/ {next} /^rows/ {print "rows,seconds,context,logit_rows"; next}
    {printf "%s,%.9g,%s,%s\n", $1, $2 + 31 * ($6 - $2) / 3, $3, $4}' >"$W/8B.csv"

project() { # TITLE TARGET_CSV DRAFT_CSV [EAGLE_CSV MEDUSA_CSV]
    echo
    echo "## $1"
    "$B" report --db "$DB" --layout projected --project-cost "$2" --project-draft-cost "$3" |
        grep -v '^$' | grep -Ev '^\| [a-z]+ +\| (eagle|medusa):'
    [ $# -ge 5 ] || return 0
    echo
    echo "eagle and medusa, their head passes priced on the curves of random heads of the target's shape:"
    "$B" report --db "$DB" --layout projected --project-cost "$2" --project-draft-cost "$4" |
        grep -E '^\| [a-z]+ +\| eagle:'
    "$B" report --db "$DB" --layout projected --project-cost "$2" --project-draft-cost "$5" |
        grep -E '^\| [a-z]+ +\| medusa:'
}
project "TinyStories pair measured here, projected onto a 1.1B target (draft: 110M shape)" \
    "$W/1.1B.csv" "$W/110M.csv" "$W/eagle-1.1B.csv" "$W/medusa-1.1B.csv"
project "... onto a 1.1B target with a draft as large as the target (the pair's own ratio)" \
    "$W/1.1B.csv" "$W/1.1B.csv"
project "... onto an 8B target (Llama-3-8B shape, 1 and 4 layers measured, 32 extended; draft: Llama-3.2-1B shape)" \
    "$W/8B.csv" "$W/1B.csv" "$W/eagle-8B.csv" "$W/medusa-8B.csv"
if [ "$CHECK8B" = 1 ]; then
    # the whole 8B model at a few points, beside the curve extended from 1 and 4 layers
    t8=$(cached llama-3.1-8b llama-3.1-8b)
    "$B" cost --model "$t8" --rows 1,8,16 --context 32 --threads "$THREADS" --seconds 1ms \
        --no-bandwidth --csv "$W/8B-whole.csv" >"$W/8B-whole.csv.txt"
    echo
    echo "8B, whole model against the curve extended from 1 and 4 layers (ms per pass, context 32):"
    awk -F, 'FNR == NR && /^[0-9]/ {w[$1 "," $3 "," $4] = $2; next}
        /^[0-9]/ && ($1 "," $3 "," $4) in w {k = $1 "," $3 "," $4;
            printf "  rows %s, logit rows %s: whole %.1f, extended %.1f (%+.0f%%)\n", $1, $4,
                1e3 * w[k], 1e3 * $2, 100 * ($2 / w[k] - 1)}' "$W/8B-whole.csv" "$W/8B.csv"
fi
echo
for f in 1.1B 110M 8B 1B eagle-1.1B medusa-1.1B eagle-8B medusa-8B; do
    awk -F, -v n=$f '$1 == 1 && $4 == 1 && !seen++ {printf "t(1) %s: %.2f ms   ", n, 1e3 * $2}' "$W/$f.csv"
done
echo
echo "# $(uptime)"
echo "files: $W (pair.db, curves *.csv with the cost output *.csv.txt)"
