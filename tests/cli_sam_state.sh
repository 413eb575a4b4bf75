#!/usr/bin/env bash
# cli_sam_state.sh: SAM-Decoding's datastore through the generic state flags. A file of token
# sequences (the suffix tree's format: here the outputs `run --decoder suffix --state-save`
# wrote) loads with `run --state-load` as sam's static automaton: the run stays exact, drafts
# from it (its static_* counters) and takes fewer target steps than without it; one file feeds
# sam and suffix in one run; sam's --state-save writes the same sequences back, byte for byte;
# a datastore over the store=N bound is refused before a database is created.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_sam}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
run() { # DB [options]: 3 TinyStories prompts
    local db=$1; shift
    $B run --model "$M" --dataset tinystories --limit 3 --max-new 96 --threads 1 --warmup 0 \
        --db "$db" "$@"
}
steps() { q "$1" "SELECT SUM(target_steps) FROM samples WHERE decoder = 'sam'"; }
counter() { q "$1" "SELECT SUM(c.value) FROM counters c JOIN samples s ON s.id = c.sample_id WHERE s.decoder = 'sam' AND c.name = '$2'"; }

run tree.db --decoder suffix --state-save store.bin >/dev/null 2>tree.err
expect_eq tree_exit 0 $?

run cold.db --decoder sam >/dev/null 2>cold.err
expect_eq cold_exit 0 $?
expect_eq cold_no_static 0 "$(counter cold.db static_steps)"

run warm.db --decoder sam --decoder suffix --state-load store.bin --state-save back.bin >/dev/null 2>warm.err
expect_eq warm_two_with_state 1 $?
expect_grep warm_one_saver "the run has 2 decoders with state; give it one" warm.err

run warm.db --decoder sam --decoder suffix --state-load store.bin >/dev/null 2>warm.err
expect_eq warm_exit 0 $?
expect_eq warm_exact "9|9" "$(q warm.db "SELECT COUNT(*), SUM(matched) FROM samples")"
expect_eq warm_static_used yes "$([ "$(counter warm.db static_accepted)" -gt 50 ] 2>/dev/null && echo yes || echo "no: $(counter warm.db static_accepted)")"
expect_eq warm_store_size yes "$([ "$(q warm.db "SELECT MIN(c.value) FROM counters c JOIN samples s ON s.id = c.sample_id WHERE s.decoder = 'sam' AND c.name = 'store_tokens'")" -gt 100 ] 2>/dev/null && echo yes || echo no)"
cold=$(steps cold.db) warm=$(steps warm.db)
expect_eq warm_fewer_steps yes "$([ -n "$cold" ] && [ -n "$warm" ] && [ "$((2 * warm))" -lt "$cold" ] && echo yes || echo "no ($warm vs $cold)")"

run back.db --decoder sam --state-load store.bin --state-save back.bin >/dev/null 2>back.err
expect_eq back_exit 0 $?
expect_grep back_reported "wrote the datastore of sam:k=16,.* \(3 sequences, [0-9]+ tokens\) to back.bin" back.err
expect_eq back_same_bytes "" "$(cmp store.bin back.bin 2>&1)"

run big.db --decoder sam:store=50 --state-load store.bin >/dev/null 2>big.err
expect_eq big_exit 1 $?
expect_grep big_msg "store.bin: a datastore of [0-9]+ tokens \(end tokens included\), more than store=50" big.err
expect_eq big_no_db "" "$(ls big.db 2>/dev/null)"

echo "cli_sam_state: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
