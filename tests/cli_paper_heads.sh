#!/usr/bin/env bash
# cli_paper_heads.sh: `decbench paper specbench` with learned drafters: Spec-Bench's EAGLE,
# EAGLE2 and Medusa rows run with the heads the user names (--set eagle:head=DIR --set
# medusa:head=DIR: the heads trained for stories260K in tests/data/heads/), their figures
# measured beside the leaderboard's; without --set those rows are not run, named in one line,
# and keep the paper's figures; a --set that would change Spec-Bench's settings is refused.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} SRC=${DECBENCH_SOURCE:?}
T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_paper_heads}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin H=$SRC/tests/data/heads
NEW=8
[ -n "${DECBENCH_SANITIZED:-}" ] && NEW=4 # the same rows, fewer tokens under the sanitizers
RED=(--model "$M" --limit 1 --max-new "$NEW" --cut-long --threads 1 --warmup 0 --repeats 1)
SETS=(--set "eagle:head=$H/stories260K-eagle" --set "medusa:head=$H/stories260K-medusa")

# 1. the plan: Spec-Bench's trees, each spec with the head named
$B paper specbench --model "$M" "${SETS[@]}" --dry-run >plan.out 2>plan.err
expect_eq dry_rc 0 $?
expect_grep dry_specs "--decoder eagle:mode=static,head=$H/stories260K-eagle --decoder eagle:mode=dynamic,total_tokens=60,depth=5,top_k=10,head=$H/stories260K-eagle --decoder medusa:tree=mc_sim_7b_63,head=$H/stories260K-medusa$" plan.out
expect_eq dry_no_note 0 "$(grep -c 'Not run' plan.err)"

# 2. usage errors: exit 2, one line
usage() { # NAME PATTERN ARGS...
    local name=$1 pat=$2; shift 2
    out=$($B paper specbench --model "$M" "$@" --dry-run 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 2 ] && grep -qE -- "$pat" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ]; then ok; else bad "$name: rc=$rc $out"; fi
}
usage set_changes "--set eagle:head=x,depth=3 changes depth, which specbench runs as the paper's reference does \(mode=dynamic,total_tokens=60,depth=5,top_k=10\)" --set eagle:head=x,depth=3
usage set_tree "--set medusa:head=x,tree=vicuna_7b_stage2 changes tree" --set medusa:head=x,tree=vicuna_7b_stage2
usage set_unused "--set rest: specbench runs no decoder with a head of that name" --set rest:ds=x
usage set_twice "--set: eagle given twice" --set eagle:head=a --set eagle:head=b
usage set_bad "--set 'eagle': expected NAME:KEY=VALUE" --set eagle

# 3. without heads: those rows are not run, named in one line, the paper's figures beside
# (under the sanitizers the plan only: the table's code is the measured run's below)
$B paper specbench --model "$M" --dry-run >none.plan 2>none.perr
expect_eq none_plan_rc 0 $?
expect_eq none_plan_line 1 "$(grep -c 'Not run: EAGLE (no --set eagle:head=DIR), EAGLE2 (no --set eagle:head=DIR), Medusa (no --set medusa:head=DIR)' none.perr)"
expect_eq none_plan_specs 0 "$(grep -cE 'eagle|medusa' none.plan)"
if [ -z "${DECBENCH_SANITIZED:-}" ]; then
    $B paper specbench "${RED[@]}" --db p.db >none.md 2>none.err
    expect_eq none_rc 0 $?
    expect_eq none_line 1 "$(grep -c 'Not run: EAGLE (no --set eagle:head=DIR), EAGLE2 (no --set eagle:head=DIR), Medusa (no --set medusa:head=DIR)' none.err)"
    expect_grep none_note "^Not run: EAGLE .*the rows show the paper's figures alone" none.md
    expect_grep none_eagle2 "^\| Overall +\| EAGLE2 +\| +- \| +- \| +- \| +2\.36x \| +4\.34 \| Leaderboard\.md, A100" none.md
    expect_grep none_medusa "^\| Translation +\| Medusa +\| +- \| +- \| +- \| +1\.65x \| +- \|" none.md
    expect_grep none_pld "^\| Overall +\| PLD +\| +[0-9.]+ \| +[0-9.]+x \|" none.md
    expect_eq none_no_head_diff 0 "$(grep -c "Spec-Bench's Medusa" none.md)"
fi

# 4. with the heads: measured beside the leaderboard's, exact, every difference listed
$B paper specbench "${RED[@]}" "${SETS[@]}" --db p.db >heads.md 2>heads.err
expect_eq heads_rc 0 $?
expect_eq heads_no_note 0 "$(grep -c 'Not run: EAGLE' heads.md heads.err | awk -F: '{s += $2} END {print s}')"
expect_grep heads_eagle "^\| Overall +\| EAGLE +\| +[0-9.]+ \| +[0-9.]+x \| +[0-9.]+ \| +2\.10x \| +3\.58 \| Leaderboard\.md, A100" heads.md
expect_grep heads_eagle2 "^\| Overall +\| EAGLE2 +\| +[0-9.]+ \| +[0-9.]+x \| +[0-9.]+ \| +2\.36x \| +4\.34 \|" heads.md
expect_grep heads_medusa "^\| Overall +\| Medusa +\| +[0-9.]+ \| +[0-9.]+x \| +[0-9.]+ \| +1\.71x \| +2\.31 \|" heads.md
expect_grep heads_task "^\| Mathematical Reasoning +\| EAGLE2 +\| +[0-9.]+ \| +[0-9.]+x \| +[0-9.]+ \| +2\.79x \|" heads.md
expect_grep diff_head "Differs from the paper \(Spec-Bench's EAGLE2 .*the head is the target's own" heads.md
expect_grep diff_typical "Differs from the paper \(Spec-Bench's Medusa .*typical acceptance .* is not offered" heads.md
expect_grep diff_loop "Differs from the paper \(Spec-Bench's EAGLE .*after 512 steps" heads.md
expect_grep note_hydra "Hydra \(not implemented here\)" heads.md
expect_eq exact 0 "$(q p.db "SELECT COUNT(*) FROM samples WHERE matched = 0")"
expect_eq heads_specs 3 "$(q p.db "SELECT COUNT(DISTINCT spec) FROM samples WHERE decoder IN ('eagle', 'medusa')")"
# the EAGLE rows' drafts were accepted: tokens per step above 1 overall
expect_eq eagle2_tau 1 "$(grep -E '^\| Overall +\| EAGLE2 ' heads.md | awk -F'|' '{print ($4 + 0 > 1)}')"

# 5. the same runs under another size's figures: reused, not measured again
if [ -z "${DECBENCH_SANITIZED:-}" ]; then
    $B paper specbench "${RED[@]}" "${SETS[@]}" --db p.db --settings 13b >13b.md 2>13b.err
    expect_eq reuse_rc 0 $?
    expect_grep reused "reusing run" 13b.err
    expect_grep size_13b "^\| Overall +\| EAGLE2 +\|.*\| +2\.46x \| +4\.43 \|" 13b.md
fi

echo "cli_paper_heads: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
