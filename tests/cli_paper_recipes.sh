#!/usr/bin/env bash
# cli_paper_recipes.sh: `decbench paper`: every recipe end to end on the TinyStories
# pair (stories260K target, llama2xs draft) with a reduced --limit/--max-new and the papers'
# prompts cut to the models' context: its runs complete, its table has the paper's rows with
# the paper's figures beside ours; a part measures exactly what its printed `decbench run`
# command measures; parts are reused and resumed; the model pair/size matching; projection;
# CSV; the usage errors.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_paper_recipes}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
RED=(--model "$M" --draft "$D" --limit 1 --max-new 8 --cut-long --threads 1 --warmup 0 --repeats 1)

# 1. list and help
$B paper list >list.out; expect_eq list_rc 0 $?
expect_eq n_recipes 9 "$(grep -cE '^  [a-z]' list.out)"
for r in ouro-table2 ouro-fig4 ouro-table3 ouro-table4 ouro-fig5 lade-scaling lade-configs lade-speedups specbench; do
    expect_grep "list_$r" "^  $r " list.out
done
$B paper --help >help.out 2>help.err; expect_eq help_rc "0 0" "$? $(wc -c <help.err)"
expect_grep help_recipes "ouro-table4" help.out

# 2. usage errors: exit 2, one line naming the problem
usage() { # NAME PATTERN ARGS...
    local name=$1 pat=$2; shift 2
    out=$($B paper "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 2 ] && grep -qE -- "$pat" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ]; then ok; else bad "$name: rc=$rc $out"; fi
}
usage no_name "name a recipe" --model "$M"
usage unknown "no recipe 'table9' \(recipes: ouro-table2, " table9 --model "$M"
usage no_model "--model FILE is required" ouro-table2
usage no_draft "ouro-table3 measures decoders that draft with a second model: give --draft" ouro-table3 --model "$M"
usage bad_pair "--settings 7b: ouro-table2 takes a model pair: yi, deepseek, codellama or llama2" ouro-table2 --model "$M" --settings 7b
usage bad_size "--settings yi: lade-configs takes a size: 7b, 13b or 33b" lade-configs --model "$M" --settings yi
usage fixed_settings "--settings: ouro-table3 runs the paper's own settings whatever the model" ouro-table3 --model "$M" --draft "$D" --settings yi
usage bad_format "--format: expected md, csv, json or latex" ouro-table2 --model "$M" --format jsonl
usage bad_limit "--limit" ouro-table2 --model "$M" --limit 0
expect_eq no_db_on_errors "" "$(ls results 2>/dev/null)"

# 3. the plan: Table 7's settings of the closest pair; Ouroboros' printed beta - 2 (its scripts
# run level = beta - 1, phrases of level - 1 tokens) and drafts cut to gamma; G = W, LADE's
# preset; Spec-Bench's own PLD rule and SpS schedule
$B paper ouro-table2 --model "$M" --draft "$D" --dry-run >plan.out; expect_eq dry_rc 0 $?
expect_eq dry_parts 3 "$(wc -l <plan.out)"
expect_grep dry_gsm8k "--dataset gsm8k --limit 100 --shuffle 13720 --max-new 256 .*--label 'paper ouro-table2/gsm8k' --decoder greedy --decoder spec:gamma=7 --decoder lookahead:W=15,N=6,G=15,preset=lade --decoder ouroboros:gamma=6,W=17,beta=5,K=3,trim=1,warm=0 --decoder ouroboros:gamma=6,W=17,beta=5,K=3,trim=1,warm=1$" plan.out
expect_grep dry_wmt "--dataset wmt_de_en .*--max-new 64 .*--decoder spec:gamma=5 --decoder lookahead:W=18,N=7,G=18,preset=lade --decoder ouroboros:gamma=4,W=13,beta=4,K=3,trim=1,warm=0" plan.out
$B paper ouro-table2 --model "$M" --draft "$D" --dry-run --settings yi >yi.out
expect_grep dry_yi "--dataset gsm8k .*--decoder spec:gamma=7 --decoder lookahead:W=15,N=6,G=15,preset=lade --decoder ouroboros:gamma=4,W=15,beta=5,K=3,trim=1" yi.out
$B paper ouro-fig4 --model "$M" --draft "$D" --dry-run >fig4.out
expect_grep dry_fig4_codellama "--dataset humaneval --max-new 512 .*--decoder spec:gamma=5 --decoder lookahead:W=17,N=5,G=17,preset=lade --decoder ouroboros:gamma=10,W=20,beta=5,K=3,trim=1" fig4.out
expect_grep dry_fig4_mbpp "--dataset mbpp/validation --max-new 512 " fig4.out
$B paper ouro-fig4 --model "$M" --draft "$D" --dry-run --chat >chat.out
expect_grep dry_chat "--dataset humaneval --template ouroboros-chat " chat.out
$B paper ouro-table4 --model "$M" --draft "$D" --dry-run >t4.out
expect_eq dry_t4_parts 5 "$(wc -l <t4.out)"
expect_grep dry_t4 "--dataset mbpp/validation,gsm8k,cnn_dm,wmt_de_en --limit 20 --shuffle 13720 --order shuffle:13720 .*--decoder ouroboros:gamma=6,W=18,beta=4,K=3,trim=1,warm=0 --decoder ouroboros:gamma=6,W=18,beta=4,K=3,trim=1,warm=1$" t4.out
expect_grep dry_t4_cn1 "--order interleave:1 .*--decoder ouroboros:gamma=6,W=18,beta=4,K=3,trim=1,warm=1$" t4.out
$B paper specbench --model "$M" --dry-run >sb.out
expect_grep dry_specbench "--dataset spec_bench/mt_bench,spec_bench/translation,spec_bench/summarization,spec_bench/qa,spec_bench/math_reasoning,spec_bench/rag --max-new 1024 --turns 2 --repeats 3 --warmup 3 .*--decoder greedy --decoder pld:ngram=3,k=10,match=first,miss=100 --decoder lookahead:W=7,N=5,G=7,preset=lade$" sb.out
$B paper lade-speedups --model "$M" --dry-run --settings 33b >ls.out
expect_grep dry_lade_33b "--dataset humaneval --template lookahead --max-new 512 .*--decoder lookahead:W=7,N=5,G=7,preset=lade$" ls.out
# a model of no family (a qwen2 GGUF) takes the paper's first pair, Yi-34b/6b
$B synth --config tiny-qwen2 --seed 1 -o q.gguf >/dev/null 2>&1
$B paper ouro-table2 --model q.gguf --draft q.gguf --dry-run >q.out 2>q.err
expect_grep dry_qwen_yi "--dataset gsm8k .*--decoder ouroboros:gamma=4,W=15,beta=5,K=3,trim=1,warm=0" q.out

# 4. every recipe end to end, reduced; each table has the paper's rows and figures
run_recipe() { # RECIPE: into $RECIPE.md, rc checked
    $B paper "$1" "${RED[@]}" --db p.db >"$1.md" 2>"$1.err"
    expect_eq "${1}_rc" 0 $?
    expect_grep "${1}_reduced" "REDUCED run" "$1.md"
    expect_grep "${1}_carry" "carry across hardware" "$1.md"
}
run_recipe ouro-table2
expect_grep t2_settings "GSM8K: Table 7's Llama-2 70b/7b" ouro-table2.md
expect_grep t2_row "^\| GSM8K +\| Ouroboros † +\| +[0-9.]+ \| +[0-9.]+ \| +[0-9.]+x \| +24\.03 \| +2\.68x \| Table 2 " ouro-table2.md
expect_grep t2_wmt "^\| WMT16 +\| speculative +\|.*\| +14\.72 \| +1\.55x \| Table 2 " ouro-table2.md
# the recipe's own figure: its table's rows as bars, grouped as its tasks, in its figure
# (end-to-end speed-up), from the runs just made (reused, not measured again)
$B paper ouro-table2 "${RED[@]}" --db p.db --plot fig >/dev/null 2>fig.err
expect_eq plot_rc 0 $?
expect_grep plot_reused "reusing run" fig.err
expect_grep plot_header "^ours: speed-up e2e	speculative	error	lookahead	error	Ouroboros	error	Ouroboros †	error$" fig/paper.tsv
expect_eq plot_groups "GSM8K CNN/DM WMT16" "$(grep -vE '^(#|ours)' fig/paper.tsv | cut -f1 | tr '\n' ' ' | sed 's/ $//')"
expect_eq plot_png 1 "$([ -s fig/paper.png ] && [ -s fig/paper.svg ] && echo 1)"
# `decbench plot` of the database draws one part and says so
$B plot --db p.db --kind speedup --data-only --out pf >pf.out 2>&1
expect_grep plot_part_note "is part 'wmt' of \`decbench paper ouro-table2\` \(its parts: runs [0-9]+-[0-9]+\)" pf.out
run_recipe ouro-fig4
expect_grep f4_rows "^\| MBPP +\| Ouroboros † +\|.*\| bars only +\| Figure 4 " ouro-fig4.md
run_recipe ouro-table3
for row in "none +\|.*49\.90" "inspiration +\|.*48\.90" "suffixes +\|.*55\.92" "inspiration \+ suffixes +\|.*56\.97" "suffixes \+ refinement +\|.*57\.23" "all three +\|.*58\.18"; do
    expect_grep "t3_$row" "^\| HumanEval +\| $row" ouro-table3.md
done
run_recipe ouro-table4
expect_grep t4_off "^\| warm start off +\| CN=20 +\|.*32\.53 \| Table 4 " ouro-table4.md
expect_grep t4_on "^\| warm start on +\| CN=1 +\|.*35\.36 \| Table 4 " ouro-table4.md
expect_eq t4_rows 7 "$(grep -cE '^\| warm start (on|off) ' ouro-table4.md)"
run_recipe ouro-fig5
expect_grep f5_k "^\| HumanEval +\| K=6 +\|.*figure only" ouro-fig5.md
expect_grep f5_insp "^\| GSM8K +\| without inspiration +\|.*25\.40" ouro-fig5.md
run_recipe lade-scaling
expect_eq scaling_rows 25 "$(grep -cE '^\| N=[3-7] +\| W=(1|2|4|8|16) ' lade-scaling.md)"
run_recipe lade-configs
expect_grep configs_7b "^\| A100 configuration for 7B +\| W=15,N=5,G=15 +\|.*120x \| blog Table 1" lade-configs.md
expect_grep configs_size "Settings: 7B \(the size nearest the model's" lade-configs.md
run_recipe lade-speedups
expect_grep speedups_words "^\| GSM8K +\| lookahead +\|.*1\.8x \(CodeLlama-Instruct\) +\| blog Figure 7" lade-speedups.md
run_recipe specbench
# what differs from the paper, one note each: hardware, models, data, the references' details
expect_grep sb_diff_hw "Differs from the paper \(hardware: the paper measured on A100 80GB" specbench.md
expect_grep sb_diff_models "Differs from the paper \(models: the paper's Vicuna-v1.3 7B, 13B and 33B; SpS drafts with Vicuna-68m; ours: target $M, draft $D\)" specbench.md
expect_grep sb_diff_sps "Differs from the paper \(Spec-Bench's SpS .*gamma_max=64" specbench.md
expect_grep sb_diff_data "Differs from the paper \(data: Spec-Bench counts greedy's tokens" specbench.md
expect_grep t2_diff_ouro "Differs from the paper \(Ouroboros .*the reference drops it" ouro-table2.md
expect_grep t2_diff_data "Differs from the paper \(data: CNN/DM and WMT: Spec-Bench's 80" ouro-table2.md
expect_eq ls_no_ouro 0 "$(grep -c 'Ouroboros (thunlp' lade-speedups.md)"
expect_grep sb_overall "^\| Overall +\| Lookahead +\|.*\| +1\.34x \| +1\.64 \| Leaderboard\.md, A100" specbench.md
expect_grep sb_task "^\| Retrieval-aug\. Generation +\| PLD +\|.*1\.86x" specbench.md
expect_grep sb_sps "^\| Translation +\| SpS +\|" specbench.md
expect_eq all_complete "0" "$(q p.db "SELECT COUNT(*) FROM runs WHERE status <> 'complete'")"
expect_eq n_runs 19 "$(q p.db "SELECT COUNT(*) FROM runs")"
expect_eq every_sample_exact "0" "$(q p.db "SELECT COUNT(*) FROM samples WHERE matched = 0")"
# --cut-long: recorded; the papers' long prompts cut to half the draft's context (llama2xs: 256)
expect_eq cut_recorded "ouroboros;cut-long" "$(q p.db "SELECT template FROM runs WHERE label = 'paper ouro-table2/gsm8k'")"
expect_eq cut_prompts "128" "$(q p.db "SELECT MAX(prompt_tokens) FROM samples WHERE run_id = (SELECT id FROM runs WHERE label = 'paper ouro-table2/gsm8k')")"
# turns: MT-bench's second turn was measured (lade recipes, Spec-Bench)
expect_eq turn2 1 "$(q p.db "SELECT COUNT(*) > 0 FROM samples WHERE turn = 2 AND run_id = (SELECT id FROM runs WHERE label = 'paper specbench/all')")"

# 5. a part is its printed `decbench run` command: the same deterministic figures
cmd=$($B paper ouro-table2 "${RED[@]}" --db p.db --dry-run | sed -n 3p | sed 's/--db p.db/--db manual.db/')
eval "$B ${cmd#decbench }" >/dev/null 2>manual.err; expect_eq manual_rc 0 $?
expect_eq same_figures \
    "$(q p.db "SELECT spec, SUM(new_tokens), SUM(target_steps), SUM(target_rows) FROM samples WHERE run_id = (SELECT id FROM runs WHERE label = 'paper ouro-table2/wmt') GROUP BY spec ORDER BY spec")" \
    "$(q manual.db "SELECT spec, SUM(new_tokens), SUM(target_steps), SUM(target_rows) FROM samples GROUP BY spec ORDER BY spec")"
expect_eq same_command "$(q p.db "SELECT command FROM runs WHERE label = 'paper ouro-table2/wmt'" | sed 's/--db p.db/--db manual.db/')" \
    "$(q manual.db "SELECT command FROM runs")"

# 6. reuse: the same command again measures nothing and prints the same table
$B paper ouro-table2 "${RED[@]}" --db p.db >again.md 2>again.err
expect_eq again_rc 0 $?
expect_eq reused 3 "$(grep -c 'reusing run' again.err)"
expect_eq again_runs 19 "$(q p.db "SELECT COUNT(*) FROM runs")"
expect_eq again_table "$(grep '^| ' ouro-table2.md)" "$(grep '^| ' again.md)"
# resume: an interrupted part (its last samples gone, status incomplete) is continued
rid=$(q p.db "SELECT id FROM runs WHERE label = 'paper ouro-table3/humaneval'")
n_before=$(q p.db "SELECT COUNT(*) FROM samples WHERE run_id = $rid")
python3 - p.db "$rid" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); rid = int(sys.argv[2])
last = [r[0] for r in c.execute("SELECT id FROM samples WHERE run_id = ? ORDER BY id DESC LIMIT 2", (rid,))]
c.execute("PRAGMA foreign_keys = ON")  # the children go with their samples (ON DELETE CASCADE)
c.execute(f"DELETE FROM samples WHERE id IN ({','.join('?' * len(last))})", last)
c.execute("UPDATE runs SET status = 'incomplete' WHERE id = ?", (rid,))
c.commit()
PY
$B paper ouro-table3 "${RED[@]}" --db p.db >resumed.md 2>resumed.err
expect_eq resumed_rc 0 $?
expect_grep resumed "humaneval: resuming run $rid" resumed.err
expect_eq resumed_samples "$n_before|complete" "$(q p.db "SELECT COUNT(*), (SELECT status FROM runs WHERE id = $rid) FROM samples WHERE run_id = $rid")"
expect_eq resumed_runs 19 "$(q p.db "SELECT COUNT(*) FROM runs")"
# --fresh measures again: new runs
$B paper lade-configs "${RED[@]}" --db p.db --fresh >/dev/null 2>fresh.err
expect_eq fresh_runs 20 "$(q p.db "SELECT COUNT(*) FROM runs")"

