#!/usr/bin/env bash
# cli_outputs.sh: a corpus of hostile command lines about the files a command reads and writes,
# one case per line, each classified by what happened:
#   ok             expected exit 0, got it, no file that existed before was changed
#   clear error    expected exit N != 0, got it with the expected message, and nothing was
#                  written (the fixture folder is exactly as before)
#   unclear error  a non-zero exit, but another status or message
#   silent wrong   exit 0 where an error was expected
#   wrote on error the expected error, but files were created or changed first
#   data lost      a file that existed before was changed or removed (an input replaced)
#   crash          killed by a signal (SIGBUS, SIGSEGV, ...) or a sanitizer report
#   hang           still running after the timeout (60 s)
# The test passes when every case's outcome is the one it expects (ok for exit 0, clear error
# otherwise). The corpus is the block between `<<'CORPUS'` and `CORPUS`: fields separated by
# '|': name, expected exit, expected message (an extended regular expression, empty for exit
# 0), the command (bash, run in the fixture folder; $B is the binary, $T the scratch folder,
# $RUN/$OURO/$COST/$TUNE/$PAPER the prefixes below). A later script can extract it and count
# the outcomes over any build.
# What it covers:
#   - no output may replace an input, nor another output (util/file.h file_check_io): run
#     --state-save/--pool-save/--db, report -o, cost --csv/--db, convert/synth -o (and the
#     PATH.tmp a write truncates first), plot and tune figures, sweep and paper --db;
#   - every file is checked before the work: paper --project-cost and every part's datasets
#     (the last part's missing file was found after the first parts measured), tune --out, plot
#     --llama-csv and --plots-dir, cost --csv;
#   - tune resolves a bare model name as run does (and prices a self:TYPE draft, no file),
#     synth a bare tokenizer name;
#     a prompt far beyond the context is refused
#     without being encoded (a 20 MB JSONL line).
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_outputs}
rm -rf "$T" && mkdir -p "$T/fx" "$T/log" && cd "$T/fx" || exit 1
export B T

