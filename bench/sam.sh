#!/usr/bin/env bash
# bench/sam.sh: SAM-Decoding against prompt lookup, SuffixDecoding and lookahead decoding on
# TinyStories prompts, each run against greedy in the same run:
#   A. no datastore, stories260K and llama2xs targets: pld ngram=3,k=10 (Spec-Bench), suffix
#      cold (warm=0: the prompt and output only, as sam's dynamic automaton) and warm (the run's
#      earlier outputs too), lookahead W=15,N=5,G=15 (LADE), sam at its defaults and with
#      threshold 1 and 2 and draft lengths 8 and 39 (the reference's n_predicts 40);
#   B. a datastore: suffix's outputs on the prompts after the measured ones (--offset LIMIT,
#      STORE_PROMPTS of them, written with --state-save), loaded into sam (threshold 5 and 2,
#      bias 0) and into suffix with --state-load, measured on the first LIMIT prompts.
#
#   bash bench/sam.sh [BUILD_DIR]      (LIMIT=10, STORE_PROMPTS=40, MAX_NEW=128, THREADS=1)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-10} STORE_PROMPTS=${STORE_PROMPTS:-40} MAX_NEW=${MAX_NEW:-128} THREADS=${THREADS:-1}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
D=$(mktemp -d)
common=(--dataset tinystories --max-new "$MAX_NEW" --threads "$THREADS")
sam_specs=(--decoder sam --decoder sam:threshold=1 --decoder sam:threshold=2 --decoder sam:k=8
    --decoder sam:k=39)
for target in stories260K llama2xs; do
    $B run --model "$M/$target.bin" "${common[@]}" --limit "$LIMIT" --repeats 1 --warmup 1 \
        --db "$D/$target.db" --decoder greedy --decoder pld --decoder suffix:warm=0 \
        --decoder suffix --decoder lookahead:W=15,N=5,G=15 "${sam_specs[@]}" \
        --label no-store >/dev/null
    echo "target $target, no datastore"
    $B report --db "$D/$target.db"
    $B report --db "$D/$target.db" --layout counters | grep -E 'sam\.|suffix\.(spec|global_steps)'
done
$B run --model "$M/stories260K.bin" "${common[@]}" --offset "$LIMIT" --limit "$STORE_PROMPTS" \
    --warmup 0 --db "$D/store.db" --decoder suffix --state-save "$D/store.bin" >/dev/null
$B run --model "$M/stories260K.bin" "${common[@]}" --limit "$LIMIT" --repeats 1 --warmup 1 \
    --db "$D/with_store.db" --decoder greedy --decoder sam --decoder sam:threshold=2 \
    --decoder sam:bias=0 --decoder suffix --state-load "$D/store.bin" --label store >/dev/null
echo "target stories260K, the datastore of $STORE_PROMPTS other prompts' outputs"
$B report --db "$D/with_store.db"
$B report --db "$D/with_store.db" --layout counters | grep -E 'sam\.|suffix\.(spec|global_steps)'
echo "databases: $D"