# 7. projection (a cost curve of a model of the paper's size: here a made-up one), CSV
printf 'rows,seconds\n1,0.020\n8,0.024\n64,0.060\n256,0.200\n' >cost.csv
$B paper ouro-table2 "${RED[@]}" --db p.db --project-cost cost.csv >proj.md 2>proj.err
expect_eq proj_rc 0 $?
expect_grep proj_note "PROJECTED, not measured: target cost curve cost.csv" proj.md
expect_grep proj_greedy "^\| GSM8K +\| greedy +\|.*\| +1\.00x \|.*\| +8\.96 \| +1\.00x \|" proj.md
$B paper ouro-table2 "${RED[@]}" --db p.db --project-cost nothere.csv >/dev/null 2>proj_bad.err
expect_eq proj_bad_rc 1 $?
expect_grep proj_bad "nothere.csv" proj_bad.err
$B paper ouro-table2 "${RED[@]}" --db p.db --format csv >t2.csv 2>/dev/null
python3 - t2.csv <<'PY' && ok || bad "csv: groups, rows, our figures and the paper's"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 15, len(rows)
r = [x for x in rows if x["group"] == "CNN/DM" and x["row"] == "lookahead"][0]
assert r["paper_tps"] == "9.47" and r["paper_speedup"] == "1.17" and r["paper_source"] == "Table 2"
assert float(r["tokens_per_step"]) >= 1 and r["spec"].startswith("lookahead:W=16,N=5,G=16")
assert r["spec"].endswith(",preset=lade"), r["spec"]
PY

# LaTeX: its notes are comments, so the caption says what differs from the paper
$B paper specbench "${RED[@]}" --db p.db --format latex >sb.tex 2>/dev/null
expect_eq latex_rc 0 $?
expect_grep latex_caption "^\\\\caption\{Spec-Bench: speed-up per task and mean accepted tokens\. Measured with decbench, not the paper's setup: hardware: the paper measured on A100 80GB.*Spec-Bench's PLD.*data: Spec-Bench counts greedy's tokens" sb.tex

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
