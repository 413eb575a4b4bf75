#!/usr/bin/env bash
# bench/rest.sh: REST (rest) against greedy, prompt lookup, SuffixDecoding and lookahead on
# TinyStories prompts, stories260K as target (then llama2xs), one run each: tokens per target
# step, rows per step, tau, speed-up; then the same decoders' speed-up projected onto the cost
# curve of a 110M-shaped target on this CPU.
#
#   bash bench/rest.sh [BUILD_DIR]      (LIMIT=20 prompts, MAX_NEW=256, THREADS=1)
#
# The datastore: the paragraphs of the TinyStories records from 64 on (the prompts measured are
# the first LIMIT <= 64), tokenized with tok512 (`decbench datastore build --from tinystories
# --offset 64`): no measured prompt's continuation is in it. Parameters: REST's defaults
# (max_span 16, num_draft 64, the retriever's 10 tokens and 5000 occurrences) and num_draft 16;
# pld:ngram=3,k=10 (Spec-Bench), suffix at its defaults, lookahead W=15,N=5,G=15 (LADE).
# Timings are noisy on a shared machine: compare figures of the same run only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-20} MAX_NEW=${MAX_NEW:-256} THREADS=${THREADS:-1}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
T=$(mktemp -d)
DB=$T/rest.db
source bench/cache.sh
$B datastore build --model "$M/stories260K.bin" --from tinystories --offset 64 -o "$T/ts.ds"
for target in stories260K llama2xs; do
    $B run --model "$M/$target.bin" --dataset tinystories --limit "$LIMIT" --max-new "$MAX_NEW" \
        --repeats 1 --warmup 1 --threads "$THREADS" --db "$DB" --label "rest-$target" \
        --decoder greedy --decoder pld:ngram=3,k=10 --decoder suffix \
        --decoder lookahead:W=15,N=5,G=15 --decoder "rest:ds=$T/ts.ds" \
        --decoder "rest:ds=$T/ts.ds,num_draft=16" >/dev/null
done
$B report --db "$DB" --run 1
$B report --db "$DB" --run 2
$B report --db "$DB" --run 1 --layout counters
f=$(synth_cached 110M)
$B cost --model "$f" --rows 1,2,4,8,16,32,64,128 --threads "$THREADS" --no-bandwidth \
    --seconds 200ms --csv "$CACHE/cost_110M_t$THREADS.csv" >/dev/null
$B report --db "$DB" --run 1 --layout projected --project-cost "$CACHE/cost_110M_t$THREADS.csv"
echo "database: $DB"
