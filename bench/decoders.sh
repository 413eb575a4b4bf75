#!/usr/bin/env bash
# bench/decoders.sh: every decoder with its paper-default parameters on TinyStories prompts,
# stories260K as target and llama2xs as draft, all measured in one run against greedy:
# tokens per target step, rows per step, mean accepted length, draft and bookkeeping shares of
# wall time, tok/s and wall-clock speed-up over greedy (decbench report's summary), then the
# same decoders' speed-up projected onto the cost curve of a 110M-shaped target on this CPU.
#
#   bash bench/decoders.sh [BUILD_DIR]      (LIMIT=20 prompts, MAX_NEW=256, THREADS=nproc)
#
# Paper defaults: lookahead W=15,N=5,G=15 (LADE's MT-Bench script), Jacobi window 16,
# speculative gamma=4, Ouroboros gamma=4,W=20,beta=8,K=3 (Ouroboros' defaults: W=G=20,
# top-3 suffixes), prompt lookup ngram=3,k=10 (Spec-Bench), token trees: the static tree
# 4-2-2-1 (SpecInfer-style, 44 nodes), EAGLE-2's dynamic tree with a 16-token budget (depth 6,
# top-4), and llama.cpp's p_split=0.1 with 4 branches and n_draft 16; SuffixDecoding: depth
# 24 (vLLM's default), alpha 1, min_prob 0.1 (the reference's), a budget of 16.
# Then quantized self-speculation (--draft self:q8_0 and self:q4_0: the target requantized in
# memory, no second model) with spec, tree and Ouroboros, one run per draft type.
# Timings are noisy on a shared machine: compare figures of the same run only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-20} MAX_NEW=${MAX_NEW:-256} THREADS=${THREADS:-$(nproc)}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
DB=$(mktemp -d)/decoders.db
source bench/cache.sh
$B run --model "$M/stories260K.bin" --draft "$M/llama2xs.bin" --dataset tinystories \
    --limit "$LIMIT" --max-new "$MAX_NEW" --repeats 1 --warmup 1 --threads "$THREADS" --db "$DB" \
    --decoder greedy --decoder jacobi:window=16 --decoder lookahead:W=15,N=5,G=15 \
    --decoder spec:gamma=4 --decoder ouroboros:gamma=4,W=20,beta=8,K=3 \
    --decoder pld:ngram=3,k=10 --decoder tree --decoder tree:mode=dynamic \
    --decoder tree:mode=split --decoder suffix --label paper-defaults >/dev/null
$B report --db "$DB"
for q in q8_0 q4_0; do
    SELF=$(dirname "$DB")/self_$q.db
    $B run --model "$M/stories260K.bin" --draft "self:$q" --dataset tinystories \
        --limit "$LIMIT" --max-new "$MAX_NEW" --repeats 1 --warmup 1 --threads "$THREADS" \
        --db "$SELF" --decoder spec:gamma=4 --decoder tree \
        --decoder ouroboros:gamma=4,W=20,beta=8,K=3 --label "self-$q" >/dev/null
    echo
    echo "draft self:$q"
    $B report --db "$SELF"
done

# Projection: the rows and steps measured above, priced with a 110M-shaped target's cost curve.
f=$(synth_cached 110M)
$B cost --model "$f" --rows 1,2,4,8,16,32,64,128 --threads "$THREADS" --no-bandwidth --seconds 200ms \
    --csv "$CACHE/cost_110M.csv" >/dev/null
echo
$B report --db "$DB" --layout projected --project-cost "$CACHE/cost_110M.csv"
echo "database: $DB"
