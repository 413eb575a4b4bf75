#!/usr/bin/env bash
# cli_file_kinds.sh: every file a user names on the command line is checked for what it is
# before a byte is read or written: a directory "is a directory", a FIFO
# (open() would wait for a writer forever) and a device are refused at once, with one line
# naming the option, the path and the kind, exit 1, and no database left behind. Each command
# runs under `timeout 20`: a reader that blocks fails the test (exit 124) instead of hanging it.
# Covered: --pool-load/--state-load (a directory once made ASan report a 9 EB allocation),
# --pool-save/--state-save, --db of run/report/compare/plot/cost (a FIFO hung `report`;
# `--db /dev/null` made SQLite create /dev/null-journal), report --project-cost, report -o,
# cost --csv, plot --plots-dir scripts, tokenize --model.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_file_kinds}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
mkdir adir && mkfifo fifo

expect_fail() { # NAME PATTERN CMD...: exit 1 (2 for compare: its error status) within 20 s,
    local name=$1 pat=$2; shift 2 # stderr matches, no new.db made
    timeout 20 "$@" >/dev/null 2>err.txt
    local rc=$?
    if { [ $rc -eq 1 ] || { [ $rc -eq 2 ] && [ "$2" = compare ]; }; } && grep -qE -- "$pat" err.txt && [ ! -e new.db ]; then passes=$((passes + 1))
    else echo "FAIL $name: rc=$rc (124: it blocked) new.db=$([ -e new.db ] && echo made || echo none) stderr=$(head -3 err.txt)"; fails=$((fails + 1)); fi
    rm -f new.db
}
OURO=ouroboros:gamma=2,W=4,beta=4
# ouroboros on one prompt into new.db, plus the options given
run=($B run --model "$M" --draft "$D" --dataset tinystories --limit 1 --max-new 8 --threads 1
    --warmup 0 --decoder "$OURO" --db new.db)

# state files: load and save
expect_fail pool_load_dir "--pool-load: adir: is a directory, expected a pool file" "${run[@]}" --pool-load adir
expect_fail state_load_dir "--state-load: adir: is a directory, expected a pool file" "${run[@]}" --state-load adir
expect_fail pool_load_fifo "--pool-load: fifo: is not a regular file \(a FIFO\), expected a pool file" "${run[@]}" --pool-load fifo
expect_fail pool_load_dev "--pool-load: /dev/zero: is not a regular file \(a character device\)" "${run[@]}" --pool-load /dev/zero
expect_fail pool_save_dir "--pool-save: adir: is a directory, expected a pool file" "${run[@]}" --pool-save adir
expect_fail state_save_fifo "--state-save: fifo: is not a regular file \(a FIFO\)" "${run[@]}" --state-save fifo

# databases
expect_fail run_db_fifo "fifo: is not a regular file \(a FIFO\), expected a database file" "${run[@]}" --db fifo
expect_fail run_db_dir "adir: is a directory, expected a database file" "${run[@]}" --db adir
journal_before=$([ -e /dev/null-journal ] && echo yes || echo no)
expect_fail run_db_devnull "/dev/null: is not a regular file \(a character device\), expected a database" "${run[@]}" --db /dev/null
expect_eq no_devnull_journal "$journal_before" "$([ -e /dev/null-journal ] && echo yes || echo no)"
expect_fail report_db_fifo "fifo: is not a regular file \(a FIFO\), expected a database file" $B report --db fifo
expect_fail report_db_fifo_run "fifo: is not a regular file \(a FIFO\)" $B report --db fifo:1
expect_fail report_db_dir "adir: is a directory, expected a database file" $B report --db adir
expect_fail compare_db_fifo "fifo: is not a regular file \(a FIFO\)" $B compare fifo fifo
expect_fail plot_db_fifo "fifo: is not a regular file \(a FIFO\)" $B plot --db fifo --out plots

# a real database for the readers of other files
$B run --model "$M" --dataset tinystories --limit 1 --max-new 8 --threads 1 --warmup 0 \
    --decoder pld --db r.db >/dev/null 2>run.err
expect_eq setup_run 0 $?
expect_fail project_cost_fifo "--project-cost fifo: is not a regular file \(a FIFO\), expected a cost file" \
    $B report --db r.db --layout projected --project-cost fifo
expect_fail project_cost_dir "--project-cost adir: is a directory, expected a cost file" \
    $B report --db r.db --layout projected --project-cost adir
expect_fail report_out_dir "adir: is a directory, expected a report file" $B report --db r.db --format md -o adir
expect_fail report_out_fifo "fifo: is not a regular file \(a FIFO\), expected a report file" $B report --db r.db --format md -o fifo
expect_fail cost_csv_dir "adir: is a directory, expected a CSV file" \
    $B cost --model "$M" --rows 1 --context 4 --seconds 1 --no-bandwidth --csv adir
# gnuplot opens the scripts itself: a FIFO among them would block it forever
mkdir gp && cp "${DECBENCH_SOURCE:-$(dirname "$0")/..}"/plots/*.gp gp/ && rm gp/speedup.gp && mkfifo gp/speedup.gp
expect_fail plots_dir_fifo "gp/speedup.gp: is not a regular file \(a FIFO\), expected a gnuplot script" \
    $B plot --db r.db --kind speedup --out plots --plots-dir gp
expect_fail tokenize_model_fifo "fifo: is not a regular file \(a FIFO\), expected a model file" \
    $B tokenize --model fifo --text hi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
