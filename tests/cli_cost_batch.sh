#!/usr/bin/env bash
# cli_cost_batch.sh: `decbench cost --batch B`, the cost curve of passes that evaluate B
# sequences at once (model/forward.h, fwd_group):
#   - B = 1 is the default and prints the one-sequence table (its header and columns);
#   - B > 1 prints its header line and a row per point with the batch, the rows each sequence
#     feeds, the whole pass's and the per-sequence milliseconds, the context and the logits rows;
#   - a value that is no count 1..256 is a usage error (exit 2) naming the option, before
#     anything is measured;
#   - --csv writes the curve with its batch (version 3: "batch,rows,seconds,...", the batch on
#     every line), --db stores it as a run of that batch (runs.batch); `report --layout
#     projected` reads either and says the batch it priced at; a one-point batched CSV (which an
#     older decbench would take instead of refusing) is a usage error;
#   - --help documents the option.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_cost_batch}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
quick=(--model "$M" --rows 1,3 --context 5 --seconds 0.01 --no-bandwidth --threads 1)

# the default and --batch 1: the one-sequence table
$B cost "${quick[@]}" >one.txt 2>one.err; expect_eq default_rc 0 $?
$B cost "${quick[@]}" --batch 1 >b1.txt 2>b1.err; expect_eq batch1_rc 0 $?
for f in one.txt b1.txt; do
    expect_grep "$f header" '^  rows +ms/pass +ms/row +GFLOP/s' $f
    expect_eq "$f points" 3 "$(grep -cE '^ +[0-9]+ +[0-9.]+ ' $f)"
    grep -q '^# batch' $f && bad "$f has a batch header"
done

# --batch 3: the header, and a row per point: batch 3, rows 1 and 3, context 5
$B cost "${quick[@]}" --batch 3 >b3.txt 2>b3.err; expect_eq batch3_rc 0 $?
expect_grep batch3_note '^# batch 3: each pass evaluates 3 sequences' b3.txt
expect_grep batch3_header '^batch +rows +ms/pass +ms/seq +ms/row' b3.txt
expect_eq batch3_points 3 "$(grep -cE '^ +3 +[13] +[0-9.]+ +[0-9.]+ +[0-9.]+ .* 5 +[13] +[0-9.]+ ' b3.txt)"
expect_grep batch3_logits_all '^ +3 +3 .* 5 +3 ' b3.txt
# ms/seq is ms/pass / 3
awk '/^ +3 +[13] /{ if ($3 <= 0 || ($4 - $3 / 3) > 0.0002 || ($3 / 3 - $4) > 0.0002) bad = 1 } END { exit bad }' b3.txt \
    && ok || bad "ms/seq is not ms/pass / 3: $(cat b3.txt)"

# bad values: usage errors before anything is measured
for v in 0 257 -1 x 2.5 ""; do
    expect_rc "batch '$v'" 2 "--batch" $B cost --model "$M" --batch "$v"
done
expect_rc batch_one_point 2 "--batch above 1 with --csv: the grid has one point" \
    $B cost --model "$M" --rows 1 --context 5 --logits last --batch 2 --csv c.csv
[ -e c.csv ] && bad "a refused --batch wrote an output"

# stored: the CSV's version 3 lines and the run's batch, read back by the projection
$B cost "${quick[@]}" --batch 3 --csv c3.csv --db c3.db >/dev/null 2>c3.err; expect_eq store_rc 0 $?
expect_grep csv_header '^batch,rows,seconds,context,logit_rows$' c3.csv
expect_eq csv_points 3 "$(grep -cE '^3,[13],[0-9.e-]+,5,[13]$' c3.csv)"
$B run --model "$M" --dataset tinystories --limit 1 --max-new 8 --trace --db r.db \
    --decoder greedy --decoder pld >/dev/null 2>&1; expect_eq trace_rc 0 $?
for src in c3.csv c3.db; do
    $B report --db r.db --layout projected --project-cost $src >p.md 2>p.err
    expect_eq "project $src rc" 0 $?
    expect_grep "project $src source" "cost curve $src.*\(batch 3\)" p.md
    expect_grep "project $src note" 'Priced at batch 3' p.md
done
$B cost "${quick[@]}" --csv c1.csv >/dev/null 2>&1
expect_rc mixed_batches 1 "is a curve of batch 1, --project-cost c3.csv one of batch 3" \
    $B report --db r.db --layout projected --project-cost c3.csv --project-draft-cost c1.csv
$B cost --help >help.txt; expect_grep help '--batch B +sequences a pass' help.txt

echo "cli_cost_batch: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
