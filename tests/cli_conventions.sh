#!/usr/bin/env bash
# cli_conventions.sh: the conventions every command follows: --help on stdout
# with exit 0, usage errors exit 2 in every command, getopt_long's forms (-n8, --opt=V,
# prefixes), placeholders that say what a value is, --version, report's output format taken from
# --out's extension (and ambiguity refused), cost --seconds in seconds, the default thread count
# taken from the affinity mask, models found by name in the models folder, messages without
# internal function names, the note when the context length cuts a generation, the live progress
# line, compare's machine warnings, and the SHA-256 model fingerprint (stored, shown, cached per
# file).
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_conventions}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin TOK=$S/models/tok512.bin

# 1. --help: stdout, exit 0, nothing on stderr, for the tool and every command
commands=$($B --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
expect_eq n_commands 19 "$(wc -w <<<"$commands")"
$B --help >h.out 2>h.err; expect_eq top_help_rc "0 0" "$? $(wc -c <h.err)"
for c in $commands; do
    [ "$c" = help ] && continue
    $B "$c" --help >h.out 2>h.err; rc=$?
    if [ $rc -eq 0 ] && [ -s h.out ] && [ ! -s h.err ] && grep -q "^usage: decbench $c" h.out; then ok; else bad "help_$c: rc=$rc err=$(head -3 h.err)"; fi
    # placeholders say what the value is: no bare "V", and FILE for the model
    if grep -qE -- "--[a-z-]+ V( |$)" h.out; then bad "metavar_$c: a bare V placeholder"; else ok; fi
    # 2. usage errors exit 2 in every command, with one line on stderr
    $B "$c" --no-such-option >/dev/null 2>h.err; rc=$?
    if [ $rc -eq 2 ] && grep -q "^decbench $c: unknown option '--no-such-option'" h.err; then ok; else bad "usage_$c: rc=$rc $(cat h.err)"; fi
done
# an option spelt with '_' or one typo away is named: the usage error says which one was meant
expect_rc did_you_mean_underscore 2 "unknown option '--max_new': did you mean --max-new\?" $B run --max_new 8
expect_rc did_you_mean_typo 2 "unknown option '--tolerence': did you mean --tolerance\?" $B compare a b --tolerence 5%
expect_rc no_guess 2 "unknown option '--bogus' \(see --help\)" $B sweep --bogus
# setup.sh's main job prints its table once (run prints it: no `report` after it) and says why
# every decoder is slower than greedy on its 260K model, pointing to the cost curve
SETUP=${DECBENCH_SOURCE:?}/setup.sh
expect_eq setup_one_table 0 "$(grep -cE '^\$B report' "$SETUP")"
expect_grep setup_why "weights sit in cache, so a" "$SETUP"
expect_grep setup_cost "measures this machine's curve" "$SETUP"
$B help run >h.out 2>&1; expect_eq help_command "0" "$?"
expect_grep help_command_text "^usage: decbench run" h.out
expect_grep metavar_model "-m, --model FILE" h.out
expect_grep metavar_n "-n, --max-new N" h.out
$B >/dev/null 2>&1; expect_eq no_command_rc 2 $?
expect_rc unknown_command 2 "unknown command 'frob'" $B frob
$B --version >v.out 2>&1; expect_eq version_rc 0 $?
expect_grep version "^decbench [0-9]+\.[0-9]+\.[0-9]+ \(results schema [0-9]+" v.out
# usage errors of the commands that exited 1 before
expect_rc generate_bad_n 2 "--max-new: 'x' is not an integer" $B generate --model "$M" -n x
expect_rc generate_no_model 2 "--model FILE is required" $B generate
expect_rc cost_bad_rows 2 "--rows: 'x' is not a count" $B cost --model "$M" --rows x
expect_rc cost_bad_seconds 2 "--seconds: '3parsecs' is not a duration" $B cost --model "$M" --seconds 3parsecs
expect_rc synth_no_output 2 "--config and -o FILE are required" $B synth --config 260K
expect_rc synth_bad_seed 2 "--seed: 'x' is not an integer" $B synth --config 260K --seed x -o x.bin
expect_rc detokenize_no_tok 2 "give --tokenizer FILE or --model FILE" $B detokenize --ids "1 2"
expect_rc convert_bad_type 2 "--type q9: expected" $B convert --model "$M" --type q9 -o x.gguf
expect_rc convert_missing 2 "are required" $B convert --model "$M"
expect_rc flag_value 2 "option --stats takes no value" $B generate --model "$M" --stats=yes
expect_rc missing_value 2 "option --max-new needs a value" $B generate --model "$M" -n
expect_rc ambiguous 2 "option '--pool' is ambiguous: --pool-load, --pool-save" $B run --pool x
# 3. getopt_long's forms: -n8, --max-new=8 and a unique prefix give the same tokens
a=$($B generate --model "$M" -n8 --prompt "Once upon" 2>/dev/null)
b=$($B generate --model "$M" --max-new=8 --prompt="Once upon" 2>/dev/null)
c=$($B generate --model "$M" --max 8 --prompt "Once upon" 2>/dev/null)
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ]; then ok; else bad "getopt_forms: '$a' '$b' '$c'"; fi
# 4. a model named by its file name is found in the models folder, from any folder
mkdir -p elsewhere && (cd elsewhere && DECBENCH_SHARED=$S $B generate --model stories260K.bin -n 4 >out.txt 2>err.txt)
expect_eq model_by_name 0 $?
expect_rc model_missing 1 "nope\.bin: cannot open model.*\(nor in the models folder" env DECBENCH_SHARED="$S" $B generate --model nope.bin

