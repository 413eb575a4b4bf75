#!/usr/bin/env bash
# bench/sampling.sh: the figures behind the header comments of the sampling and draft-length
# options, on stories260K (target) and llama2xs (draft), the first LIMIT TinyStories prompts x
# MAX_NEW new tokens, one run per part (every figure of a part is measured against greedy in
# the same run):
#   1. dynamic draft length (llama.cpp's p_min, Hugging Face's adapt) at temperature 0: spec
#      and Ouroboros with p_min and adapt=1, stop reasons (decoder counters);
#   2. reference-faithful options (what the papers' code does): Ouroboros trim=1 (its draft cut
#      to gamma, as the reference), lookahead's LADE start (init=lade, fill_prefill=1);
#   3. sampling at T=0.8: coupled (tokens equal plain sampling's: exact %) and
#      standard (acceptance against its theoretical rate, printed by run), tokens per step and
#      the cost of choosing tokens (book %).
#
#   bash bench/sampling.sh [BUILD_DIR]      (LIMIT=20, MAX_NEW=256, THREADS=nproc, PARTS=123)
# Timings are noisy on a shared machine: compare figures of the same run only; the step counts
# are deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/decbench
LIMIT=${LIMIT:-20} MAX_NEW=${MAX_NEW:-256} THREADS=${THREADS:-$(nproc)} PARTS=${PARTS:-123}
shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
T=$(mktemp -d)
run() { # DB LABEL [options and decoders]
    local db=$1 label=$2; shift 2
    $B run --model "$M/stories260K.bin" --draft "$M/llama2xs.bin" --dataset tinystories \
        --limit "$LIMIT" --max-new "$MAX_NEW" --repeats 1 --warmup 1 --threads "$THREADS" \
        --db "$db" --label "$label" "$@" >/dev/null 2>"$db.err"
}
# steps DB: per decoder, target steps, draft passes and tokens/step (deterministic figures)
steps() {
    python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("| decoder | target steps | draft passes | tokens/step | accept % |")
print("|---|---:|---:|---:|---:|")
for spec, steps, dsteps, tok, acc, dr in c.execute(
        "SELECT spec, SUM(target_steps), SUM(draft_steps), SUM(new_tokens), SUM(accepted), "
        "SUM(drafted) FROM samples GROUP BY spec ORDER BY MIN(id)"):
    print(f"| {spec} | {steps} | {dsteps} | {tok / steps:.2f} | "
          f"{100 * acc / dr if dr else 0:.1f} |")
PY
}

if [[ $PARTS == *1* ]]; then
echo "## 1. Dynamic draft length (temperature 0)"
run "$T/dyn.db" dynamic --decoder spec:gamma=4 --decoder spec:gamma=4,p_min=0.75 \
    --decoder spec:gamma=4,p_min=0.5 --decoder spec:gamma=8,p_min=0.75 --decoder spec:gamma=4,adapt=1 \
    --decoder spec:gamma=4,adapt=1,p_min=0.75 --decoder ouroboros:gamma=4,W=20,beta=8,K=3 \
    --decoder ouroboros:gamma=4,W=20,beta=8,K=3,p_min=0.75 \
    --decoder ouroboros:gamma=4,W=20,beta=8,K=3,adapt=1
steps "$T/dyn.db"
$B report --db "$T/dyn.db"
$B report --db "$T/dyn.db" --layout counters | grep -E "stop_|draft_goal|^\| dataset|^\|--" || true
fi

if [[ $PARTS == *2* ]]; then
echo "## 2. Reference-faithful options (temperature 0)"
run "$T/ref.db" reference --decoder ouroboros:gamma=2,W=20,beta=8,K=3 \
    --decoder ouroboros:gamma=2,W=20,beta=8,K=3,trim=1 --decoder ouroboros:gamma=4,W=20,beta=8,K=3 \
    --decoder ouroboros:gamma=4,W=20,beta=8,K=3,trim=1 --decoder lookahead:W=15,N=5,G=15 \
    --decoder lookahead:W=15,N=5,G=15,init=lade --decoder lookahead:W=15,N=5,G=15,fill_prefill=1 \
    --decoder lookahead:W=15,N=5,G=15,init=lade,fill_prefill=1 --decoder lookahead:W=4,N=3,G=4 \
    --decoder lookahead:W=4,N=3,G=4,init=lade,fill_prefill=1
steps "$T/ref.db"
$B report --db "$T/ref.db"
fi

SPECS=(--decoder jacobi:window=16 --decoder lookahead:W=15,N=5,G=15 --decoder spec:gamma=4
       --decoder ouroboros:gamma=4,W=20,beta=8,K=3 --decoder pld:ngram=3,k=10)
for mode in coupled standard; do
    [[ $PARTS == *3* ]] || break
    echo "## 3. Sampling, $mode, T=0.8"
    run "$T/$mode.db" "$mode" --temperature 0.8 --sampling "$mode" --seed 1 "${SPECS[@]}"
    steps "$T/$mode.db"
    $B report --db "$T/$mode.db"
    grep "sampling check" "$T/$mode.db.err" || true
done
echo "databases: $T"
