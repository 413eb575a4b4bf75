#!/usr/bin/env bash
# bench/suffix.sh: SuffixDecoding against prompt lookup and lookahead decoding on the code,
# summarisation and chat sets of the SuffixDecoding and Spec-Bench evaluations: HumanEval,
# MBPP, CNN/DailyMail and MT-Bench, each in its own run against greedy (stories260K target,
# the first LIMIT prompts that fit its 512-token context, up to MAX_NEW new tokens).
#
#   bash bench/suffix.sh [BUILD_DIR]      (LIMIT=20, MAX_NEW=256, THREADS=nproc)
#
# Templates: each dataset's default (HumanEval: Ouroboros' completion prompt; MT-Bench:
# LADE's), except MBPP (Ouroboros' 0-shot prompt: the few-shot one is longer than the
# context) and CNN/DM (the raw article: only one of its 80 fits the context, whatever the
# template, so all 80 are tried and that one is measured).
# Decoders: pld ngram=3,k=10 (Spec-Bench), lookahead W=15,N=5,G=15 (LADE's MT-Bench script)
# and W=4,N=3,G=4 (a CPU-sized window), suffix with its defaults, warm (the global tree of the
# run's earlier outputs) and cold (warm=0). The only real weights here are TinyStories models:
# whatever the prompt, they continue it as a children's story, so these figures measure how
# much of that text each method predicts from the prompt and from earlier outputs, not how
# they would do on code or summaries from a model trained for them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-20} MAX_NEW=${MAX_NEW:-256} THREADS=${THREADS:-$(nproc)}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
DB=$(mktemp -d)/suffix.db
runs=()
for set in humaneval: mbpp:ouroboros-0shot cnn_dm:raw:80 mt_bench:; do
    IFS=: read -r ds template limit <<<"$set"
    tpl=()
    [ -z "$template" ] || tpl=(--template "$template")
    $B run --model "$M/stories260K.bin" --dataset "$ds" "${tpl[@]}" --skip-long \
        --limit "${limit:-$LIMIT}" --max-new "$MAX_NEW" --repeats 1 --warmup 1 --threads "$THREADS" \
        --db "$DB" --decoder pld:ngram=3,k=10 --decoder lookahead:W=15,N=5,G=15 \
        --decoder lookahead:W=4,N=3,G=4 --decoder suffix --decoder suffix:warm=0 \
        --label "suffix-$ds" >/dev/null
    runs+=("$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT MAX(id) FROM runs").fetchone()[0])' "$DB")")
done
$B report --db "$DB" --run "$(IFS=,; echo "${runs[*]}")"
$B report --db "$DB" --run "$(IFS=,; echo "${runs[*]}")" --layout counters
echo "database: $DB"