# 5. report's format: --format, else the extension of --out; a format's name or an unknown
# extension is refused instead of silently writing markdown
# (without OPENBLAS_NUM_THREADS, which the test environment sets: decbench restarts itself with
# it, so OpenBLAS's threads never start; the run records 1)
env -u OPENBLAS_NUM_THREADS $B run --model "$M" --dataset tinystories --limit 2 -n 8 --threads 1 --warmup 0 --decoder pld --db r.db >/dev/null 2>&1 || bad "setup run"
expect_eq openblas_restart 1 "$(q r.db "SELECT openblas_threads FROM environments")"
expect_rc out_named_csv 2 "--out csv: a file named like a format" $B report --db r.db -o csv
[ -e csv ] && bad "out_named_csv: a file named csv was written" || ok
expect_rc out_no_ext 2 "cannot tell the format" $B report --db r.db -o table
expect_rc out_disagrees 2 "the extension disagrees with --format json" $B report --db r.db --format json -o t.csv
$B report --db r.db -o t.csv 2>/dev/null; expect_eq out_csv_rc 0 $?
expect_grep out_csv "^run|^dataset,|^dataset|^[a-z_]+,.*spec" t.csv
$B report --db r.db -o t.json 2>/dev/null && python3 -c "import json; json.load(open('t.json'))" && ok || bad "out_json"
$B report --db r.db -o t.tex 2>/dev/null; expect_grep out_tex "\\\\begin\{tabular\}" t.tex
$B report --db r.db -o t.txt 2>/dev/null; expect_grep out_txt "^\| dataset" t.txt
ls *.tmp 2>/dev/null | grep -q . && bad "report left a .tmp file" || ok

# 6. cost --seconds is seconds (or with a unit)
$B cost --model "$M" --rows 1 --seconds 50ms --no-bandwidth --threads 1 >c1.txt 2>&1; expect_eq cost_ms 0 $?
$B cost --model "$M" --rows 1 --seconds 0.05 --no-bandwidth --threads 1 >c2.txt 2>&1; expect_eq cost_s 0 $?
# 6a. --bandwidth-rounds: the one-row pass's share of the read bandwidth measured interleaved
# (harness/measure.h), after the grid, at its first context; a share above 0, its range around it
$B cost --model "$M" --rows 1,2 --context 3 --seconds 10ms --no-bandwidth --threads 2 \
    --bandwidth-rounds 3 >bwr.txt 2>&1; expect_eq cost_bw_rounds_rc 0 $?
