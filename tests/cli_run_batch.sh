#!/usr/bin/env bash
# cli_run_batch.sh: `decbench run --batch B`, B prompts decoded at once (harness/runner_batch.c,
# model/rendezvous.h):
#   - greedy, spec, tree, lookahead and pld at B = 2 and 3, static and --continuous, give every
#     prompt the output (hash) the same run gives at B = 1, all matching greedy;
#   - the run stores batch and continuous, and each sample its batch figures (batch_samples:
#     one batch per batch of prompts and decoder, or per decoder with --continuous; the batch's
#     wall time, rows per pass, seconds per token); a run without --batch stores batch 1 and no
#     batch figures;
#   - what cannot work is refused (exit 2, one line, nothing written): B outside 1..64 or no
#     number, --continuous without a batch, --trace, --shard, --state-save, a decoder keeping
#     state across prompts;
#   - `sweep --grid 'NAME:...;batch=1,2'` measures each batch size's points against a greedy
#     baseline run at that size;
#   - `report` shows a batched run's throughput, speed-up over greedy at the same batch size,
#     rows per pass and p50/p90/p99 per-token latency (--layout batch; after the markdown
#     summary), and nothing of the kind for a run without --batch; over a sweep's batch sizes,
#     the unbatched points at batch 1, each point's speed-up over its baseline run's greedy,
#     and where each decoder stops paying (pays to B, stops at B, a note).
# Under the sanitizers (DECBENCH_SANITIZED) fewer prompts and batch sizes.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_run_batch}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
limit=4 sizes="2 3 3c"
[ -n "${DECBENCH_SANITIZED:-}" ] && limit=3 sizes="2 3c"
run=(run --model "$S/models/stories260K.bin" --draft "$S/models/llama2xs.bin" --dataset tinystories
     --limit $limit --max-new 12 --warmup 0 --threads 1 --decoder spec --decoder tree
     --decoder lookahead --decoder pld)
outputs() { q "$1" "SELECT spec || ' ' || sample_index || ' ' || output_hash || ' ' || matched FROM samples ORDER BY spec, sample_index"; }

$B "${run[@]}" --db b1.db >/dev/null 2>b1.err; expect_eq b1_rc 0 $?
expect_eq b1_samples $((5 * limit)) "$(q b1.db "SELECT COUNT(*) FROM samples WHERE matched = 1")"
expect_eq b1_run "1|0" "$(q b1.db "SELECT batch, continuous FROM runs")"
expect_eq b1_no_figures 0 "$(q b1.db "SELECT COUNT(*) FROM batch_samples")"

for size in $sizes; do
    n=${size%c} cont=() c=0
    [ "$size" != "$n" ] && cont=(--continuous) c=1
    $B "${run[@]}" --db "b$size.db" --batch "$n" "${cont[@]}" >/dev/null 2>"b$size.err"
    expect_eq "b${size}_rc" 0 $?
    expect_eq "b${size}_outputs" "$(outputs b1.db)" "$(outputs "b$size.db")"
    expect_eq "b${size}_run" "$n|$c" "$(q "b$size.db" "SELECT batch, continuous FROM runs")"
    expect_eq "b${size}_figures" $((5 * limit)) "$(q "b$size.db" "SELECT COUNT(*) FROM batch_samples
        WHERE batch_wall > 0 AND rows_per_pass >= 1 AND t_per_token > 0")"
    # static: ceil(limit / n) batches per decoder; continuous: one per decoder
    want=$(( c ? 5 : 5 * ((limit + n - 1) / n) ))
    expect_eq "b${size}_batches" $want "$(q "b$size.db" "SELECT COUNT(DISTINCT batch_index) FROM batch_samples")"
    # a batch's samples share its wall time
    expect_eq "b${size}_walls" $want "$(q "b$size.db" "SELECT COUNT(DISTINCT batch_index || ' ' || batch_wall) FROM batch_samples")"
done
# greedy's passes at B = 2 hold more than its own row: the sequences shared them
expect_eq shared 1 "$(q b2.db "SELECT MAX(rows_per_pass) > 1.5 FROM batch_samples b JOIN samples s ON s.id = b.sample_id WHERE s.decoder = 'greedy'")"

# report: a batched run's summary goes on with its batch table; --layout batch in CSV; a run
# without --batch has neither
$B report --db b2.db >r2.md 2>&1; expect_eq report_rc 0 $?
expect_grep report_batch '^\| greedy +\| +2 \| +0 \| .*1\.00x' r2.md
$B report --db b2.db --layout batch --format csv >r2.csv 2>&1; expect_eq report_csv_rc 0 $?
expect_grep report_csv_header '^label,spec,batch,continuous,samples,throughput,speedup_batch,rows_per_pass,p50_ms_per_token,p90_ms_per_token,p99_ms_per_token' r2.csv
expect_eq report_csv_rows 5 "$(grep -cE ',2,0,[0-9]+,[0-9.]+,' r2.csv)"
$B report --db b1.db >r1.md 2>&1; grep -q 'Batched decoding' r1.md && bad "an unbatched run's report has a batch table" || ok
expect_rc report_unbatched 1 "no batched run" $B report --db b1.db --layout batch

