#!/usr/bin/env bash
# cli_run_interrupt.sh: Ctrl-C (SIGINT) in the middle of `decbench run` stores whole samples
# only, marks the run 'incomplete', exits 130 and prints the resume command; `--resume RUN_ID`
# then measures exactly the missing samples, keeps the stored ones, and completes the run.
# Ctrl-C in the middle of one long sample stops it without storing it.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_run_interrupt}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin

# Enough work that the run is still going when the first samples are stored: 30 prompts x
# (greedy + lookahead) x 64 tokens, about 5 s here (much more under a sanitizer).
ARGS=(run --model "$M" --dataset tinystories --limit 30 --max-new 64 --threads 1 --warmup 0
    --decoder 'lookahead:W=8,N=4,G=8' --trace --db "$T/r.db")
$B "${ARGS[@]}" >run1.out 2>run1.err &
pid=$!
stored=0
for _ in $(seq 600); do # poll the database until a lookahead sample is stored (60 s at most)
    stored=$(q "$T/r.db" "SELECT COUNT(*) FROM samples WHERE decoder = 'lookahead'")
    [ "${stored:-0}" -ge 1 ] && break
    sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
expect_eq exit_130 130 $rc
n1=$(q "$T/r.db" "SELECT COUNT(*) FROM samples")
expect_eq status_incomplete incomplete "$(q "$T/r.db" "SELECT status FROM runs")"
if [ "$n1" -ge 1 ] && [ "$n1" -lt 60 ]; then passes=$((passes + 1))
else echo "FAIL partial_count: $n1 samples stored (want 1..59; did the run end before the signal?)"; fails=$((fails + 1)); fi
# only whole samples: each has its histograms and a full trace; the database is sound
expect_eq whole_samples "0" "$(q "$T/r.db" "SELECT COUNT(*) FROM samples s WHERE
    NOT EXISTS (SELECT 1 FROM histograms h WHERE h.sample_id = s.id) OR
    target_steps != (SELECT COUNT(*) FROM trace t WHERE t.sample_id = s.id)")"
expect_eq integrity "ok" "$(q "$T/r.db" "PRAGMA integrity_check")"
expect_eq foreign_keys "" "$(q "$T/r.db" "PRAGMA foreign_key_check")"
grep -q "interrupted: run 1 is incomplete" run1.err && grep -q -- "--resume 1$" run1.err &&
    passes=$((passes + 1)) || { echo "FAIL resume_hint:"; cat run1.err; fails=$((fails + 1)); }
before=$(q "$T/r.db" "SELECT group_concat(id || ':' || output_hash) FROM samples")

# a different decoder list cannot resume it
$B run --model "$M" --dataset tinystories --limit 30 --max-new 64 --threads 1 --db "$T/r.db" --resume 1 >/dev/null 2>wrong.err
expect_eq resume_other_decoders 1 $?
grep -q "the run holds samples of lookahead:W=8,N=4,G=8" wrong.err && passes=$((passes + 1)) ||
    { echo "FAIL resume_other_decoders message:"; cat wrong.err; fails=$((fails + 1)); }

# the command the interrupted run printed, with --resume 1
$B "${ARGS[@]}" --resume 1 >run2.out 2>run2.err
expect_eq resume_exit 0 $?
expect_eq resumed_complete "complete|60|60|60" "$(q "$T/r.db" "SELECT status, (SELECT COUNT(*) FROM samples),
    (SELECT SUM(matched) FROM samples), (SELECT COUNT(DISTINCT sample_index || spec) FROM samples) FROM runs")"
expect_eq kept_stored "$before" "$(q "$T/r.db" "SELECT group_concat(id || ':' || output_hash) FROM samples WHERE id <= ${n1:-0}")"
grep -q "$((60 - n1)) sample(s) measured, $n1 already stored" run2.err && passes=$((passes + 1)) ||
    { echo "FAIL resume_counts:"; cat run2.err; fails=$((fails + 1)); }
expect_eq one_run "1" "$(q "$T/r.db" "SELECT COUNT(*) FROM runs")"

# One long sample (Ouroboros, 400 tokens: seconds here, minutes under a sanitizer) interrupted
# while it runs: it stops within a pass and is not stored; before the cancel hook it ran to
# its end and was stored (2 samples).
D=$S/models/llama2xs.bin
ARGS2=(run --model "$M" --draft "$D" --dataset tinystories --limit 1 --max-new 400 --threads 1
    --warmup 0 --decoder ouroboros --db "$T/long.db")
$B "${ARGS2[@]}" >long1.out 2>long1.err &
pid=$!
for _ in $(seq 600); do # until greedy's sample is stored; the Ouroboros sample then starts
    [ "$(q "$T/long.db" "SELECT COUNT(*) FROM samples")" = 1 ] && break
    sleep 0.1
done
sleep 0.5
kill -INT $pid
wait $pid
expect_eq long_exit_130 130 $?
expect_eq long_not_stored "incomplete|1|greedy" "$(q "$T/long.db" "SELECT status, (SELECT COUNT(*) FROM samples),
    (SELECT group_concat(decoder) FROM samples) FROM runs")"
$B "${ARGS2[@]}" --resume 1 >long2.out 2>long2.err
expect_eq long_resumed "0|complete|2|2" "$?|$(q "$T/long.db" "SELECT status, (SELECT COUNT(*) FROM samples),
    (SELECT SUM(matched) FROM samples) FROM runs")"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
