#!/usr/bin/env bash
# cli_run_faults.sh: faults that are not the run's fault leave it resumable, and outputs are
# never half-written.
#   1. a full disk during `run --trace`: exit 1, the error printed with the --resume command,
#      the run 'incomplete' (before: 'failed', which --resume refuses) with the error as its
#      reason, every stored sample whole; --resume then stores exactly an uninterrupted run's
#      samples;
#   2. a --state-save that fails after the last sample: 'incomplete', reason naming it; the
#      --resume then writes the state an uninterrupted run writes, byte for byte (before: the
#      state of a fresh decoder, an empty pool);
#   3. a read-only database (a read-only folder: SQLite cannot create the -shm index a WAL
#      database needs): report, compare and plot read it (before: "attempt to write a readonly
#      database"); run refuses to write it;
#   4. report -o, cost --csv and plot on a full disk: exit 1, the older file whole, no .tmp or
#      empty file left (gnuplot itself exits 0 with truncated figures: checked);
#   5. the model file truncated while a run has it mapped: "FILE changed while in use", exit 1,
#      'incomplete' (before: killed by SIGBUS, the run left 'running'), no sample of the
#      zeros it read stored; with the file restored, --resume completes it like the reference;
#   6. a run of a decoder with state (suffix, two repeats) interrupted in its second repeat:
#      the --resume rebuilds the state from the repeat's stored samples, so every later
#      sample (target steps) and the --state-save file equal an uninterrupted run's (before:
#      the decoder restarted cold, with more steps and an emptier tree).
# A full disk is a file size limit (ulimit -f, SIGXFSZ ignored so writes fail with EFBIG): it
# works as root and as a user, in any container. The read-only folder is a root-owned folder
# read by user nobody when the test runs as root (root writes anywhere), a chmod 555 otherwise.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_run_faults}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
limited() { # KB CMD...: CMD with a file size limit of KB kilobytes
    local kb=$1; shift
    (ulimit -f "$kb" && trap '' XFSZ && exec "$@")
}
outputs() { # DB: the count and a digest of every (prompt, decoder, repeat, output hash) stored
    q "$1" "SELECT sample_index || ' ' || spec || ' ' || repeat || ' ' || output_hash FROM samples ORDER BY 1" |
        { mapfile -t rows; printf '%d %s' "${#rows[@]}" "$(printf '%s\n' "${rows[@]}" | md5sum)"; }
}

# 1. a full disk while a traced run stores its samples (the WAL outgrows 400 kB)
ARGS=(run --model "$M" --dataset tinystories --limit 30 --max-new 64 --threads 1 --warmup 0
    --decoder 'lookahead:W=8,N=4,G=8' --trace)
$B "${ARGS[@]}" --db ref.db >/dev/null 2>ref.err
expect_eq reference_run 0 $?
limited 400 $B "${ARGS[@]}" --db full.db >/dev/null 2>full.err
expect_eq full_exit 1 $?
expect_grep full_error "(disk I/O error|disk is full)" full.err
expect_grep full_resume_hint "stopped by the error above: run 1 is incomplete .*continue it with:" full.err
expect_grep full_resume_command "--trace --db full.db --resume 1$" full.err
expect_eq full_incomplete_with_reason "incomplete|1" \
    "$(q full.db "SELECT status, reason LIKE 'db_insert_sample: %' FROM runs")"
n=$(q full.db "SELECT COUNT(*) FROM samples")
if [ "$n" -ge 1 ] && [ "$n" -lt 60 ]; then passes=$((passes + 1))
else echo "FAIL full_partial: $n samples (want 1..59: did the limit bite?)"; fails=$((fails + 1)); fi
expect_eq full_whole_samples 0 "$(q full.db "SELECT COUNT(*) FROM samples s WHERE
    target_steps != (SELECT COUNT(*) FROM trace t WHERE t.sample_id = s.id)")"
