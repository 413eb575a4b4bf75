#!/usr/bin/env bash
# setup.sh: everything a new user needs on Debian 12, in one command:
#  1. installs the Debian packages (deps.sh),
#  2. builds decbench (Release, for this CPU) into build/,
#  3. runs the main job: a small benchmark of a few TinyStories prompts through several decoders
#     on the default models (stories260K target, llama2xs draft) into results/decbench.db (the
#     default database, so `decbench report` and `decbench plot` work right after), with the
#     equality check against greedy; `run` prints its table (once: no second `report`), one line
#     says why every decoder is slower than greedy on so small a model, and the figures go to
#     results/plots/. Runs already in the database are kept: a run is added.
# Data come from ../shared (or $DECBENCH_SHARED); see README.md for getting them elsewhere.
# `./setup.sh --train` instead only installs what train/ needs besides (Debian's python3-torch and
# python3-numpy, for training EAGLE/Medusa heads: train/README.md) and stops.
set -euo pipefail
cd "$(dirname "$0")"
case "${1:-}" in
    "") ;;
    --train)
        bash ./deps.sh --train
        echo "installed python3-torch and python3-numpy: see train/README.md (run with /usr/bin/python3)"
        exit 0 ;;
    *) echo "usage: setup.sh [--train]" >&2; exit 2 ;;
esac
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
echo "Slower than greedy everywhere? That is the model: stories260K's weights sit in cache, so a"
echo "pass costs in proportion to its rows, and every extra row verified is lost time. On a model"
echo "that does not fit in cache a pass of a few rows costs about one row's time: \`decbench cost\`"
echo "measures this machine's curve and \`decbench report --layout projected --project-cost FILE\`"
echo "prices these runs on it (README, \"Cost at scale\")."
$B plot --db "$DB" --out results/plots
echo "results: $DB (definitions and full specs: decbench report --explain), figures in"
echo "results/plots/ (speedup, position, tradeoff, ...: .png and .svg)"
echo "decbench is build/decbench: put it on your PATH for the README's commands, e.g."
echo "  export PATH=\"$PWD/build:\$PATH\"     (this shell), or"
echo "  cmake --install build --prefix ~/.local   (then ~/.local/bin/decbench, man decbench)"
