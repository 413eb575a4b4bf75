#!/usr/bin/env bash
# cli_tune_heads.sh: `decbench tune` prices eagle's and medusa's probes with their heads' cost
# curves (harness/cmd_tune.c, the heads' cost curves), on stories260K with the committed test
# heads and a budget of a few seconds:
#   - each head a probe uses gets a cost run (`cost --head`'s curve): its model is the head's
#     safetensors file, its draft the target; the table names it as that decoder's curve;
#   - an eagle or medusa probe's prediction is the report's projection of its run on the target
#     curve with its head's curve as the draft curve (report --layout projected --project-cost
#     TARGET --project-draft-cost HEAD), not the figure of its target passes alone;
#   - a second tune on the same database reuses a head's curve when the build is pinned down (a
#     commit and a clean tree);
#   - at --batch B > 1 the heads' curves (of one sequence) cannot price passes of B: one stderr
#     line and a note in the table say the heads' probes are priced on their target passes only,
#     and no head curve is measured.
# The budget is wall time: under the sanitizers fewer probes run; a decoder whose probe did not
# run within it is said, not checked.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_tune_heads}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
HEADS=${DECBENCH_SOURCE:?}/tests/data/heads
EH=$HEADS/stories260K-eagle MH=$HEADS/stories260K-medusa
common=(--model "$M" --dataset tinystories --probe-prompts 1 --limit 2 --max-new 16 --threads 1
    --top 2 --no-plot --set "eagle:head=$EH" --set "medusa:head=$MH")

# 1. the head curves, measured and stored, and the predictions made with them
$B tune "${common[@]}" --budget 0.035 --db t.db --out fig >tune.out 2>tune.err
expect_eq exit 0 $?
# per decoder: its first exact probe, its head run, the head run's row, the probe's prediction
# (%.6g in the figure's data) and the report's projection of the probe's run with the head's
# curve and without one (its target passes alone)
python3 - "$B" >heads.txt <<'PY'
import csv, io, sqlite3, subprocess, sys
c = sqlite3.connect("file:t.db?mode=ro", uri=True)
one = lambda sql, *a: (c.execute(sql, a).fetchone() or [None])[0]
target = one("SELECT id FROM runs WHERE label = 'tune: target cost curve'")
def parts(s):  # a spec as its name and its set of key=value parameters
    n, _, p = s.partition(":")
    return n, frozenset(x for x in p.split(",") if x)
for k in ("eagle", "medusa"):
    probe = one("SELECT MIN(s.run_id) FROM samples s JOIN runs r ON r.id = s.run_id WHERE "
                "r.sweep_id = 1 AND s.decoder = ? AND s.matched = 1", k)
    if probe is None:
        print(k, "none"); continue
    spec = one("SELECT spec FROM samples WHERE run_id = ?", probe)
    head = one("SELECT id FROM runs WHERE label = ?", "tune: %s head cost curve" % k)
    row = "|".join(str(v) for v in c.execute(
        "SELECT model_path, draft_path, batch, (SELECT COUNT(*) > 0 FROM cost WHERE run_id = ?1) "
        "FROM runs WHERE id = ?1", (head,)).fetchone() or ())
    def projected(*draft):
        out = subprocess.run([sys.argv[1], "report", "--db", "t.db", "--run", str(probe),
                              "--layout", "projected", "--project-cost", "t.db:%d" % target,
                              *draft, "--format", "csv"], capture_output=True, text=True).stdout
        for r in csv.DictReader(io.StringIO(out)):
            if r["spec"] == spec: return "%.6g" % float(r["projected_speedup_e2e"])
        return "?"
    got = "?"  # the figure's row of the probe: its shown spec's parameters among the spec's
    for line in open("fig/tune_predicted.tsv"):
        f = line.rstrip("\n").split("\t")
        if len(f) == 3 and f[0] != "predicted" and parts(f[2])[0] == parts(spec)[0] and \
                parts(f[2])[1] <= parts(spec)[1]:
            got = f[0]; break
    with_head = projected("--project-draft-cost", "t.db:%d" % head) if head else "no-head-run"
    print(k, target, head, row or "-", got, with_head, projected())
PY
for k in eagle medusa; do
    dir=$EH file=model.safetensors
    [ $k = medusa ] && dir=$MH file=medusa_lm_head.safetensors
    read -r name target head row got with_head alone < <(grep "^$k " heads.txt)
    if [ "$target" = none ]; then
        echo "note: no $k probe ran within the budget"
        continue
    fi
    expect_eq "${k}_head_run" "$dir/$file|$M|1|1" "$row"
    expect_grep "${k}_head_named" "cost curves: target run $target, .*$k's head run $head[ ,]" tune.out
    expect_grep "${k}_head_said" "$k head cost curve: run $head, [0-9.]+ s" tune.err
    expect_eq "${k}_predicted_with_head" "$with_head" "$got"
    expect_eq "${k}_not_target_only" 1 "$([ "$got" != "$alone" ] && [ "$alone" != "?" ] && echo 1)"
done

# 2. the same tune again: a head's curve is reused when the build is pinned down, else measured
$B tune "${common[@]}" --budget 0.005 --db t.db --out fig2 >tune2.out 2>tune2.err
expect_eq again_exit 0 $?
# (as the models' curves: only a curve that reaches the plan's largest rows, 128, is reused; the
# first tune's budget may have cut the EAGLE head's rows, under the sanitizers it does)
if [ "$(q t.db "SELECT e.git_dirty = 0 AND e.git_commit IS NOT NULL FROM runs r JOIN environments e
        ON e.id = r.env_id WHERE r.label = 'tune: eagle head cost curve' LIMIT 1")" = 1 ] &&
   [ "$(q t.db "SELECT MAX(c.rows) >= 128 FROM cost c JOIN runs r ON r.id = c.run_id
        WHERE r.label = 'tune: eagle head cost curve' AND c.logit_rows = 1")" = 1 ]; then
    expect_grep head_reused "eagle head cost curve: run [0-9]+ of t\\.db \\(same head, target, machine and build\\)" tune2.err
else
    expect_grep head_planned "eagle head cost curve \\(.*/model\\.safetensors\\): [0-9]+ points" tune2.err
fi
# Medusa's curve reaches its plan's rows (its head count) whatever the budget
if [ "$(q t.db "SELECT e.git_dirty = 0 AND e.git_commit IS NOT NULL FROM runs r JOIN environments e
        ON e.id = r.env_id WHERE r.label = 'tune: medusa head cost curve' LIMIT 1")" = 1 ]; then
    expect_grep medusa_head_reused "medusa head cost curve: run [0-9]+ of t\\.db \\(same head, target, machine and build\\)" tune2.err
fi

# 3. --batch 2: the heads' probes priced on their target passes, said once, no head curve
$B tune "${common[@]}" --budget 0.005 --batch 2 --db b.db --out fig3 >tune3.out 2>tune3.err
expect_eq batch_exit 0 $?
expect_eq batch_said 1 "$(grep -c 'at batch 2 eagle and medusa are priced on their target passes only' tune3.err)"
expect_grep batch_note '^Note: at batch 2 eagle and medusa are priced on their target passes only' tune3.out
expect_eq batch_no_head_curve 0 "$(q b.db "SELECT COUNT(*) FROM runs WHERE label LIKE 'tune: % head cost curve'")"

echo "cli_tune_heads: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
