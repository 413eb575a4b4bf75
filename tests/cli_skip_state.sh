#!/usr/bin/env bash
# cli_skip_state.sh: the layer set of `skip` carried across runs with the generic state flags.
# adapt=search searches once, on the first prompt, and `run --state-save` writes the set it
# found; `run --state-load` starts from it, stays exact and searches no more (no candidate
# scored); adapt=swift's optimiser goes on from a loaded file; a file of another kind is refused
# with its name and nothing is stored.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_skip}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/llama2xs.bin
run() { # DB SPEC [extra options]: skip on 3 TinyStories prompts
    local db=$1 spec=$2; shift 2
    $B run --model "$M" --dataset tinystories --limit 3 --max-new 64 --threads 1 --warmup 0 \
        --decoder "$spec" --db "$db" "$@"
}
counter() { q "$1" "SELECT SUM(value) FROM counters WHERE name = '$2'"; }

run search.db skip:adapt=search,window=16 --state-save set.bin >/dev/null 2>search.err
expect_eq search_exit 0 $?
expect_eq file_magic "DBSKIPL1" "$(head -c 8 set.bin 2>/dev/null)"
expect_grep save_reported "wrote the layer set of skip:.*adapt=search.* \([0-9]+ attention and [0-9]+ MLP sublayers skipped\) to set.bin" search.err
iters=$(counter search.db opt_iters)
expect_eq searched yes "$([ "${iters:-0}" -ge 10 ] && echo yes || echo "no ($iters)")"

run loaded.db skip:adapt=search,window=16 --state-load set.bin >/dev/null 2>loaded.err
expect_eq loaded_exit 0 $?
expect_eq loaded_exact "6|6" "$(q loaded.db "SELECT COUNT(*), SUM(matched) FROM samples")"
expect_eq loaded_no_search 0 "$(counter loaded.db opt_iters)"

run swift.db skip:adapt=swift,window=8,max_score=1 --state-save swift.bin >/dev/null 2>swift.err
expect_eq swift_exit 0 $?
run swift2.db skip:adapt=swift,window=8,max_score=1 --state-load swift.bin >/dev/null 2>swift2.err
expect_eq swift_loaded_exit 0 $?
expect_eq swift_goes_on yes "$([ "$(counter swift2.db opt_iters)" -gt 0 ] && echo yes || echo no)"

printf 'DBSUFFX1xxxxxxxxxxxxxxxxxxxxxxxx' >other.bin
run other.db skip --state-load other.bin >/dev/null 2>other.err
expect_eq other_exit 1 $?
expect_grep other_msg "other.bin: byte 0: not a decbench layer set file" other.err
expect_eq other_no_db "" "$(ls other.db 2>/dev/null)"

echo "cli_skip_state: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
