#!/usr/bin/env bash
# cli_sequoia.sh: `decbench sequoia` (harness/cmd_sequoia.c, decoders/sequoia.h):
#   1. the tree for a vector: a hand-checked chain (0.5 + 0.25 + 0.125 = 0.875) and a fan
#      (depth 1: 0.6 + 0.3), printed as paths of sibling ranks, and the parameters line;
#   2. with a cost curve (crafted "rows,seconds" files): free rows give the largest budget, rows
#      that cost as much as the pass give one node (1.8 / 2 beats 2.44 / 3), and a drafting cost
#      per depth keeps the tree shallow (depth 3 where free drafting takes 6);
#   3. the parameters line runs as given: tree:mode=sequoia and recycle:tree=sequoia with it on
#      one TinyStories prompt, exact against greedy;
#   4. usage errors exit 2 (no --accept, a bad vector, --nodes 0, --context without --cost), a
#      missing curve exits 1, each with a message;
#   5. --fit: the vector from a run's counters, computed here from the database by hand
#      (accept_rank<r> / offered_rank<r>, which for a one-level tree is accept_rank<r> /
#      drafting_steps), the spec picked by --decoder; a database without the offered counters
#      fits a one-level tree and refuses a deeper one; a run of several decoders without
#      --decoder, a run without the decoder and a missing run are refused with a message;
#      --fit with --accept, --decoder alone: usage errors.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_sequoia}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1

# expect_fail NAME RC PATTERN CMD...: exits RC with PATTERN on stderr
expect_fail() {
    local name=$1 want=$2 pat=$3; shift 3
    local out rc
    out=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq "$want" ] && grep -qE -- "$pat" <<<"$out"; then passes=$((passes + 1))
    else echo "FAIL $name: rc=$rc stderr=$out"; fails=$((fails + 1)); fi
}

# 1. trees
$B sequoia --accept 0.5 --nodes 3 --depth 3 >chain.txt
expect_eq chain_rc 0 $?
expect_grep chain_value '^tree: 3 nodes, 0\.8750 expected accepted' chain.txt
expect_grep chain_paths '^depth 3 \(1\): 000$' chain.txt
$B sequoia --accept 0.6/0.3 --nodes 2 --depth 1 >fan.txt
expect_grep fan_value '^tree: 2 nodes, 0\.9000 expected' fan.txt
expect_grep fan_paths '^depth 1 \(2\): 0 1$' fan.txt
expect_grep fan_params '^parameters: nodes=2,depth=1,accept=0\.6/0\.3$' fan.txt

# 2. budgets
{ echo rows,seconds; for r in 1 2 4 8 16 32 64; do echo "$r,1"; done; } >flat.csv
{ echo rows,seconds; for r in 1 2 4 8 16 32 64; do echo "$r,$r"; done; } >steep.csv
$B sequoia --accept 0.8/0.1 --nodes 20 --cost flat.csv >flat.txt
expect_eq flat_rc 0 $?
expect_grep flat_budget '^best budget: 20 nodes, depth 6' flat.txt
$B sequoia --accept 0.8/0.1 --cost steep.csv >steep.txt
expect_grep steep_budget '^best budget: 1 nodes, depth 1: 0\.800 expected accepted tokens per step, 0\.9 tokens/s \(greedy 1\.0: 0\.90x\)' steep.txt
$B sequoia --accept 0.8/0.1 --nodes 20 --cost flat.csv --draft-seconds 0.5 >draft.txt
expect_grep draft_shallow '^best budget: 14 nodes, depth 3:' draft.txt

# 3. the parameters run
params=$(sed -n 's/^parameters: //p' chain.txt)
$B run --model "$S/models/stories260K.bin" --draft "$S/models/llama2xs.bin" --dataset tinystories \
    --limit 1 --max-new 24 --warmup 0 --threads 1 --db run.db \
    --decoder "tree:mode=sequoia,$params" --decoder "recycle:tree=sequoia,$params" >run.txt 2>&1
expect_eq run_rc 0 $?
expect_eq run_matched "3" "$(q run.db "SELECT COUNT(*) FROM samples WHERE matched = 1 OR decoder = 'greedy'")"

