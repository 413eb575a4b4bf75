#!/usr/bin/env bash
# cli_tune.sh: `decbench tune` on the real TinyStories pair (stories260K + llama2xs) with a small
# budget: it keeps to the budget, stores the probes as a sweep (greedy baseline + one run per
# point, with the pass trace), both cost curves as cost runs and a final run of greedy and each
# decoder's best on held-out prompts, all exact; prints the ranked table, one "recommended:"
# line per decoder and one overall that agrees with its figures (below); writes both
# figures. Without a draft, spec and Ouroboros are left out and named, and the target's curve is
# reused when the build is committed; a budget too small for any probe still answers plainly;
# usage errors exit 2. Sequoia's probes are fitted to the static-tree probes before them; --set
# gives eagle and medusa their heads.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_tune}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
BUDGET=0.4 # minutes

# 1. the whole command
start=$(date +%s.%N)
$B tune --model "$M" --draft "$D" --dataset tinystories --budget $BUDGET --probe-prompts 2 \
    --limit 4 --max-new 32 --threads 1 --db t.db --out fig >tune.out 2>tune.err
expect_eq tune_exit 0 $?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
# the budget, with 10% slack for the process start and the last figure
expect_eq within_budget 1 "$(awk -v t="$took" -v b=$BUDGET 'BEGIN {print (t <= b * 66) ? 1 : 0}')"
expect_grep table_header '^\| rank \| decoder \| predicted \| measured \| probe \| tokens/step \| rows/step \|$' tune.out
expect_grep table_row '^\| 1 \| [a-z]+:[^|]+ \| [0-9.]+x \| ' tune.out
for d in pld jacobi lookahead spec ouroboros; do
    expect_grep "recommended_$d" "^recommended: $d: $d:" tune.out
done
# The overall answer is greedy on a quiet machine (on a 260K model nothing beats it), but it rests
# on timings: under load a noisy cost curve has projected sam at threshold 5, which seldom
# drafts, at 1.07x and measured it at 1.30x. So the test checks the answer against its own
# figures: greedy, or a decoder measured AND predicted beyond tune's 5% margin.
overall=$(grep '^recommended: overall:' tune.out)
consistent=no
if [[ $overall =~ ^recommended:\ overall:\ greedy\.\  ]]; then
    consistent=yes
elif [[ $overall =~ ^recommended:\ overall:\ [a-z]+:[^\ ]+:\ measured\ ([0-9.]+)x\ over\ greedy\ end-to-end\ .*,\ predicted\ ([0-9.]+)x$ ]]; then
    consistent=$(awk -v m="${BASH_REMATCH[1]}" -v p="${BASH_REMATCH[2]}" 'BEGIN {print (m > 1.05 && p > 1.05) ? "yes" : "no"}')
fi
[ "$consistent" = yes ] || echo "the overall answer: $overall"
expect_eq recommended_overall yes "$consistent"
expect_eq one_overall 1 "$(grep -c '^recommended: overall:' tune.out)"
expect_grep done_line "decbench tune: done in [0-9]+ s of a 24 s budget" tune.err
# the database: a sweep of probes, the cost runs, the final run
expect_eq sweep "tune: jacobi:window=2,4,8 + lookahead:W=2,4,8;N=2,3,5;G=W + pld:ngram=2,3,4;k=4,10" \
    "$(q t.db "SELECT substr(spec, 1, 82) FROM sweeps WHERE id = 1")"
expect_eq baseline "greedy|2" "$(q t.db "SELECT group_concat(DISTINCT decoder), COUNT(*) FROM samples
    WHERE run_id = (SELECT MIN(id) FROM runs WHERE sweep_id = 1)")"
probes=$(q t.db "SELECT COUNT(*) FROM runs WHERE sweep_id = 1 AND baseline_run_id IS NOT NULL")
expect_eq some_probes 1 "$([ "$probes" -ge 5 ] && echo 1)"
expect_eq probes_traced 0 "$(q t.db "SELECT COUNT(*) FROM samples s JOIN runs r ON r.id = s.run_id
    WHERE r.sweep_id = 1 AND NOT EXISTS (SELECT 1 FROM passes p WHERE p.sample_id = s.id)")"
