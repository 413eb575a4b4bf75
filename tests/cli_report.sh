#!/usr/bin/env bash
# cli_report.sh: the plumbing of `decbench report` and `decbench plot` (the figures themselves
# are tested on hand-built databases in test_report.c): run selection (--db FILE[:RUN], --run,
# --sweep, default latest complete), the three formats and four layouts, --out, errors; plot
# data files and PNG/SVG per kind, `all` skipping what has no data.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_report}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin

# Two runs: run 1 greedy + pld + spec, run 2 greedy only (the latest).
$B run --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 24 --threads 1 \
    --decoder pld --decoder spec:gamma=2 --db r.db >/dev/null 2>&1 || bad "setup run 1"
$B run --model "$M" --dataset tinystories --limit 2 --max-new 24 --threads 1 --db r.db >/dev/null 2>&1 ||
    bad "setup run 2"

# default: markdown summary of the latest complete run (2: greedy only)
$B report --db r.db >def.md 2>&1 || bad "report default exit"
expect_grep default_latest "^Run 2 \(complete\)" def.md
if grep -q "pld" def.md; then bad "default_latest: run 1's decoders in the default report"; else ok; fi
# --db FILE:RUN and --run pick run 1; speed-up ratios are printed, greedy's is 1.00x
$B report --db r.db:1 >one.md 2>&1 || bad "report FILE:RUN exit"
expect_grep file_run "^Run 1 \(complete\)" one.md
expect_grep greedy_ratio "^\| tinystories +\| greedy +\|.*\| +1\.00x \| +1\.00x \|" one.md
# labels: a decoder's only spec is its name; the full spec is one option away (--explain)
expect_grep spec_ratio "^\| tinystories +\| spec +\|.*[0-9]\.[0-9][0-9]x \| +[0-9]+\.[0-9][0-9]x \|" one.md
# one line of legend, not a paragraph of definitions; --explain has them and the full specs
expect_grep legend "Every definition and the decoders' full specs: \`decbench report --explain\`" one.md
if grep -q "sample standard deviation" one.md; then bad "definitions in the default report"; else ok; fi
[ "$(grep -vc '^|' one.md)" -le 6 ] && ok || bad "more than 6 lines around the table: $(cat one.md)"
$B report --db r.db:1 --explain >explain.md 2>&1 || bad "report --explain exit"
expect_grep explain_spec "^decoder spec = spec:gamma=2" explain.md
expect_grep explain_definition "^speed-up sd: sample standard deviation over repeats" explain.md
# LaTeX: the paper's columns by default (18 overflow a page), every one on request
$B report --db r.db:1 --format latex >one.tex 2>&1 || bad "report latex exit"
expect_grep latex_paper_columns "^dataset & decoder & prompts & repeats & tok/s e2e & speed-up e2e & tokens/step & tau" one.tex
expect_grep latex_columns_note "--columns all for every figure" one.tex
$B report --db r.db:1 --format latex --columns all >all.tex 2>&1 || bad "report latex all exit"
expect_grep latex_all_columns "& exact" all.tex
$B report --db r.db:1 --columns tau,speedup_decode >cols.md 2>&1 || bad "report --columns exit"
expect_grep columns_chosen "^\| dataset +\| decoder +\| prompts \| repeats \| +speed-up \| +tau \(vLLM\) \|" cols.md
expect_rc columns_unknown 1 "--columns: no figure 'nope' \(figures: tps_decode" $B report --db r.db:1 --columns nope
expect_rc columns_layout 2 "--columns: only the summary layout" $B report --db r.db:1 --layout paper --columns tau
# CSV: header of machine keys, one row per decoder, greedy's speed-up exactly 1
$B report --db r.db --run 1 --format csv >one.csv 2>&1 || bad "report csv exit"
python3 - one.csv <<'PY' && ok || bad "csv content"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["spec"] for r in rows] == ["greedy", "pld:ngram=3,k=10", "spec:gamma=2"], rows
g = rows[0]
assert float(g["speedup_decode"]) == 1 and float(g["tokens_per_step"]) == 1, g
assert all(float(r["exact_pct"]) == 100 for r in rows)
assert float(rows[2]["tokens_per_step"]) > 1
PY
# JSON: two runs at once (a run column), and the runs' provenance
$B report --db r.db --run 1,2 --format json >two.json 2>&1 || bad "report json exit"
python3 - two.json <<'PY' && ok || bad "json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted({r["run"] for r in d["rows"]}) == [1, 2], d["rows"]
assert [r["id"] for r in d["runs"]] == [1, 2] and d["runs"][0]["environment"]["cpu_threads"] > 0
PY
# the other layouts
$B report --db r.db:1 --layout paper >paper.md 2>&1 || bad "paper exit"
expect_grep paper "^\| spec +\|" paper.md
$B report --db r.db:1 --layout ablation --decoder spec >abl.md 2>&1 || bad "ablation exit"
expect_grep ablation "Ablation of 'spec'" abl.md
printf 'rows,seconds\n1,0.001\n4,0.0012\n16,0.002\n64,0.006\n' >cost.csv
$B report --db r.db:1 --layout projected --project-cost cost.csv --out proj.md 2>err.txt || bad "projected exit: $(cat err.txt)"
expect_grep projected "[Pp]rojected" proj.md
# errors
expect_rc missing_db 1 "nope\.db" $B report --db nope.db
expect_rc missing_run 1 "run 9 does not exist" $B report --db r.db --run 9
expect_rc bad_run 2 "--run: 'x' is not a run id" $B report --db r.db --run x
expect_rc missing_sweep 1 "--sweep 3: no such sweep" $B report --db r.db --sweep 3
expect_rc bad_format 2 "--format: expected md, csv, json, latex or jsonl" $B report --db r.db --format xml
expect_rc bad_layout 2 "--layout: expected summary" $B report --db r.db --layout wide
expect_rc projected_needs_cost 2 "needs --project-cost" $B report --db r.db --layout projected
expect_rc bad_cost 1 "nope\.csv" $B report --db r.db --layout projected --project-cost nope.csv
printf 'not a database\n' >text.db
expect_rc not_a_db 1 "text\.db" $B report --db text.db