expect_eq full_integrity ok "$(q full.db "PRAGMA integrity_check")"
$B "${ARGS[@]}" --db full.db --resume 1 >/dev/null 2>full2.err
expect_eq full_resumed 0 $?
expect_eq full_resumed_complete "complete|" "$(q full.db "SELECT status, reason FROM runs")"
expect_eq full_resumed_like_reference "$(outputs ref.db)" "$(outputs full.db)"

# 2. --state-save fails after the last sample: its folder is gone by then
mkdir -p keep
SARGS=(run --model "$M" --draft "$D" --dataset tinystories --limit 8 --max-new 64 --threads 1
    --warmup 0 --decoder ouroboros:gamma=4,W=8,beta=6 --state-save keep/pool.bin --db save.db)
$B "${SARGS[@]}" >/dev/null 2>save.err &
pid=$!
wait_samples save.db 1
rm -rf keep
wait $pid
expect_eq save_exit 1 $?
expect_grep save_error "--state-save: keep/pool.bin.tmp: cannot create" save.err
expect_eq save_incomplete "incomplete|1|16" "$(q save.db "SELECT status, reason LIKE '--state-save: %',
    (SELECT COUNT(*) FROM samples) FROM runs")"
mkdir keep
$B "${SARGS[@]}" --resume 1 >/dev/null 2>save2.err
expect_eq save_resumed "0|complete|16|DBOUROP1" "$?|$(q save.db "SELECT status, (SELECT COUNT(*) FROM samples)
    FROM runs")|$(head -c 8 keep/pool.bin 2>/dev/null)"
expect_grep save_rebuilt "rebuilding its pool from the 8 sample\(s\) of repeat 0 stored before" save2.err
$B "${SARGS[@]:0:${#SARGS[@]}-4}" --state-save ref_pool.bin --db save_ref.db >/dev/null 2>save_ref.err
expect_eq save_reference 0 $?
expect_eq save_resumed_state_like_reference same "$(cmp -s ref_pool.bin keep/pool.bin && echo same || echo differs)"

# 3. a read-only database
mkdir ro && cp ref.db ro/r.db && mkdir -p out && chmod 777 out
if [ "$(id -u)" -eq 0 ]; then
    as_reader() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
    chmod 755 "$T" ro && chmod 644 ro/r.db
else
    as_reader() { "$@"; }
    chmod 555 ro
fi
as_reader $B report --db ro/r.db >ro_report.out 2>ro_report.err
expect_eq ro_report 0 $?
expect_grep ro_report_table "^\| tinystories +\| greedy " ro_report.out
as_reader $B compare ro/r.db ro/r.db >/dev/null 2>ro_compare.err
expect_eq ro_compare 0 $?
as_reader $B plot --db ro/r.db --kind accept --out out/plots >/dev/null 2>ro_plot.err
expect_eq ro_plot "0|yes" "$?|$([ -s out/plots/accept.png ] && echo yes)"
expect_eq ro_no_side_files "r.db" "$(ls ro)"
as_reader $B "${ARGS[@]}" --db ro/r.db >/dev/null 2>ro_run.err
expect_eq ro_run_refused 1 $?
expect_grep ro_run_message "ro/r.db" ro_run.err
[ "$(id -u)" -eq 0 ] || chmod 755 ro

# 4. outputs on a full disk keep the older file whole and leave no temporary
echo "older report" >rep.md
limited 1 $B report --db ref.db --layout counters -o rep.md 2>rep.err
expect_eq report_full "1|older report|none" "$?|$(cat rep.md)|$(ls rep.md.tmp 2>/dev/null || echo none)"
expect_grep report_full_message "--out rep.md: .*write error: File too large" rep.err
echo "older csv" >cost.csv
limited 0 $B cost --model "$M" --rows 1,2 --context 4 --seconds 1 --no-bandwidth --csv cost.csv >/dev/null 2>cost.err
expect_eq cost_full "1|older csv|none" "$?|$(cat cost.csv)|$(ls cost.csv.tmp 2>/dev/null || echo none)"
mkdir pl
$B plot --db ref.db --kind accept --out pl >/dev/null 2>plot1.err
expect_eq plot_first 0 $?
before=$(cat pl/accept.png pl/accept.svg | md5sum)
limited 8 $B plot --db ref.db --kind accept --out pl >/dev/null 2>plot2.err
expect_eq plot_full 1 $?
expect_grep plot_full_message "wrote an incomplete accept.png \(8192 bytes" plot2.err
expect_eq plot_older_kept "$before" "$(cat pl/accept.png pl/accept.svg | md5sum)"
expect_eq plot_nothing_left "accept.png accept.svg accept.tsv" "$(ls -A pl | tr '\n' ' ' | sed 's/ $//')"

