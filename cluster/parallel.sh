#!/usr/bin/env bash
# cluster/parallel.sh: one decbench run or sweep cut into N shards, run by GNU parallel
# (Debian package `parallel`), then merged into one database.
#
#   cluster/parallel.sh N OUT.db decbench sweep --model M --dataset D --grid '...' [options]
#
# Shard I of N writes SHARDS/shard-I.db (SHARDS = OUT.db's name + ".shards/") and its log
# beside it; `decbench merge OUT.db SHARDS/shard-*.db` runs when all succeeded. Environment:
#   JOBS=K            shards at a time (default: one per 4 cores, at least 1; each shard uses
#                     --threads of its own, so JOBS x threads should not exceed the cores)
#   PARALLEL_OPTS=... more options for parallel, e.g. "-S host1,host2 --workdir ." to spread
#                     the shards over machines that share this folder (the models and data
#                     must be at the same paths there)
# Re-running the script picks up where it stopped: a shard that finished (SHARDS/shard-I.done)
# is not run again, a failed one is started afresh (delete SHARDS to redo everything).
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
N=$1 OUT=$2
shift 2
SHARDS=${OUT%.db}.shards
mkdir -p "$SHARDS"
cores=$(nproc 2>/dev/null || echo 4)
JOBS=${JOBS:-$(( cores / 4 > 0 ? cores / 4 : 1 ))}
# shellcheck disable=SC2086
seq 1 "$N" | parallel --will-cite --halt soon,fail=1 -j "$JOBS" ${PARALLEL_OPTS:-} \
    "test -e $SHARDS/shard-{}.done || { rm -f $SHARDS/shard-{}.db*; $(printf '%q ' "$@") --shard {}/$N --db $SHARDS/shard-{}.db > $SHARDS/shard-{}.log 2>&1 && touch $SHARDS/shard-{}.done; }"
"$1" merge "$OUT" "$SHARDS"/shard-*.db