# 4. errors
expect_fail no_accept 2 'give --accept P0/P1/\.\.\. or --fit' $B sequoia
expect_fail bad_vector 2 'more than 1' $B sequoia --accept 0.7/0.5
expect_fail bad_number 2 "not numbers joined by '/'" $B sequoia --accept 0.7,0.1
expect_fail no_nodes 2 'nodes' $B sequoia --accept 0.5 --nodes 0
expect_fail context_alone 2 'give --cost' $B sequoia --accept 0.5 --context 64
expect_fail missing_curve 1 'nowhere\.csv' $B sequoia --accept 0.5 --cost nowhere.csv

# 5. --fit
$B run --model "$S/models/stories260K.bin" --draft "$S/models/llama2xs.bin" --dataset tinystories \
    --limit 2 --max-new 32 --warmup 0 --threads 1 --db fit.db \
    --decoder tree:shape=4 --decoder tree:shape=4-2 >fit_run.txt 2>&1
expect_eq fit_run_rc 0 $?
# the vectors by hand, each p[r] rounded down to 3 places as sequoia prints it: the one-level
# tree's over its drafting steps, the deeper tree's over its offers
one='tree:%shape=4,%' deep='tree:%shape=4-2,%'
off="SELECT TOTAL(value) FROM counters c JOIN samples s ON s.id = c.sample_id WHERE name ="
want1=$(q fit.db "SELECT printf('%.3f/%.3f/%.3f/%.3f', $(for r in 0 1 2 3up; do
    printf "%sCAST((%s 'accept_rank%s' AND s.spec LIKE '%s') / (SELECT TOTAL(drafting_steps) FROM samples WHERE spec LIKE '%s') * 1000 AS INTEGER) / 1000.0" \
        "$([ $r = 0 ] || echo ', ')" "$off" "$r" "$one" "$one"; done))")
want2=$(q fit.db "SELECT printf('%.3f/%.3f/%.3f/%.3f', $(for r in 0 1 2 3up; do
    printf "%sCAST((%s 'accept_rank%s' AND s.spec LIKE '%s') / (%s 'offered_rank%s' AND s.spec LIKE '%s') * 1000 AS INTEGER) / 1000.0" \
        "$([ $r = 0 ] || echo ', ')" "$off" "$r" "$deep" "$off" "$r" "$deep"; done))")
$B sequoia --fit fit.db --decoder tree:shape=4 --nodes 6 >fit.txt
expect_eq fit_rc 0 $?
expect_grep fit_one_level "accept=${want1//\//\\/}\$" fit.txt
expect_grep fit_params "^parameters: nodes=6,depth=6,accept=" fit.txt
$B sequoia --fit fit.db:1 --decoder tree:shape=4-2 >fit_deep.txt
expect_eq fit_deep_rc 0 $?
expect_grep fit_deep "over offered_rank .*: accept=${want2//\//\\/}\$" fit_deep.txt
# a database stored before the offered counters: a deeper tree is refused, a one-level one fits
python3 - fit.db old.db <<'PY'
import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2])
c.execute("DELETE FROM counters WHERE name LIKE 'offered_rank%'")
c.commit()
PY
expect_fail fit_old_deep 1 'no offered_rank counters .*deeper than one level' \
    $B sequoia --fit old.db --decoder tree:shape=4-2
$B sequoia --fit old.db --decoder tree:shape=4 >fit_old.txt
expect_grep fit_old_one "drafting steps: accept=${want1//\//\\/}\$" fit_old.txt
expect_fail fit_several 1 'holds several decoders .*name one with --decoder' $B sequoia --fit fit.db
expect_fail fit_absent 1 'run 1 has no spec:gamma=4' $B sequoia --fit fit.db --decoder spec:gamma=4
expect_fail fit_no_run 1 'run 7' $B sequoia --fit fit.db:7 --decoder tree
expect_fail fit_and_accept 2 'give --accept P0/P1/\.\.\. or --fit' $B sequoia --fit fit.db --accept 0.5
expect_fail decoder_alone 2 '--decoder picks the run' $B sequoia --accept 0.5 --decoder tree

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
