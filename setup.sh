#!/usr/bin/env bash
# setup.sh: everything a new user needs on Debian 12, in one command:
#  1. installs the Debian packages (deps.sh),
#  2. builds decbench (Release, for this CPU) into build/,
#  3. runs the main job: a small benchmark of a few TinyStories prompts through several decoders
#     on the default models (stories260K target, llama2xs draft) into results/decbench.db (the
#     default database, so `decbench report` and `decbench plot` work right after), with the
#     equality check against greedy, then prints the report and draws the figures into
#     results/plots/. Runs already in the database are kept: a run is added.
# Data come from ../shared (or $DECBENCH_SHARED); see README.md for getting them elsewhere.
set -euo pipefail
cd "$(dirname "$0")"
bash ./deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "built build/decbench"

shared=${DECBENCH_SHARED:-../shared}
M=${DECBENCH_MODELS:-$shared/models}
B=build/decbench
DB=results/decbench.db
$B run --model "$M/stories260K.bin" --draft "$M/llama2xs.bin" --dataset tinystories --limit 4 \
    --max-new 128 --repeats 2 --warmup 1 --db "$DB" \
    --decoder greedy --decoder jacobi --decoder lookahead:W=5,N=4,G=5 --decoder pld \
    --decoder spec:gamma=4 --decoder ouroboros:gamma=4,W=5,beta=4,K=3 --label demo
$B report --db "$DB"
$B plot --db "$DB" --out results/plots
echo "results: $DB, figures in results/plots/ (speedup, position, tradeoff, ...: .png and .svg)"
echo "decbench is build/decbench: put it on your PATH for the README's commands, e.g."
echo "  export PATH=\"$PWD/build:\$PATH\"     (this shell), or"
echo "  cmake --install build --prefix ~/.local   (then ~/.local/bin/decbench, man decbench)"