# sweep: the grid key batch runs each batch size's points after a greedy baseline of that size
$B sweep --model "$S/models/stories260K.bin" --dataset tinystories --limit 2 --max-new 8 \
    --warmup 0 --threads 1 --grid 'pld:k=2;batch=1,2' --db sw.db >/dev/null 2>sw.err
expect_eq sweep_rc 0 $?
expect_eq sweep_runs "1|1|
2|1|1
3|2|
4|2|3" "$(q sw.db "SELECT id, batch, baseline_run_id FROM runs ORDER BY id")"
expect_eq sweep_figures 4 "$(q sw.db "SELECT COUNT(*) FROM batch_samples")"
expect_eq sweep_outputs "$(q sw.db "SELECT output_hash FROM samples WHERE run_id = 2 ORDER BY sample_index")" \
    "$(q sw.db "SELECT output_hash FROM samples WHERE run_id = 4 ORDER BY sample_index")"
# where a decoder stops paying: the sweep's times set by hand (greedy 1 s a sequence at B = 1 and
# 1 s a batch at B = 2; pld twice as fast at B = 1, half as fast at B = 2): the unbatched run
# reads at batch 1, each point against its baseline's greedy; pld pays to B = 1, stops at B = 2
cp sw.db pay.db
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE samples SET t_prefill = 0.01, t_total = CASE run_id WHEN 1 THEN 1 ELSE 0.5 END WHERE run_id IN (1, 2)")
c.execute("UPDATE batch_samples SET batch_wall = (SELECT CASE s.run_id WHEN 3 THEN 1 ELSE 2 END FROM samples s WHERE s.id = sample_id)")
c.commit()' pay.db
$B report --db pay.db --sweep 1 --layout batch --format csv >pay.csv 2>&1; expect_eq pay_rc 0 $?
expect_grep pay_header ',pays_to_batch,stops_at_batch$' pay.csv
expect_grep pay_b1 '^2,pld,"pld:ngram=3,k=2",1,0,2,[0-9.]+,2,[0-9.,]+,1,2$' pay.csv
expect_grep pay_b2 '^4,pld,"pld:ngram=3,k=2",2,0,2,[0-9.]+,0.5,[0-9.,]+,1,2$' pay.csv
expect_eq pay_greedy 2 "$(grep -cE '^[13],greedy,greedy,[12],0,2,[0-9.]+,1,[0-9.,]+,,$' pay.csv)"
$B report --db pay.db --sweep 1 --layout batch >pay.md 2>&1
expect_grep pay_note 'pld: pays up to batch 1, stops paying at batch 2' pay.md

# refusals: one line, exit 2, no database
M=(run --model "$S/models/stories260K.bin" --draft "$S/models/llama2xs.bin" --dataset tinystories --limit 2 --db no.db)
for v in 0 65 -1 x ""; do expect_rc "batch '$v'" 2 "^decbench run: --batch" $B "${M[@]}" --batch "$v"; done
expect_rc continuous 2 "--continuous .*--batch B with B >= 2" $B "${M[@]}" --continuous
expect_rc continuous_b1 2 "--continuous .*--batch B with B >= 2" $B "${M[@]}" --continuous --batch 1
expect_rc trace 2 "--batch cannot be combined with --trace" $B "${M[@]}" --batch 2 --trace
expect_rc shard 2 "--batch cannot be combined with --shard" $B "${M[@]}" --batch 2 --shard 1/2
expect_rc state 2 "--batch cannot be combined with --state-load/--state-save" $B "${M[@]}" --batch 2 --state-save s.bin
expect_rc stateful 2 "--batch cannot run suffix: it keeps its" $B "${M[@]}" --batch 2 --decoder suffix
W=(sweep --model "$S/models/stories260K.bin" --dataset tinystories --limit 2 --db no.db)
expect_rc grid_and_batch 2 "batch key cannot be combined with --batch" $B "${W[@]}" --grid 'pld:batch=1,2' --batch 2
expect_rc grid_batch_range 2 "--grid batch: 65 is out of range 1..64" $B "${W[@]}" --grid 'pld:batch=65'
expect_rc grid_stateful 2 "--batch cannot run suffix" $B "${W[@]}" --grid 'suffix:batch=2'
for f in b*.err; do [ "$(grep -c . "$f")" -le 40 ] || bad "$f is long"; done
[ -e no.db ] && bad "a refused --batch wrote a database" || ok
$B run --help >help.txt 2>&1; expect_grep help '--batch B' help.txt

echo "cli_run_batch: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
