#!/usr/bin/env bash
# bench/recycle.sh: Token Recycling against greedy, prompt lookup, SuffixDecoding and lookahead
# decoding on TinyStories prompts (stories260K target, the TinyStories pair's; then llama2xs as
# the target), one run per target: tokens and rows per step, mean accepted length, tok/s and
# speed-up (decbench report's summary), the decoders' own counters, then each run's passes
# priced on the cost curve of a 110M-shaped target on this CPU (report --layout projected).
#
#   bash bench/recycle.sh [BUILD_DIR]      (LIMIT=10 prompts, MAX_NEW=256, THREADS=1)
#
# Decoders: pld ngram=3,k=10 (Spec-Bench), suffix with its defaults (warm), lookahead
# W=15,N=5,G=15 (LADE's MT-Bench script) and W=4,N=3,G=4 (a CPU-sized window); recycle with the
# paper's defaults (k=8, the reference's 80-node template, the matrix kept across prompts), cold
# (warm=0), and capped at 32, 16 and 8 nodes. Timings are noisy on a shared machine: compare
# figures of the same run only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-10} MAX_NEW=${MAX_NEW:-256} THREADS=${THREADS:-1}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
DB=$(mktemp -d)/recycle.db
source bench/cache.sh
for target in stories260K llama2xs; do
    $B run --model "$M/$target.bin" --dataset tinystories --limit "$LIMIT" --max-new "$MAX_NEW" \
        --repeats 1 --warmup 1 --threads "$THREADS" --db "$DB" --decoder greedy \
        --decoder pld:ngram=3,k=10 --decoder suffix --decoder lookahead:W=15,N=5,G=15 \
        --decoder lookahead:W=4,N=3,G=4 --decoder recycle --decoder recycle:warm=0 \
        --decoder recycle:nodes=32 --decoder recycle:nodes=16 --decoder recycle:nodes=8 \
        --label "recycle-$target" >/dev/null
done
f=$(synth_cached 110M)
$B cost --model "$f" --rows 1,2,4,8,16,32,64,128 --threads "$THREADS" --no-bandwidth \
    --seconds 200ms --csv "$CACHE/cost_110M_t$THREADS.csv" >/dev/null
for run in 1 2; do
    $B report --db "$DB" --run "$run"
    $B report --db "$DB" --run "$run" --layout counters
    $B report --db "$DB" --run "$run" --layout projected --project-cost "$CACHE/cost_110M_t$THREADS.csv"
done
echo "database: $DB"
