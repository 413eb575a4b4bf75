#!/usr/bin/env bash
# cli_run_errors.sh: every bad input to `decbench run` gives one clear error line and a
# non-zero exit, and leaves the database exactly as it was: no run row, no sample, no new
# file; a foreign SQLite file stays byte-identical. --resume refuses a different workload.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_run_errors}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin

# The database every failing command points at: one complete run of 2 samples.
DB=$T/ok.db
$B run --model "$M" --dataset tinystories --limit 1 --max-new 8 --threads 1 --warmup 0 --db "$DB" >/dev/null 2>&1
state() { q "$DB" "SELECT (SELECT COUNT(*) FROM runs) || '/' || (SELECT COUNT(*) FROM samples) || '/' ||
    (SELECT COUNT(*) FROM histograms) || '/' || (SELECT group_concat(status) FROM runs)"; }
BEFORE=$(state)
[ "$BEFORE" = "1/1/1/complete" ] || { echo "setup failed: $BEFORE"; exit 1; }

# expect_fail NAME WANT_EXIT PATTERN CMD...: exit status, stderr pattern, one line of error,
# database unchanged
expect_fail() {
    local name=$1 want=$2 pat=$3; shift 3
    local out rc
    out=$("$@" 2>&1 >/dev/null); rc=$?
    local n_err; n_err=$(grep -c "^decbench run: " <<<"$out")
    if [ $rc -eq "$want" ] && grep -qE -- "$pat" <<<"$out" && [ "$n_err" -eq 1 ] && [ "$(state)" = "$BEFORE" ]; then
        passes=$((passes + 1))
    else
        echo "FAIL $name: rc=$rc (want $want) db=$(state) (was $BEFORE) stderr=$out"
        fails=$((fails + 1))
    fi
}
R=(run --model "$M" --dataset tinystories --limit 2 --max-new 8 --threads 1 --db "$DB")

printf '{"prompt": "Once upon a time"}\n{"prompt": "x",}\n' >bad.jsonl
printf '{"prompt": "Once upon a time"}\n{"text": "no prompt field"}\n' >nofield.jsonl
python3 -c "print('{\"prompt\": \"' + 'Once upon a time there was a dog. ' * 120 + '\"}')" >long.jsonl
printf 'not a model at all\n' >text.bin

expect_fail missing_model 1 "nope\.bin: cannot open model" $B run --model "$T/nope.bin" --dataset tinystories --db "$DB"
expect_fail not_a_model 1 "text\.bin: " $B run --model "$T/text.bin" --dataset tinystories --db "$DB"
expect_fail malformed_jsonl 1 "bad\.jsonl:2: invalid JSON" $B "${R[@]}" --dataset jsonl:bad.jsonl
expect_fail missing_field 1 "nofield\.jsonl:2: field \"prompt\" missing" $B "${R[@]}" --dataset jsonl:nofield.jsonl
expect_fail missing_jsonl 1 "nope\.jsonl" $B "${R[@]}" --dataset jsonl:nope.jsonl
expect_fail unknown_dataset 1 "unknown dataset \"nope\"" $B "${R[@]}" --dataset nope
expect_fail unknown_template 1 "unknown template \"nope\" for tinystories" $B "${R[@]}" --template nope
expect_fail unknown_decoder 1 "unknown decoder 'nope'; valid decoders: greedy" $B "${R[@]}" --decoder nope
expect_fail bad_decoder_param 1 "lookahead: unknown parameter 'X'" $B "${R[@]}" --decoder lookahead:X=1
expect_fail decoder_range 1 "W=999 is out of range" $B "${R[@]}" --decoder lookahead:W=999
expect_fail needs_draft 1 "spec needs a draft model" $B "${R[@]}" --decoder spec
expect_fail dataset_twice 1 "dataset tinystories is given twice" $B "${R[@]}" --dataset tinystories,tinystories
expect_fail offset_past_end 1 "offset 5000 is past the end" $B "${R[@]}" --offset 5000
expect_fail long_prompt 1 "long\.jsonl:prompt\[0\] \(id 0\): the prompt is [0-9]+ tokens but the context length .* 512: leave such prompts out with --skip-long" \
    $B "${R[@]}" --dataset jsonl:long.jsonl
# ... and the other way out, keeping the prompt's end (the papers' recipes take it)
expect_fail long_prompt_cut 1 "--skip-long, or keep their last tokens with --cut-long" \
    $B "${R[@]}" --dataset jsonl:long.jsonl
expect_fail missing_model_opt 2 "--model FILE is required" $B run --dataset tinystories --db "$DB"
expect_fail missing_dataset_opt 2 "--dataset NAME is required" $B run --model "$M" --db "$DB"
expect_fail bad_int 2 "--limit: 'x' is not an integer" $B "${R[@]}" --limit x
expect_fail bad_repeats 2 "--repeats: 0 is out of range" $B "${R[@]}" --repeats 0
expect_fail bad_seed 2 "--shuffle: '-1' is not a seed" $B "${R[@]}" --shuffle -1
expect_fail unknown_option 2 "unknown option '--bogus'" $B "${R[@]}" --bogus
expect_fail bad_kernels 2 "kernels fast: expected auto, exact, exact-int8, exact-int8b or blas" $B "${R[@]}" --kernels fast
# --resume: a different workload, a run that does not exist or is complete
expect_fail resume_max_new 1 "--resume 1: the run used --max-new 8, this command 9" $B "${R[@]}" --max-new 9 --limit 1 --resume 1
expect_fail resume_datasets 1 "--resume 1: the run used datasets 'tinystories'" $B "${R[@]}" --dataset jsonl:long.jsonl --skip-long --resume 1
expect_fail resume_missing 1 "no run 7 in" $B "${R[@]}" --max-new 8 --resume 7
expect_fail resume_complete 1 "run 1 .* is not incomplete/running" $B "${R[@]}" --limit 1 --max-new 8 --resume 1

# Databases that cannot be written: no file may appear, a foreign one stays byte-identical.
expect_db_fail() { # NAME PATTERN PATH
    local out rc
    out=$($B run --model "$M" --dataset tinystories --limit 1 --max-new 4 --threads 1 --db "$3" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && grep -qE -- "$2" <<<"$out"; then passes=$((passes + 1))
    else echo "FAIL $1: rc=$rc stderr=$out"; fails=$((fails + 1)); fi
}
expect_db_fail proc_db "/proc/x\.db" /proc/x.db
printf 'plain file\n' >regular
expect_db_fail under_regular_file "regular is not a folder" "$T/regular/x.db"
expect_db_fail text_file "text\.bin.*not" "$T/text.bin"
python3 -c "
import sqlite3; c = sqlite3.connect('foreign.db'); c.execute('CREATE TABLE t (a)'); c.execute('INSERT INTO t VALUES (1)'); c.commit()"
cp foreign.db foreign.copy
expect_db_fail foreign_db "foreign\.db is an SQLite database but not a decbench one" "$T/foreign.db"
if cmp -s foreign.db foreign.copy && [ ! -e foreign.db-wal ]; then passes=$((passes + 1))
else echo "FAIL foreign_db_untouched"; fails=$((fails + 1)); fi
# a failing command with a new --db path creates no file and no folder
$B run --model "$T/nope.bin" --dataset tinystories --db "$T/newdir/new.db" >/dev/null 2>&1
if [ ! -e "$T/newdir" ]; then passes=$((passes + 1)); else echo "FAIL no_file_on_error"; fails=$((fails + 1)); fi

# --skip-long leaves the long prompt out and runs the rest
cat long.jsonl >mixed.jsonl && printf '{"prompt": "Once upon a time"}\n' >>mixed.jsonl
out=$($B run --model "$M" --dataset jsonl:mixed.jsonl --skip-long --max-new 4 --threads 1 --db "$T/skip.db" 2>&1 >/dev/null)
if [ $? -eq 0 ] && grep -q "1 prompt(s) longer than the context (512) left out" <<<"$out" &&
    [ "$(q "$T/skip.db" "SELECT group_concat(sample_index) FROM samples")" = "1" ]; then passes=$((passes + 1))
else echo "FAIL skip_long: $out"; fails=$((fails + 1)); fi

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