# plot: one kind, all kinds (cost has no data here: skipped with a note), errors
if command -v gnuplot >/dev/null; then
    $B plot --db r.db:1 --kind speedup --out figs >plot.out 2>&1 || bad "plot speedup exit: $(cat plot.out)"
    for f in speedup.tsv speedup.png speedup.svg; do [ -s "figs/$f" ] && ok || bad "plot: figs/$f missing"; done
    $B plot --db r.db:1 --out all >plotall.out 2>&1 || bad "plot all exit: $(cat plotall.out)"
    expect_grep plot_all_skips_cost "cost skipped: .*no cost points" plotall.out
    expect_grep plot_all_skips_scaling "scaling skipped: .*no lookahead samples" plotall.out
    for f in accept.svg history.svg speedup.png; do [ -s "all/$f" ] && ok || bad "plot all: $f missing"; done
    # No folder name is ever gnuplot code (once, `--out "x';system('touch PWNED');'"` ran the
    # command): quotes, a newline, a macro sign and backquotes reach gnuplot as nothing at all.
    for out in "x';system('touch PWNED1');'" 'x";system("touch PWNED2");"' \
        "$(printf 'x\nsystem("touch PWNED3")\n')" 'x@y`touch PWNED4`$(touch PWNED5)'; do
        $B plot --db r.db:1 --kind speedup,accept --out "$out" >inj.out 2>&1 || bad "plot --out '$out': $(cat inj.out)"
        for f in speedup.png accept.svg; do [ -s "$out/$f" ] && ok || bad "plot --out '$out': $f missing"; done
    done
    ls PWNED* x*/PWNED* 2>/dev/null | grep -q . && bad "plot --out ran a command: $(ls PWNED* x*/PWNED*)" || ok
    ls -a x*/ | grep -q "decbench-plot" && bad "plot left its private folder behind" || ok
    # A failing script leaves no figure (and no empty one) and no private folder.
    mkdir -p broken && cp "${DECBENCH_SOURCE:?}"/plots/*.gp broken/ && echo "plot no_such_function(x)" >>broken/accept.gp
    $B plot --db r.db:1 --kind accept --plots-dir broken --out failed >fail.out 2>&1 && bad "plot with a broken script succeeded"
    expect_grep plot_broken_script "gnuplot accept.gp failed" fail.out
    [ ! -e failed/accept.png ] && [ ! -e failed/accept.svg ] && ok || bad "a failed plot left a figure"
    ls -a failed | grep -q "decbench-plot" && bad "a failed plot left its private folder" || ok
else
    echo "note: gnuplot missing: plot rendering not tested"
fi
# every figure says which runs it drew
expect_grep plot_names_runs "^decbench plot: speedup: figs/speedup\.tsv \(\+ \.png, \.svg\): run 1 \(as named\)" plot.out
# a spec in two runs: a column each, "(run N)" in the legend, not one run's values hiding the
# other's; the history names a commit where it changes, not at every run
$B run --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 24 --threads 1 \
    --decoder pld --db r.db >/dev/null 2>&1 || bad "setup run 3"
$B plot --db r.db --run 1,3 --kind speedup,history --data-only --out two >two.out 2>&1 || bad "plot two runs: $(cat two.out)"
expect_grep plot_same_spec_two_runs "^dataset	pld \(run 1\)	error	spec	error	pld \(run 3\)	error$" two/speedup.tsv
n=$(grep -cE '^[0-9]+	[^	]' two/history.tsv)
[ "$n" = 1 ] && ok || bad "history_commit_once: $n rows name a commit: $(cat two/history.tsv)"
$B plot --db r.db:1 --kind accept --data-only --out data >/dev/null 2>&1 || bad "plot data-only exit"
[ -s data/accept.tsv ] && [ ! -e data/accept.png ] && ok || bad "plot --data-only"
expect_rc plot_cost_explicit 1 "no complete run with cost points" $B plot --db r.db --kind cost --data-only --out data
expect_rc plot_bad_kind 2 "--kind pie: expected speedup" $B plot --db r.db --kind pie

# the read-only commands above (report, plot) and compare, of one file twice, leave no SQLite
# side files beside it (a read-only connection cannot remove them; db_close does)
$B compare r.db:1 r.db:3 >/dev/null 2>&1
left=$(ls r.db-wal r.db-shm 2>/dev/null)
[ -z "$left" ] && ok || bad "no_side_files: $left"
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
