#!/usr/bin/env bash
# cli_sweep.sh: `decbench sweep` expands the grid (lists, ranges, ties), measures greedy once as
# the baseline run and every point as its own run (sweep_id, baseline_run_id), prints the
# ablation tables and the best point per dataset; bad grids fail before any row; SIGTERM
# leaves the current run incomplete and --resume SWEEP_ID finishes the sweep.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_sweep}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin

# 1. two grids: 2 x 2 lookahead points with G tied to W, and a 1..2 range of spec
$B sweep --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 24 --threads 1 \
    --grid 'lookahead:W=2,3;N=2,3;G=W' --grid 'spec:gamma=1..2' --db s.db >sweep.out 2>sweep.err
expect_eq sweep_exit 0 $?
expect_eq sweep_row "1|lookahead:W=2,3;N=2,3;G=W + spec:gamma=1..2|tinystories" "$(q s.db "SELECT id, spec, dataset FROM sweeps")"
# greedy once (run 1, no baseline), then one run per point pointing at it
expect_eq runs "1|complete|1||greedy|2
2|complete|1|1|lookahead|2
3|complete|1|1|lookahead|2
4|complete|1|1|lookahead|2
5|complete|1|1|lookahead|2
6|complete|1|1|spec|2
7|complete|1|1|spec|2" "$(q s.db "SELECT r.id, status, sweep_id, baseline_run_id, group_concat(DISTINCT decoder),
    COUNT(*) FROM runs r JOIN samples s ON s.run_id = r.id GROUP BY r.id ORDER BY r.id")"
# the points, in grid order (first key slowest), G following W
expect_eq points "lookahead:W=2,N=2,G=2
lookahead:W=2,N=3,G=2
lookahead:W=3,N=2,G=3
lookahead:W=3,N=3,G=3
spec:gamma=1
spec:gamma=2" "$(q s.db "SELECT substr(spec, 1, CASE WHEN instr(spec, ',seed_pool') THEN instr(spec, ',seed_pool') - 1
    ELSE length(spec) END) FROM samples WHERE run_id > 1 GROUP BY run_id ORDER BY run_id")"
expect_eq all_exact "12|12" "$(q s.db "SELECT COUNT(*), SUM(matched) FROM samples WHERE run_id > 1")"
expect_grep ablation_lookahead "Ablation of 'lookahead'" sweep.out
expect_grep ablation_spec "Ablation of 'spec'" sweep.out
expect_grep best_header "^## Best settings \(sweep 1, greedy baseline run 1\)" sweep.out
expect_grep best_speed "^\| tinystories \| lookahead \| wall-clock speed-up \| lookahead:W=[23],N=[23],G=[23] \| [2-5] \|" sweep.out
expect_grep best_steps "^\| tinystories \| spec \| tokens/step \| spec:gamma=[12] \| [67] \|" sweep.out
expect_grep progress "^sweep 1 point 6/6: 2/2 samples" sweep.err
# the report's ablation over the sweep reads the same runs
$B report --db s.db --sweep 1 --layout ablation --decoder lookahead >abl.out 2>&1
expect_eq report_sweep 0 $?
expect_grep report_sweep_rows "\| lookahead:W=3,N=3,G=3 .*\| 3 +\| 3 +\| 3 +\|" abl.out

# 2. bad grids and points fail before any row (and create no database)
bad() { # NAME PATTERN GRID
    local out rc
    out=$($B sweep --model "$M" --dataset tinystories --limit 1 --max-new 4 --grid "$3" --db bad.db 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qE -- "$2" <<<"$out" && [ ! -e bad.db ]; then passes=$((passes + 1))
    else echo "FAIL $1: rc=$rc stderr=$out"; fails=$((fails + 1)); fi
}
bad no_key "'W' is not KEY=VALUES" "lookahead:W"
bad descending "W=4\.\.2: the range is descending" "lookahead:W=4..2"
bad self_tie "ties the key to itself" "lookahead:W=W"
bad unknown_param "lookahead: unknown parameter 'Q'" "lookahead:Q=1,2"
bad out_of_range "W=99 is out of range" "lookahead:W=1,99"
bad unknown_decoder "unknown decoder 'nope'" "nope:x=1"
bad needs_draft "spec needs a draft model" "spec:gamma=1..2"
out=$($B sweep --model "$M" --dataset tinystories --db bad.db 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--grid SPEC is required" <<<"$out" && passes=$((passes + 1)) ||
    { echo "FAIL no_grid: $rc $out"; fails=$((fails + 1)); }

# 3. SIGTERM in the middle, then --resume SWEEP_ID completes the same sweep
ARGS=(sweep --model "$M" --dataset tinystories --limit 6 --max-new 64 --threads 1 --warmup 0
    --grid 'lookahead:W=6,8;N=4,5;G=W' --db "$T/i.db")
$B "${ARGS[@]}" >int1.out 2>int1.err &
pid=$!
for _ in $(seq 600); do # until the first point run has a sample (60 s at most)
    n=$(q "$T/i.db" "SELECT COUNT(*) FROM samples WHERE run_id >= 2")
    [ "${n:-0}" -ge 1 ] && break
    sleep 0.1
done
kill -TERM $pid
wait $pid
expect_eq sweep_interrupt_exit 130 $?
st=$(q "$T/i.db" "SELECT group_concat(status) FROM runs")
case $st in complete,*incomplete) passes=$((passes + 1)) ;; *) echo "FAIL interrupted_statuses: $st"; fails=$((fails + 1)) ;; esac
expect_grep sweep_resume_hint "continue it with:" int1.err
# a different grid cannot resume it
$B sweep --model "$M" --dataset tinystories --limit 6 --max-new 64 --threads 1 --grid 'spec:gamma=1' \
    --draft "$D" --db "$T/i.db" --resume 1 >/dev/null 2>wrong.err
expect_eq resume_other_grid 1 $?
expect_grep resume_other_grid_msg "the sweep's grid was 'lookahead:W=6,8;N=4,5;G=W'" wrong.err
$B "${ARGS[@]}" --resume 1 >int2.out 2>int2.err
expect_eq sweep_resume_exit 0 $?
expect_eq resumed_runs "5|5|1|24|24" "$(q "$T/i.db" "SELECT COUNT(*), SUM(status = 'complete'), COUNT(DISTINCT sweep_id),
    (SELECT COUNT(*) FROM samples WHERE run_id > 1), (SELECT SUM(matched) FROM samples WHERE run_id > 1) FROM runs")"
expect_eq one_spec_per_point "4" "$(q "$T/i.db" "SELECT COUNT(DISTINCT spec) FROM samples WHERE run_id > 1")"
expect_grep resumed_best "^\| tinystories \| lookahead \| tokens/step" int2.out

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
