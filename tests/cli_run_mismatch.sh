#!/usr/bin/env bash
# cli_run_mismatch.sh: an output that differs from greedy's is reported loudly and stored with
# the first diverging position, both tokens and greedy's top-1 minus top-2 logit there; the run
# is marked 'failed' and exits 1 (or stays 'complete' with --allow-mismatch); a sweep point
# that mismatches is failed and never the best setting. Exact decoders cannot produce a
# mismatch, so the runner's test hook DECBENCH_TEST_FLIP_TOKEN=N corrupts output token N of
# every non-greedy sample.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_run_mismatch}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
R=(run --model "$M" --dataset tinystories --limit 2 --max-new 16 --threads 1 --warmup 0 --decoder pld --repeats 2)

DECBENCH_TEST_FLIP_TOKEN=5 $B "${R[@]}" --db m.db >m.out 2>m.err
expect_eq mismatch_exit 1 $?
expect_eq run_failed failed "$(q m.db "SELECT status FROM runs")"
expect_eq greedy_matched "4|4" "$(q m.db "SELECT COUNT(*), SUM(matched) FROM samples WHERE decoder = 'greedy'")"
# pld: position 5, greedy's token + 1 = the (corrupted) decoder token, a real margin >= 0
expect_eq stored_divergence "4|0|4|4|4" "$(q m.db "SELECT COUNT(*), SUM(matched), SUM(diverge_pos = 5),
    SUM(decoder_token = (greedy_token + 1) % 512), SUM(greedy_margin >= 0) FROM samples WHERE decoder = 'pld'")"
# the margin is greedy's, so it is the same in both repeats of a prompt
expect_eq margin_deterministic "0" "$(q m.db "SELECT COUNT(*) FROM samples a JOIN samples b ON a.sample_index = b.sample_index
    AND a.decoder = 'pld' AND b.decoder = 'pld' AND a.repeat = 0 AND b.repeat = 1 WHERE a.greedy_margin != b.greedy_margin
    OR a.greedy_token != b.greedy_token")"
expect_eq greedy_token_is_greedys "0" "$(q m.db "SELECT COUNT(*) FROM samples WHERE decoder = 'pld' AND greedy_token < 0")"
expect_grep loud "\*\*\* MISMATCH: tinystories\[0\] \(id 0\) pld repeat 0" m.err
expect_grep position "first difference at output position 5 \(16 greedy tokens, 16 from the decoder\)" m.err
expect_grep margin_printed "greedy's top-1 minus top-2 logit there: [0-9.e+-]+ " m.err
expect_grep final_count "4 sample\(s\) DIFFER from greedy .* run marked failed" m.err
expect_grep hook_announced "TEST HOOK DECBENCH_TEST_FLIP_TOKEN=5" m.err
expect_grep summary_exact "^\| tinystories +\| pld +\|.*\| +0\.0 \|$" m.out
# a failed run is not "the latest complete run" that report and compare pick by default
$B report --db m.db >/dev/null 2>rep.err
expect_eq report_skips_failed 1 $?

# --allow-mismatch: reported, stored, but the run completes
DECBENCH_TEST_FLIP_TOKEN=0 $B "${R[@]}" --db a.db --allow-mismatch >/dev/null 2>a.err
expect_eq allow_exit 0 $?
expect_eq allow_complete "complete|4|0" "$(q a.db "SELECT status, (SELECT COUNT(*) FROM samples WHERE matched = 0),
    (SELECT COUNT(*) FROM samples WHERE matched = 0 AND diverge_pos != 0) FROM runs")"
# a position past the output changes nothing
DECBENCH_TEST_FLIP_TOKEN=1000 $B "${R[@]}" --db n.db >/dev/null 2>&1
expect_eq past_end "0|complete" "$(q n.db "SELECT COUNT(*) FILTER (WHERE matched = 0), (SELECT status FROM runs) FROM samples")"

# a sweep: every point fails, the sweep exits 1 and names no best setting
DECBENCH_TEST_FLIP_TOKEN=3 $B sweep --model "$M" --dataset tinystories --limit 1 --max-new 8 --threads 1 \
    --grid 'pld:k=2,4' --db s.db >s.out 2>s.err
expect_eq sweep_exit 1 $?
expect_eq sweep_statuses "complete,failed,failed" "$(q s.db "SELECT group_concat(status) FROM (SELECT status FROM runs ORDER BY id)")"
expect_grep sweep_no_best "no point completed without a mismatch" s.err

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