# ---- fixtures: copies the cases may try to destroy ---------------------------------------------
cp "$S/models/stories260K.bin" m.bin && cp "$S/models/tok512.bin" tok.bin &&
    cp "$S/models/llama2xs.bin" d.bin && cp m.bin m.gguf.tmp && chmod 644 ./*
head -2 "$S/datasets/tinystories/prompts_once_upon_a_time.jsonl" >ds.jsonl
[ -s ds.jsonl ] || printf '%s\n' '{"prompt": "Once upon a time"}' '{"prompt": "Lily had a cat"}' >ds.jsonl
printf 'garbage\n' >afile
mkdir adir pl fig dd && mkfifo fifo
# a datasets folder without the last part of ouro-table2 (wmt_de_en)
ln -s "$S/datasets/gsm8k" dd/gsm8k && ln -s "$S/datasets/cnn_dailymail" dd/cnn_dailymail
RUN="\$B run --model m.bin --tokenizer tok.bin --dataset jsonl:ds.jsonl --max-new 8 --threads 1 --warmup 0"
OURO="$RUN --draft d.bin --decoder ouroboros:gamma=2,W=4,beta=4"
COST="\$B cost --model m.bin --rows 1,2 --context 4 --seconds 0.02 --no-bandwidth"
TUNE="\$B tune --tokenizer tok.bin --dataset jsonl:ds.jsonl --limit 2 --probe-prompts 1 --max-new 8 --threads 1 --budget 0.1 --no-plot"
PAPER="\$B paper lade-configs --model m.bin --tokenizer tok.bin --limit 1 --max-new 8 --cut-long --threads 1"
export RUN OURO COST TUNE PAPER
eval "$RUN --decoder pld --db R.db" >/dev/null 2>"$T/log/setup_db.err" &&
    eval "$OURO --db pool.db --state-save P.bin" >/dev/null 2>"$T/log/setup_pool.err" &&
    eval "$COST --csv c.csv" >/dev/null 2>"$T/log/setup_cost.err"
expect_eq setup 0 $?
rm -f pool.db*
cp R.db pl/accept.tsv && cp R.db fig/tune_frontier.tsv
cp -a . "$T/pristine"
# a 20 MB prompt on one line (outside the fixture folder: an input only)
python3 -c 'import json, sys; sys.stdout.write(json.dumps({"prompt": "the cat sat on the mat. " * 850000}) + "\n")' >"$T/big.jsonl"

# ---- the corpus ------------------------------------------------------------------------------
# snapshot: every file and link of the folder as "path md5" lines, sorted (no md5 for what cannot be
# read: a dangling link, a directory). One md5sum for all the files: a fork per file made this test
# spend most of its time in the snapshots.
snapshot() {
    local h f
    local -A sum=()
    while read -r h f; do sum[$f]=$h; done < <(find . \( -type f -o -type l \) -exec md5sum -- {} + 2>/dev/null)
    find . -type f -o -type l | LC_ALL=C sort | while read -r f; do printf '%s %s\n' "$f" "${sum[$f]:-}"; done
}
declare -A outcomes
run_case() { # NAME EXIT MESSAGE COMMAND
    local name=$1 want=$2 msg=$3 cmd=$4 before after rc got
    before=$(snapshot)
    timeout 60 bash -c "$cmd" >"$T/log/$name.out" 2>"$T/log/$name.err"
    rc=$?
    after=$(snapshot)
    # files that existed before and differ now (changed or gone)
    local lost
    lost=$(comm -23 <(printf '%s\n' "$before") <(printf '%s\n' "$after"))
    if [ $rc -eq 124 ]; then got="hang"
    elif { [ $rc -ge 128 ] && [ $rc -ne 130 ]; } || grep -qE "AddressSanitizer|runtime error:|LeakSanitizer" "$T/log/$name.err"; then got="crash"
    elif [ -n "$lost" ]; then got="data lost"
    elif [ "$want" -eq 0 ]; then [ $rc -eq 0 ] && got="ok" || got="unclear error"
    elif [ $rc -eq 0 ]; then got="silent wrong"
    elif [ $rc -ne "$want" ] || ! grep -qE -- "$msg" "$T/log/$name.err"; then got="unclear error"
    elif [ "$before" != "$after" ]; then got="wrote on error"
    else got="clear error"; fi
    outcomes[$got]=$((${outcomes[$got]:-0} + 1))
    local expected="clear error"
    [ "$want" -eq 0 ] && expected="ok"
    if [ "$got" = "$expected" ]; then passes=$((passes + 1))
    else
        echo "FAIL $name: $got (rc=$rc, want $want${msg:+ /$msg/})"
        [ -n "$lost" ] && echo "  changed: $(printf '%s\n' "$lost" | cut -d' ' -f1 | tr '\n' ' ')"
        head -3 "$T/log/$name.err" | sed 's/^/  /'
        fails=$((fails + 1))
    fi
    # what a case created is removed, and what it destroyed restored, so that each case
    # starts from the same folder
    if [ -n "$lost" ]; then
        find . -mindepth 1 -delete && cp -a "$T/pristine/." .
        return
    fi
    comm -13 <(printf '%s\n' "$before" | cut -d' ' -f1) <(printf '%s\n' "$after" | cut -d' ' -f1) |
        while read -r f; do rm -f "$f"; done
    find . -mindepth 1 -type d -empty -not -name adir -not -name pl -not -name fig -delete 2>/dev/null
}

while IFS='|' read -r name want msg cmd; do
    case "$name" in '' | '#'*) continue ;; esac
    run_case "$name" "$want" "$msg" "$cmd"
done <<'CORPUS'
# an output on an input: refused before anything is written
run_state_save_on_db|1|--state-save names the input file R\.db \(--db\)|eval "$OURO --db R.db --state-save R.db"
run_pool_save_on_db|1|--pool-save names the input file R\.db \(--db\)|eval "$OURO --db R.db --pool-save R.db"
run_state_save_on_model|1|--state-save names the input file m\.bin \(--model\)|eval "$OURO --db new.db --state-save m.bin"
run_state_save_on_draft|1|--state-save names the input file d\.bin \(--draft\)|eval "$OURO --db new.db --state-save d.bin"
run_state_save_on_tokenizer|1|--state-save names the input file tok\.bin \(--tokenizer\)|eval "$OURO --db new.db --state-save tok.bin"
run_state_save_on_dataset|1|--state-save names the input file ds\.jsonl \(--dataset\)|eval "$OURO --db new.db --state-save ds.jsonl"
run_db_on_model|1|--db names the input file m\.bin \(--model\)|eval "$RUN --decoder pld --db m.bin"
run_db_on_dataset|1|--db names the input file ds\.jsonl \(--dataset\)|eval "$RUN --decoder pld --db ds.jsonl"
run_db_on_state_load|1|--db names the input file P\.bin \(--state-load\)|eval "$OURO --db P.bin --state-load P.bin"
sweep_db_on_model|1|--db names the input file m\.bin \(--model\)|$B sweep --model m.bin --tokenizer tok.bin --dataset jsonl:ds.jsonl --max-new 8 --threads 1 --warmup 0 --grid 'pld:k=2' --db m.bin
report_out_on_db|1|--out names the input file R\.db \(--db\)|$B report --db R.db -o R.db --format md
report_out_on_db_run|1|--out names the input file \./R\.db \(--db\)|$B report --db R.db:1 -o ./R.db --format md
report_out_on_cost|1|--out names the input file c\.csv \(--project-cost\)|$B report --db R.db --layout projected --project-cost c.csv -o c.csv --format csv
cost_csv_on_db|1|--csv names the input file R\.db \(--db\)|eval "$COST --db R.db --csv R.db"
cost_csv_on_model|1|--csv names the input file m\.bin \(--model\)|eval "$COST --csv m.bin"
cost_db_on_model|1|--db names the input file m\.bin \(--model\)|eval "$COST --db m.bin"
cost_csv_and_db_new|1|--csv names the input file \./new\.db \(--db\)|eval "$COST --db new.db --csv ./new.db"
convert_out_on_model|1|-o names the input file|$B convert --model m.bin --tokenizer tok.bin --type f32 -o m.bin
convert_out_on_tokenizer|1|-o names the input file tok\.bin \(--tokenizer\)|$B convert --model m.bin --tokenizer tok.bin --type f32 -o tok.bin
convert_tmp_on_model|1|-o m\.gguf is written through m\.gguf\.tmp first, which names the input file|$B convert --model m.gguf.tmp --tokenizer tok.bin --type f32 -o m.gguf
synth_out_on_tokenizer|1|-o names the input file tok\.bin \(--tokenizer\)|$B synth --config 260K --type f32 --tokenizer tok.bin -o tok.bin
plot_out_on_db|1|--out names the input file pl/accept\.tsv \(--db\)|$B plot --db pl/accept.tsv --kind accept --out pl --data-only
tune_out_on_db|1|--out names the input file fig/tune_frontier\.tsv \(--db\)|eval "$TUNE --model m.bin --db fig/tune_frontier.tsv --out fig"
paper_db_on_model|1|--db names the input file m\.bin \(--model\)|eval "$PAPER --db m.bin"
merge_into_itself|1|R\.db is the output database itself|$B merge R.db R.db
# outputs that are legitimate: a database appended to, a state file accumulated, a report
run_db_appended|0||cp R.db R2.db && eval "$RUN --decoder pld --db R2.db"
run_state_accumulated|0||cp P.bin acc.bin && eval "$OURO --db new.db --state-load acc.bin --state-save acc.bin"
report_out_new|0||$B report --db R.db -o rep.md
paper_cost_in_its_db|0||cp R.db R3.db && eval "$COST --db R3.db" && eval "$PAPER --db R3.db --project-cost R3.db"
# every file checked before the work
paper_project_cost_missing|1|--project-cost missing\.csv: cannot open cost|eval "$PAPER --db new.db --project-cost missing.csv"
paper_dataset_missing_last_part|1|dd/wmt_de_en/specbench_translation\.jsonl: not found|$B paper ouro-table2 --model m.bin --tokenizer tok.bin --limit 1 --max-new 8 --cut-long --threads 1 --data-dir dd --db new.db
paper_project_cost_malformed|1|cost source afile has no points|eval "$PAPER --db new.db --project-cost afile"
cost_csv_fifo|1|fifo: is not a regular file \(a FIFO\), expected a CSV file|eval "$COST --csv fifo"
cost_csv_no_folder|1|no/x\.csv\.tmp: cannot create|eval "$COST --csv no/x.csv"
tune_out_on_file|1|--out afile: is a regular file, expected a folder for the figures|eval "$TUNE --model m.bin --db new.db --out afile"
tune_out_below_file|1|--out afile/sub: cannot create the figures: afile is not a folder|eval "$TUNE --model m.bin --db new.db --out afile/sub"
plot_llama_csv_missing|1|--llama-csv missing\.csv: .*cannot open llama-bench CSV|$B plot --db R.db --out newplots --llama-csv missing.csv --data-only
plot_plots_dir_missing|1|--plots-dir nodir: cannot open the gnuplot scripts|$B plot --db R.db --kind accept --out newplots --plots-dir nodir
report_out_no_folder|1|no/r\.md\.tmp: cannot create|$B report --db R.db -o no/r.md
run_state_save_no_folder|1|--state-save: no/p\.bin\.tmp: cannot create|eval "$OURO --db new.db --state-save no/p.bin"
# names and sizes
tune_bare_model_name|0||eval "$TUNE --model stories260K.bin --db new.db --out tfig"
tune_self_draft|0||eval "$TUNE --model m.bin --draft self:q8_0 --db new.db --out tfig"
synth_bare_tokenizer_name|0||$B synth --config 260K --type f32 --tokenizer tok512.bin -o syn.gguf
jsonl_line_20mb|1|the prompt is [0-9]+ bytes, more than 512 tokens .* leave such prompts out with --skip-long|$B run --model m.bin --tokenizer tok.bin --dataset jsonl:$T/big.jsonl --max-new 8 --threads 1 --decoder pld --db new.db
jsonl_line_20mb_skipped|0||$B run --model m.bin --tokenizer tok.bin --dataset jsonl:ds.jsonl --dataset jsonl:$T/big.jsonl --skip-long --max-new 8 --threads 1 --warmup 0 --decoder pld --db new.db
CORPUS

summary=""
for k in "ok" "clear error" "unclear error" "silent wrong" "wrote on error" "data lost" "crash" "hang"; do
    summary+="$k ${outcomes[$k]:-0}; "
done
echo "outcomes: ${summary%; }"
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
