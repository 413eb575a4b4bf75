#!/usr/bin/env bash
# cli_ouroboros_pool.sh: Ouroboros' warm start across runs from the command line. `run
# --pool-save` writes the phrase pool after the last sample; `run --pool-load` starts from it,
# stays exact and needs fewer target steps on the prompts the pool came from; every bad use is
# refused before a database is created. --pool-* are the Ouroboros-only aliases of the generic
# --state-save/--state-load (the decoder interface's state hooks), checked the same way.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_pool}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
expect_fail() { # NAME PATTERN DB CMD...: exit 1, stderr matches, no database left behind
    local name=$1 pat=$2 db=$3; shift 3
    "$@" >/dev/null 2>err.txt
    local rc=$?
    if [ $rc -eq 1 ] && grep -qE -- "$pat" err.txt && [ ! -e "$db" ]; then passes=$((passes + 1))
    else echo "FAIL $name: rc=$rc db=$([ -e "$db" ] && echo left || echo none) stderr=$(cat err.txt)"; fails=$((fails + 1)); fi
}
OURO=ouroboros:gamma=4,W=8,beta=6,K=3
run() { # DB [extra options]: Ouroboros on 4 TinyStories prompts
    local db=$1; shift
    $B run --model "$M" --draft "$D" --dataset tinystories --limit 4 --max-new 96 --threads 1 \
        --warmup 0 --decoder "$OURO" --db "$db" "$@"
}
first_steps() { q "$1" "SELECT target_steps FROM samples WHERE decoder = 'ouroboros' ORDER BY sample_index LIMIT 1"; }

# 1. a cold run saves its pool
run cold.db --pool-save pool.bin >/dev/null 2>cold.err
expect_eq cold_exit 0 $?
expect_eq pool_written "DBOUROP1" "$(head -c 8 pool.bin 2>/dev/null)"
expect_eq no_tmp_left "" "$(ls pool.bin.tmp 2>/dev/null)"
expect_eq save_reported 1 "$(grep -c "wrote the pool of ouroboros:.* phrases) to pool.bin" cold.err)"
cp pool.bin cold_pool.bin

# 2. a run from the saved pool: exact, fewer steps on a prompt the pool has seen, recorded
run warm.db --pool-load pool.bin >/dev/null 2>warm.err
expect_eq warm_exit 0 $?
expect_eq warm_exact "8|8" "$(q warm.db "SELECT COUNT(*), SUM(matched) FROM samples")"
cold=$(first_steps cold.db) warm=$(first_steps warm.db)
expect_eq warm_fewer_steps yes "$([ -n "$cold" ] && [ -n "$warm" ] && [ "$warm" -lt "$cold" ] && echo yes || echo "no ($warm vs $cold)")"
expect_eq command_recorded 1 "$(q warm.db "SELECT command LIKE '%--pool-load pool.bin%' FROM runs")"
# loading and saving the same file accumulates; the file stays a valid pool
run acc.db --pool-load pool.bin --pool-save pool.bin >/dev/null 2>&1
expect_eq accumulate_exit 0 $?
run acc2.db --pool-load pool.bin >/dev/null 2>&1
expect_eq reload_exit 0 $?

# 3. refused before anything is stored
expect_fail load_missing "--pool-load: nope.bin: cannot open" e1.db run e1.db --pool-load nope.bin
head -c 100 pool.bin > short.bin
expect_fail load_truncated "--pool-load: short.bin" e2.db run e2.db --pool-load short.bin
expect_fail no_ouroboros "--pool-save: the run has no ouroboros decoder" e3.db \
    $B run --model "$M" --dataset tinystories --limit 1 --max-new 8 --decoder pld --pool-save x.bin --db e3.db
expect_fail two_ouroboros "--pool-save: the run has 2 ouroboros decoders" e4.db \
    run e4.db --decoder ouroboros:gamma=2 --pool-save x.bin
expect_fail cold_each_prompt "warm=0" e5.db \
    $B run --model "$M" --draft "$D" --dataset tinystories --limit 1 --max-new 8 \
    --decoder ouroboros:warm=0 --pool-load pool.bin --db e5.db
expect_fail save_dir_missing "--pool-save: no/such/dir/p.bin.tmp: cannot create" e6.db \
    run e6.db --pool-save no/such/dir/p.bin
# a pool of another phrase length does not fit
expect_fail load_other_beta "--pool-load: pool.bin" e7.db \
    $B run --model "$M" --draft "$D" --dataset tinystories --limit 1 --max-new 8 \
    --decoder ouroboros:beta=4 --pool-load pool.bin --db e7.db

# 4. the generic names: --pool-* are aliases of --state-* restricted to ouroboros (the decoder
# interface's state hooks); the same run writes the same file, loading it gives the same steps
run gen.db --state-save state.bin >/dev/null 2>gen.err
expect_eq state_save_exit 0 $?
expect_eq state_save_same_file same "$(cmp -s cold_pool.bin state.bin && echo same || echo differs)"
expect_eq state_save_reported 1 "$(grep -c "wrote the pool of ouroboros:.* phrases) to state.bin" gen.err)"
run gen_warm.db --state-load state.bin >/dev/null 2>&1
expect_eq state_load_exit 0 $?
expect_eq state_load_same_steps "$(first_steps warm.db)" "$(first_steps gen_warm.db)"
expect_fail state_no_decoder "--state-save: the run has no decoder with state" e8.db \
    $B run --model "$M" --dataset tinystories --limit 1 --max-new 8 --decoder pld --state-save x.bin --db e8.db
expect_fail state_load_missing "--state-load: nope.bin: cannot open" e9.db run e9.db --state-load nope.bin
run e10.db --state-load pool.bin --pool-save x.bin >/dev/null 2>e10.err
expect_eq mixed_names_usage "2 none" "$? $([ -e e10.db ] && echo left || echo none)"
expect_grep mixed_names_message "not both" e10.err

echo "cli_ouroboros_pool: $passes passed, $fails failed"
[ $fails -eq 0 ]
