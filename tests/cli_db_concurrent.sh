#!/usr/bin/env bash
# cli_db_concurrent.sh: several decbench processes on one database at once.
#   1. 4 runs started together on a database that does not exist yet all succeed, 10 times
#      over (before every connection had a busy timeout, about 1 process in 10 failed with
#      "database is locked": the read-only probe met the creator's lock);
#   2. two `--resume` of one run: the second refuses at once, naming the run, while the first
#      measures it (before, both measured it and one died on a UNIQUE constraint and marked the
#      run failed); the first completes it with exactly the samples of an uninterrupted run;
#   3. a --resume while the run's own first process is still measuring it is refused too;
#   4. a run whose process was killed (kill -9, left 'running') is resumable at once: the
#      claim is a kernel lock that dies with its process.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_db_concurrent}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
outputs() { # DB: the count and a digest of every (prompt, decoder, output hash) stored
    q "$1" "SELECT sample_index || ' ' || spec || ' ' || output_hash FROM samples ORDER BY 1" |
        { mapfile -t rows; printf '%d %s' "${#rows[@]}" "$(printf '%s\n' "${rows[@]}" | md5sum)"; }
}

# 1. concurrent creation
failed=0
for round in $(seq 10); do
    pids=()
    for i in 1 2 3 4; do
        $B run --model "$M" --dataset tinystories --limit 1 --max-new 4 --threads 1 --warmup 0 \
            --db "new$round.db" >/dev/null 2>"create$round.$i.err" &
        pids+=($!)
    done
    for i in 1 2 3 4; do
        wait "${pids[$((i - 1))]}" || { failed=$((failed + 1)); echo "round $round process $i: $(tail -1 "create$round.$i.err")"; }
    done
done
expect_eq concurrent_creation_failures 0 $failed
expect_eq concurrent_runs "40" "$(for r in $(seq 10); do q "new$r.db" "SELECT COUNT(*) FROM runs WHERE status = 'complete'"; done | awk '{s += $1} END {print s}')"

# 2. two resumes of one interrupted run. The reference: the same workload uninterrupted.
ARGS=(run --model "$M" --dataset tinystories --limit 40 --max-new 64 --threads 1 --warmup 0
    --decoder 'lookahead:W=8,N=4,G=8')
$B "${ARGS[@]}" --db ref.db >/dev/null 2>ref.err
expect_eq reference_run 0 $?
$B "${ARGS[@]}" --db r.db >/dev/null 2>first.err &
pid=$!
wait_samples r.db 2
kill -INT $pid
wait $pid
expect_eq interrupted 130 $?
$B "${ARGS[@]}" --db r.db --resume 1 >/dev/null 2>resume1.err &
pid=$!
for _ in $(seq 600); do # until the first resume has claimed the run (status back to running)
    [ "$(q r.db "SELECT status FROM runs")" = running ] && break
    sleep 0.1
done
$B "${ARGS[@]}" --db r.db --resume 1 >/dev/null 2>resume2.err
expect_eq second_resume_refused 1 $?
# on a fast or loaded machine the first resume can finish before the second starts: then the
# second is refused because the run is complete (the checks below still compare it)
if grep -q "is not incomplete/running" resume2.err && [ "$(q r.db "SELECT status FROM runs")" = complete ]; then
    ok
else
    expect_grep second_resume_message "run 1 of r.db is being measured by another process" resume2.err
fi
# the refusal leaves the run to the first resume: still running, or on a fast machine already
# complete (its 38 samples can end before the second process has been refused)
st=$(q r.db "SELECT status FROM runs")
if [ "$st" = complete ]; then ok; else expect_eq first_still_running running "$st"; fi
wait $pid
expect_eq first_resume_completes 0 $?
expect_eq no_unique_error 0 "$(cat resume1.err resume2.err | grep -c UNIQUE)"
expect_eq resumed_like_reference "$(outputs ref.db)" \
    "$(outputs r.db)"
expect_eq complete_no_reason "complete|" "$(q r.db "SELECT status, reason FROM runs")"

# 3 and 4. a run being measured by its first process cannot be resumed; after kill -9 it can
$B "${ARGS[@]}" --db k.db >/dev/null 2>k1.err &
pid=$!
wait_samples k.db 1
$B "${ARGS[@]}" --db k.db --resume 1 >/dev/null 2>k2.err
expect_eq resume_while_first_runs_refused 1 $?
expect_grep resume_while_first_runs_message "run 1 of k.db is being measured by another process" k2.err
kill -9 $pid
wait $pid 2>/dev/null
expect_eq killed_left_running running "$(q k.db "SELECT status FROM runs")"
$B "${ARGS[@]}" --db k.db --resume 1 >/dev/null 2>k3.err
expect_eq resume_after_kill 0 $?
expect_eq killed_then_resumed_like_reference "$(outputs ref.db)" \
    "$(outputs k.db)"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
