#!/usr/bin/env bash
# cli_run.sh: `decbench run` writes exactly the rows it should: one run (complete, options and
# environment recorded), prompts x decoders x repeats samples all matching greedy, histograms,
# a per-step trace whose rows add up, deterministic repeats; the default database path; several
# datasets (named + jsonl:PATH) with --shuffle/--offset/--limit; progress lines on a non-terminal.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_run}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin

# 1. four decoders (two need the draft), 3 prompts, 2 repeats, trace, default --db
$B run --model "$M" --draft "$D" --dataset tinystories --limit 3 --max-new 32 --repeats 2 \
    --threads 1 --trace --label "cli test" --decoder 'lookahead:W=3,N=3,G=3' --decoder pld \
    --decoder spec:gamma=2 >run.out 2>run.err
expect_eq run_exit 0 $?
DB=results/decbench.db
expect_eq default_db_created yes "$([ -f $DB ] && echo yes)"
expect_eq one_run "1|complete|cli test|tinystories|raw|32|2|1|1|exact|0" \
    "$(q $DB "SELECT id, status, label, datasets, template, max_new, repeats, warmup, threads, kernels, seed FROM runs")"
expect_eq run_recorded "1|1|1|1" "$(q $DB "SELECT command LIKE 'decbench run --model %', env_id IS NOT NULL,
    model_hash IS NOT NULL AND draft_hash IS NOT NULL, finished IS NOT NULL FROM runs")"
expect_eq environment "1" "$(q $DB "SELECT COUNT(*) FROM environments WHERE cpu_threads > 0 AND compiler != ''")"
# prompts x decoders x repeats, all equal to greedy, four decoders with greedy added first
expect_eq samples "24|24|4|3|2" "$(q $DB "SELECT COUNT(*), SUM(matched), COUNT(DISTINCT spec),
    COUNT(DISTINCT sample_index), COUNT(DISTINCT repeat) FROM samples")"
expect_eq greedy_first "greedy" "$(q $DB "SELECT decoder FROM samples ORDER BY id LIMIT 1")"
expect_eq greedy_one_step_per_token "0" "$(q $DB "SELECT COUNT(*) FROM samples WHERE decoder = 'greedy'
    AND target_steps != new_tokens")"
expect_eq no_divergence_fields "0" "$(q $DB "SELECT COUNT(*) FROM samples WHERE diverge_pos IS NOT NULL")"
# one output per prompt: every decoder and repeat produced greedy's tokens
expect_eq one_output_per_prompt "3" "$(q $DB "SELECT COUNT(DISTINCT sample_index || output_hash) FROM samples")"
# repeats measure the same work: deterministic figures equal between repeat 0 and 1
expect_eq repeats_deterministic "0" "$(q $DB "SELECT COUNT(*) FROM samples a JOIN samples b ON
    a.spec = b.spec AND a.sample_index = b.sample_index AND a.repeat = 0 AND b.repeat = 1
    WHERE a.target_steps != b.target_steps OR a.accepted != b.accepted OR a.draft_steps != b.draft_steps")"
expect_eq histograms "24" "$(q $DB "SELECT COUNT(DISTINCT sample_id) FROM histograms WHERE kind = 'accept'")"
# trace: a prefill row (step 0) per sample, steps 0..target_steps-1, emitted adds up to new_tokens
expect_eq trace_prefill "24" "$(q $DB "SELECT COUNT(*) FROM trace WHERE step = 0")"
expect_eq trace_adds_up "0" "$(q $DB "SELECT COUNT(*) FROM samples s WHERE new_tokens !=
    (SELECT SUM(emitted) FROM trace t WHERE t.sample_id = s.id) OR target_steps !=
    (SELECT COUNT(*) FROM trace t WHERE t.sample_id = s.id)")"
expect_eq trace_rows "0" "$(q $DB "SELECT COUNT(*) FROM samples s WHERE target_rows !=
    (SELECT SUM(rows) FROM trace t WHERE t.sample_id = s.id AND step > 0)")"
# the summary table on stdout, progress on stderr
expect_grep summary_table "^\| tinystories +\| greedy +\|.*1\.00x" run.out
expect_grep summary_specs "^\| tinystories +\| spec +\|" run.out
expect_grep progress_lines "^run 1: 24/24 samples, 24 measured" run.err
expect_grep final_line "run 1 complete: 24 sample\(s\) measured" run.err

# 2. two datasets (named + jsonl), shuffled subset, into an explicit database in a new folder
printf '{"prompt": "Once upon a time, a cat"}\n{"prompt": "Tom had a red ball"}\n{"id": "c", "prompt": "Lily was sad"}\n' >mine.jsonl
$B run --model "$M" --dataset tinystories,jsonl:mine.jsonl --shuffle 7 --offset 1 --limit 2 \
    --max-new 16 --threads 1 --warmup 0 --db out/sub/x.db >/dev/null 2>run2.err
expect_eq run2_exit 0 $?
expect_eq run2_run "tinystories,jsonl:mine.jsonl:prompt|raw,raw|16|7" \
    "$(q out/sub/x.db "SELECT datasets, template, max_new, seed FROM runs")"
expect_eq run2_samples "2|2|4" "$(q out/sub/x.db "SELECT SUM(dataset = 'tinystories'),
    SUM(dataset LIKE 'jsonl:%'), SUM(matched) FROM samples")"
# the same seed gives the same prompts (a slice of one permutation per seed)
$B run --model "$M" --dataset tinystories --shuffle 7 --offset 1 --limit 2 --max-new 16 \
    --threads 1 --warmup 0 --db out/sub/x.db >/dev/null 2>&1
expect_eq shuffle_reproducible "$(q out/sub/x.db "SELECT group_concat(sample_index) FROM samples WHERE run_id = 1 AND dataset = 'tinystories'")" \
    "$(q out/sub/x.db "SELECT group_concat(sample_index) FROM samples WHERE run_id = 2")"
# no --max-new: the dataset's own default (tinystories: 256) is recorded
$B run --model "$M" --dataset tinystories --limit 1 --threads 1 --warmup 0 --db out/sub/x.db >/dev/null 2>&1
expect_eq default_max_new "256" "$(q out/sub/x.db "SELECT max_new FROM runs WHERE id = 3")"

# 3. --help documents the decisions
$B run --help >help.txt 2>/dev/null
expect_eq help_exit 0 $?
expect_grep help_resume "--resume" help.txt
expect_grep help_reference "greedy is always measured first" help.txt
expect_grep help_datasets "tinystories" help.txt

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