expect_eq cost_bw_rounds_line 1 "$(awk '/interleaved, 3 rounds at context 3: / {
    for (i = 1; i <= NF; i++) if ($i == "(rounds") { share = $(i - 1) + 0; split($(i + 1), r, "-") }
    print (share > 0 && r[1] + 0 <= share && share <= r[2] + 0) }' bwr.txt)"
expect_rc cost_bw_rounds_bad 2 "--bandwidth-rounds" $B cost --model "$M" --bandwidth-rounds many
expect_rc cost_bw_rounds_range 2 "--bandwidth-rounds" $B cost --model "$M" --bandwidth-rounds 1001

# 6b. the default thread count is the CPUs of the affinity mask, so taskset sets it (a machine
# with one CPU cannot tell it from the online count)
if [ "$(nproc --all)" -gt 1 ]; then
    taskset -c 0 $B cost --model "$M" --rows 1 --seconds 10ms --no-bandwidth >aff.txt 2>&1
    expect_grep default_threads_affinity "^# 1 threads," aff.txt
fi

# 7. messages name files and fields, not our functions (db_open:, report_plot_render:, ...)
python3 -c "import sqlite3; c = sqlite3.connect('foreign.db'); c.execute('CREATE TABLE t (a)'); c.commit()"
printf 'not a database' >text.db
mkdir -p adir
errs=()
for cmdline in "report --db foreign.db" "report --db text.db" "report --db r.db --run 99" \
    "plot --db r.db --run 99 --kind speedup --out p" "compare r.db nope.db" "report --db adir" \
    "plot --db r.db --kind cost --out p" "run --model $M --dataset tinystories --limit 1 -n 2 --db foreign.db" \
    "report --db r.db --layout projected --project-cost nope.csv"; do
    $B $cmdline >/dev/null 2>e.txt
    if grep -qE "(^|: )(db|report|rep|plot|tok|ds|model|dec|compare)_[a-z_]+: " e.txt; then bad "function name in: $cmdline: $(cat e.txt)"; else ok; fi
    [ -s e.txt ] || bad "no message for: $cmdline"
done

# 8. a generation cut by the context length says so (a 128-token synthetic model)
$B synth --config 64,172,5,8,4,512,128 --seed 3 -o small.bin 2>/dev/null || bad "synth small"
$B generate --model small.bin --tokenizer "$TOK" -n 252 >gen.txt 2>gen.err; expect_eq cut_rc 0 $?
expect_grep cut_note "note: stopped after [0-9]+ of 252 new tokens: the prompt \(1 tokens\) and the output fill the context length of small\.bin \(128\)" gen.err
$B generate --model small.bin --tokenizer "$TOK" -n 20 >gen.txt 2>gen.err
if grep -q "note: stopped" gen.err; then bad "cut_note_without_cut"; else ok; fi

# 9. the live progress line (a terminal, through script(1)): during a warm-up, and before a
# decoder's first token, no other decoder's speed is shown
if command -v script >/dev/null; then
    script -qfec "$B run --model $M --dataset tinystories --limit 2 -n 48 --threads 1 --warmup 1 --decoder pld --db live.db" /dev/null >live.txt 2>&1
    tr '\r' '\n' <live.txt | grep "(warm-up)" >warm.txt
    if [ -s warm.txt ] && ! grep -qE "\(warm-up\) +[0-9.]+ tok/s" warm.txt; then ok; else bad "warm-up shows a speed: $(head -3 warm.txt)"; fi
fi

# 10. compare warns when thread counts or CPUs differ
cp r.db r2.db
python3 -c "import sqlite3; c = sqlite3.connect('r2.db'); c.execute('UPDATE runs SET threads = 7'); c.commit()"
$B compare r.db r2.db >cmp.md 2>cmp.err
expect_grep compare_warn_stderr "warning: different thread counts \(1 vs 7\)" cmp.err
expect_grep compare_warn_md "WARNING: different thread counts" cmp.md