# 5. the model shrinks under a run (truncate -s 4096 once two samples are stored)
cp "$M" m.bin && chmod 644 m.bin
MARGS=(run --model m.bin --tokenizer "$S/models/tok512.bin" --dataset tinystories --limit 30
    --max-new 64 --threads 2 --warmup 0 --decoder 'lookahead:W=8,N=4,G=8' --trace)
$B "${MARGS[@]}" --db bus.db >/dev/null 2>bus.err &
pid=$!
wait_samples bus.db 2
truncate -s 4096 m.bin
wait $pid
expect_eq bus_exit 1 $?
expect_grep bus_message "m.bin changed while in use: the file shrank under the run's mapping" bus.err
expect_grep bus_resume_hint "run 1 is incomplete .*continue it with:" bus.err
expect_eq bus_incomplete "incomplete|1" "$(q bus.db "SELECT status, reason LIKE 'm.bin changed while in use%' FROM runs")"
expect_eq bus_integrity ok "$(q bus.db "PRAGMA integrity_check")"
cat "$M" >m.bin # restored in place (the same file the run recorded)
$B "${MARGS[@]}" --db bus.db --resume 1 >/dev/null 2>bus2.err
expect_eq bus_resumed "0|complete" "$?|$(q bus.db "SELECT status FROM runs")"
expect_eq bus_resumed_like_reference "$(outputs ref.db)" "$(outputs bus.db)"

# 6. a decoder with state interrupted mid-repeat, then resumed
# (80 prompts of 128 tokens: with 30 of 96, a Zen 5 core finished the second repeat's last 45
# samples before the interrupt arrived; under the sanitizers, ten times slower, 30 of 96 do)
xn=80 xtok=128
[ -n "${DECBENCH_SANITIZED:-}" ] && xn=30 xtok=96
XARGS=(run --model "$M" --dataset tinystories --limit $xn --max-new $xtok --threads 1 --warmup 0
    --repeats 2 --decoder suffix)
steps() { # DB: every sample's (prompt, repeat, decoder, target steps, output hash)
    q "$1" "SELECT sample_index || ' ' || repeat || ' ' || spec || ' ' || target_steps || ' ' ||
        output_hash FROM samples ORDER BY 1" | md5sum
}
$B "${XARGS[@]}" --db xref.db --state-save xref.bin >/dev/null 2>xref.err
expect_eq state_reference 0 $?
$B "${XARGS[@]}" --db xint.db --state-save xint.bin >/dev/null 2>xint.err &
pid=$!
wait_samples xint.db $((2 * xn + 15)) # in the second repeat (2 xn samples each), with suffix samples stored
kill -INT $pid
wait $pid
expect_eq state_interrupted 130 $?
$B "${XARGS[@]}" --db xint.db --state-save xint.bin --resume 1 >/dev/null 2>xint2.err
expect_eq state_resumed "0|complete|$((4 * xn))" "$?|$(q xint.db "SELECT status, (SELECT COUNT(*) FROM samples) FROM runs")"
expect_grep state_rebuilt "suffix: rebuilding its suffix tree from the [0-9]+ sample\(s\) of repeat 1 stored before" xint2.err
expect_eq state_resumed_steps_like_reference "$(steps xref.db)" "$(steps xint.db)"
expect_eq state_resumed_file_like_reference same "$(cmp -s xref.bin xint.bin && echo same || echo differs)"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