expect_eq cost_runs "tune: draft cost curve|1
tune: target cost curve|1" "$(q t.db "SELECT label, COUNT(DISTINCT context) > 0 FROM runs r JOIN cost c
    ON c.run_id = r.id GROUP BY r.id ORDER BY label")"
expect_eq cost_draft_model "$D" "$(q t.db "SELECT model_path FROM runs WHERE label = 'tune: draft cost curve'")"
# the final run, when the budget left room for one prompt (else it says so)
final=$(q t.db "SELECT MAX(id) FROM runs WHERE sweep_id IS NULL AND label IS NULL")
if [ -n "$final" ]; then
    expect_eq final_run_greedy_first greedy "$(q t.db "SELECT decoder FROM samples WHERE run_id = $final ORDER BY id LIMIT 1")"
    expect_eq final_held_out 1 "$(q t.db "SELECT MIN(sample_index) >= 2 FROM samples WHERE run_id = $final")"
    expect_eq finalists_one_per_decoder 1 "$(q t.db "SELECT COUNT(DISTINCT spec) = COUNT(DISTINCT decoder)
        FROM samples WHERE run_id = $final")"
    expect_grep final_line "final run: greedy and [0-9]+ setting\(s\) on [1-2] held-out prompt" tune.err
    expect_grep measured_column '^\| [0-9]+ \| [a-z]+:[^|]+ \| [0-9.]+x \| [0-9.]+x \| ' tune.out
else
    expect_grep no_final "no final run: one prompt would take about" tune.err
fi
expect_eq all_exact 1 "$(q t.db "SELECT MIN(matched) FROM samples")"
expect_eq all_complete "complete" "$(q t.db "SELECT group_concat(DISTINCT status) FROM runs")"
# the figures (gnuplot is a dependency of decbench: deps.sh)
for f in tune_predicted tune_frontier; do
    for e in tsv png svg; do expect_eq "fig_$f.$e" 1 "$([ -s fig/$f.$e ] && echo 1)"; done
done
expect_grep frontier_greedy '^1	1	\?	greedy$' fig/tune_frontier.tsv
expect_grep probes_block '^predicted	probes \(few prompts\)	decoder$' fig/tune_predicted.tsv

# Sequoia's probes take the acceptance vector of the static-tree probes before them: the first
# sequoia probe's accept= is accept_rank<r> / offered_rank<r> summed over those, computed here
fit=$(python3 - t.db <<'PY'
import math, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
seq = c.execute("SELECT run_id, spec FROM samples WHERE spec LIKE 'tree:mode=sequoia%' "
                "ORDER BY run_id LIMIT 1").fetchone()
if not seq:
    print("none"); sys.exit()
def total(name):
    return c.execute("SELECT TOTAL(value) FROM counters k JOIN samples s ON s.id = k.sample_id "
                     "WHERE s.run_id < ? AND s.spec LIKE 'tree:mode=static%' AND name = ?",
                     (seq[0], name)).fetchone()[0]
out = []
for r in ["0", "1", "2", "3up"]:
    a, o = total("accept_rank" + r), total("offered_rank" + r)
    if not (a > 0 and o > 0): break
    out.append("%.3f" % (math.floor(a / o * 1000) / 1000))
print("ok" if seq[1].endswith(",accept=" + "/".join(out)) else "spec %s, want %s" % (seq[1], out))
PY
)
if [ "$fit" = none ]; then echo "note: no sequoia probe ran in the budget"; else
    expect_eq sequoia_fitted ok "$fit"
    expect_grep sequoia_fitted_said 'tree:mode=sequoia,nodes=[0-9]+: accept=[0-9./]+, fitted from [0-9]+ static-tree probe' tune.err
fi

# 2. without a draft, on the same database: spec and Ouroboros are left out, named; the target's
#    curve is reused when the build is pinned down (a commit and a clean tree), else measured
#    No --out: the figures go beside the database (./tune for ./t.db), not into ./results/tune.
#    --set hands eagle and medusa their trained test heads: they are probed with them, where
#    without a head they would be left out as needing one.
HEADS=${DECBENCH_SOURCE:?}/tests/data/heads
$B tune --model "$M" --dataset tinystories --budget 0.2 --probe-prompts 1 --limit 2 --max-new 16 \
    --threads 1 --db t.db --set "eagle:head=$HEADS/stories260K-eagle" \
    --set "medusa:head=$HEADS/stories260K-medusa" >tune2.out 2>tune2.err
expect_eq nodraft_exit 0 $?
expect_eq heads_not_left_out 0 "$(grep -c 'left out:.*\(eagle\|medusa\) (' tune2.err)"
expect_eq eagle_probed_with_head 1 "$(q t.db "SELECT COUNT(*) > 0 FROM samples s JOIN runs r ON
    r.id = s.run_id WHERE r.sweep_id = 2 AND s.spec LIKE 'eagle:head=$HEADS/stories260K-eagle,%'")"
expect_eq medusa_probed_with_head 1 "$(q t.db "SELECT COUNT(*) > 0 FROM samples s JOIN runs r ON
    r.id = s.run_id WHERE r.sweep_id = 2 AND s.spec LIKE 'medusa:head=$HEADS/stories260K-medusa,%'")"
expect_eq figures_beside_db 1 "$([ -s tune/tune_frontier.tsv ] && [ ! -e results ] && echo 1)"
expect_grep left_out "left out: spec \(spec needs a draft model.*; ouroboros \(ouroboros needs a draft" tune2.err
expect_eq no_spec_runs 0 "$(q t.db "SELECT COUNT(*) FROM samples s JOIN runs r ON r.id = s.run_id
    WHERE r.sweep_id = 2 AND s.decoder IN ('spec', 'ouroboros')")"
if [ "$(q t.db "SELECT e.git_dirty = 0 AND e.git_commit IS NOT NULL FROM runs r JOIN environments e
        ON e.id = r.env_id WHERE r.label = 'tune: target cost curve' LIMIT 1")" = 1 ]; then
    expect_grep reused "target cost curve: run [0-9]+ of t\.db \(same model, machine and build\)" tune2.err
else
    expect_grep measured_again "target cost curve: [0-9]+ points \(rows 1\.\." tune2.err
fi

# 3. a budget too small for any probe: still a plain answer, exit 0
$B tune --model "$M" --draft "$D" --dataset tinystories --budget 0.001 --probe-prompts 1 \
    --limit 1 --max-new 8 --threads 1 --db t4.db --out fig4 >tune4.out 2>tune4.err
expect_eq tiny_exit 0 $?
expect_grep tiny_answer '^recommended: overall: greedy \(no setting was measured within the budget\)' tune4.out

# 4. usage errors: exit 2, nothing stored
expect_usage() { # NAME PATTERN ARGS...
    local name=$1 pat=$2
    shift 2
    "$B" tune "$@" >u.out 2>u.err
    expect_eq "${name}_exit" 2 $?
    expect_grep "${name}_msg" "$pat" u.err
}
expect_usage no_dataset "--dataset NAME is required" --model "$M" --db u.db
expect_usage two_datasets "tune takes one dataset" --model "$M" --dataset tinystories,gsm8k --db u.db
expect_usage bad_budget "--budget: expected minutes" --model "$M" --dataset tinystories --budget 0 --db u.db
expect_usage word_budget "--budget: expected minutes" --model "$M" --dataset tinystories --budget soon --db u.db
expect_usage set_unknown "--set 'nosuch:x=1': expected NAME:KEY=VALUE" --model "$M" --dataset tinystories --set nosuch:x=1 --db u.db
expect_usage set_no_params "--set 'eagle': expected NAME:KEY=VALUE" --model "$M" --dataset tinystories --set eagle --db u.db
expect_usage set_twice "--set: eagle given twice" --model "$M" --dataset tinystories --set eagle:head=a --set eagle:top_k=2 --db u.db
expect_eq usage_no_db 0 "$([ -e u.db ] && echo 1 || echo 0)"

echo "cli_tune: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
