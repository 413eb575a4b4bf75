#!/usr/bin/env bash
# cli_tune_batch.sh: `decbench tune --batch B` on the TinyStories pair with a budget of a few
# seconds (harness/cmd_tune.c): serving B sequences at once,
#   - it says so (stderr, the table's title and its definition of predicted and measured);
#   - the probes stay one sequence at a time, traced (batch 1, passes stored);
#   - both cost curves are of passes of B sequences (runs.batch B), and the predictions are the
#     probes' passes priced on them;
#   - the final run, when the budget leaves room for it, is at --batch B, exact, without the
#     decoders that keep state across prompts, and a finalist's measured figure is its
#     throughput over greedy's there (as report --layout batch computes it).
# The budget is wall time: under the sanitizers fewer probes run and the final may not fit,
# which the output then says.
set -u
. "$(dirname "$0")/lib_cli.sh"
CSV=$(cd "$(dirname "$0")/../bench" && pwd)/report_csv.awk # reads report --format csv
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_tune_batch}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin

$B tune --model "$M" --draft "$D" --dataset tinystories --budget 0.075 --probe-prompts 1 \
    --limit 3 --max-new 12 --threads 1 --batch 2 --top 2 --warmup 0 --db t.db --out fig \
    --no-plot >tune.out 2>tune.err
expect_eq exit 0 $?
expect_grep said_stderr 'serving batch 2: probes one sequence at a time \(traced\), cost curves of passes of 2 sequences' tune.err
expect_grep said_title '^## decbench tune: .*, batch 2\)$' tune.out
expect_grep said_definition '^Serving batch 2: predicted = ' tune.out
expect_grep curve_said 'target cost curve of passes of 2 sequences: [0-9]+ points' tune.err
# probes: one sequence at a time, traced
expect_eq probes_batch1 "1" "$(q t.db "SELECT group_concat(DISTINCT batch) FROM runs WHERE sweep_id = 1")"
expect_eq probes_traced 0 "$(q t.db "SELECT COUNT(*) FROM samples s JOIN runs r ON r.id = s.run_id
    WHERE r.sweep_id = 1 AND NOT EXISTS (SELECT 1 FROM passes p WHERE p.sample_id = s.id)")"
# the curves: passes of 2 sequences
expect_eq curves_batch2 "tune: draft cost curve|2
tune: target cost curve|2" "$(q t.db "SELECT label, batch FROM runs WHERE label LIKE 'tune: % cost curve' ORDER BY label")"
expect_grep predicted_row '^\| 1 \| [a-z]+:[^|]+ \| [0-9.]+x \| ' tune.out
final=$(q t.db "SELECT MAX(id) FROM runs WHERE sweep_id IS NULL AND label IS NULL")
if [ -n "$final" ]; then
    expect_eq final_batch2 "2" "$(q t.db "SELECT batch FROM runs WHERE id = $final")"
    expect_eq final_figures 1 "$(q t.db "SELECT COUNT(*) > 0 FROM batch_samples b JOIN samples s
        ON s.id = b.sample_id WHERE s.run_id = $final")"
    expect_eq final_no_state 0 "$(q t.db "SELECT COUNT(*) FROM samples WHERE run_id = $final AND
        decoder IN ('suffix', 'sam', 'recycle', 'ouroboros')")"
    expect_eq final_exact 1 "$(q t.db "SELECT MIN(matched) FROM samples WHERE run_id = $final")"
    # the finalists' measured figures are their batch speed-ups (report --layout batch), one
    # for each decoder of the final besides greedy
    want=$($B report --db t.db --run "$final" --layout batch --format csv |
        awk -v cols=label,speedup_batch -f "$CSV" |
        awk -F'\t' '$1 != "greedy" {printf "%.2fx\n", $2}' | sort)
    got=$(awk -F'|' '/^\| [0-9]+ \|/ && $5 !~ /^ *- *$/ {gsub(/ /, "", $5); print $5}' tune.out | sort)
    expect_eq measured_is_batch_speedup "$want" "$got"
    expect_eq some_measured 1 "$([ -n "$got" ] && echo 1)"
else
    expect_grep no_final "no final run: one prompt would take about" tune.err
fi

echo "cli_tune_batch: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