# 11. SHA-256 fingerprint: the whole file's, as sha256sum prints it; shown in reports; cached
want=$(sha256sum "$M" | cut -d' ' -f1)
expect_eq sha256_stored "$want" "$(q r.db "SELECT model_sha256 FROM runs WHERE id = 1")"
$B report --db r.db >rep.md 2>/dev/null
expect_grep sha256_shown "sha256 ${want:0:16}" rep.md
cp "$M" copy.bin
$B run --model copy.bin --tokenizer "$TOK" --dataset tinystories --limit 1 -n 2 --threads 1 --warmup 0 --db h.db >/dev/null 2>&1
expect_eq sha256_cached "$want" "$(q h.db "SELECT sha256 FROM file_sha256 WHERE path LIKE '%copy.bin'")"
# the cache is used while the file is unchanged, and a modified file is hashed again
python3 -c "import sqlite3; c = sqlite3.connect('h.db'); c.execute(\"UPDATE file_sha256 SET sha256 = printf('%064d', 0)\"); c.commit()"
$B run --model copy.bin --tokenizer "$TOK" --dataset tinystories --limit 1 -n 2 --threads 1 --warmup 0 --db h.db >/dev/null 2>&1
expect_eq sha256_cache_hit "$(printf '%064d' 0)" "$(q h.db "SELECT model_sha256 FROM runs WHERE id = 2")"
touch copy.bin
$B run --model copy.bin --tokenizer "$TOK" --dataset tinystories --limit 1 -n 2 --threads 1 --warmup 0 --db h.db >/dev/null 2>&1
expect_eq sha256_rehash "$want" "$(q h.db "SELECT model_sha256 FROM runs WHERE id = 3")"

# 12. clearer messages: a damaged decbench database, a schema version no decbench
# wrote, a plots folder that is a file, numbers too large for their field, byte order marks,
# directories given as files
cp r.db damaged.db
python3 -c "f = open('damaged.db', 'r+b'); f.seek(100); f.write(bytes(400)); f.close()"
expect_rc damaged_db 1 "damaged\.db is a decbench database, but damaged \(.*\): restore it from a copy" $B report --db damaged.db
cp r.db version.db
python3 -c "import sqlite3; c = sqlite3.connect('version.db'); c.execute('PRAGMA user_version = -5'); c.commit()"
expect_rc bad_version 1 "version\.db has schema version -5, which no decbench writes \(1\.\.[0-9]+\)" $B report --db version.db
: >afile
expect_rc plots_folder 1 "cannot create the plots folder afile/sub: afile is not a folder" $B plot --db r.db --out afile/sub
big=99999999999999999999
expect_rc big_param 1 "ngram=$big is out of range 1\.\.16" $B run --model "$M" --dataset tinystories --decoder pld:ngram=$big --db x.db
expect_rc big_id 1 "id 0: $big is outside the vocabulary" $B detokenize --model "$M" --ids "$big 1"
expect_rc big_limit 2 "--limit: $big is out of range" $B run --model "$M" --dataset tinystories --limit $big
for c in "run --model $M --dataset tinystories --decoder pld:ngram=$big --db x.db" "detokenize --model $M --ids $big" \
    "run --model $M --dataset tinystories --limit $big" "report --db r.db --run $big" "cost --model $M --rows $big"; do
    if $B $c 2>&1 | grep -q 9223372036854775807; then bad "a saturated number echoed by: $c"; else ok; fi
done
printf '\xef\xbb\xbf{"prompt": "Once upon a time"}\n' >bom.jsonl
$B run --model "$M" --dataset jsonl:bom.jsonl -n 2 --threads 1 --warmup 0 --db bom.db >/dev/null 2>&1; expect_eq bom_start_ok 0 $?
printf '{"prompt": "a"}\n\xef\xbb\xbf{"prompt": "b"}\n' >bom2.jsonl
expect_rc bom_inside 1 "bom2\.jsonl:2: a UTF-8 byte order mark" $B run --model "$M" --dataset jsonl:bom2.jsonl --db x.db
expect_rc dir_dataset 1 "adir: is a directory, expected a dataset file" $B run --model "$M" --dataset jsonl:adir --db x.db
expect_rc dir_model 1 "adir: is a directory, expected a model file" $B generate --model adir

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
