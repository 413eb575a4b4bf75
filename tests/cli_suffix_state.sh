#!/usr/bin/env bash
# cli_suffix_state.sh: SuffixDecoding's global tree carried across runs with the generic state
# flags. `run --state-save` writes the outputs the tree holds after the last sample; `run
# --state-load` starts from them, stays exact, and takes fewer target steps on the prompts the
# tree has seen; warm=0 (which empties the tree before each prompt) is refused before a
# database is created.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_suffix}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
run() { # DB SPEC [extra options]: suffix decoding on 3 TinyStories prompts
    local db=$1 spec=$2; shift 2
    $B run --model "$M" --dataset tinystories --limit 3 --max-new 96 --threads 1 --warmup 0 \
        --decoder "$spec" --db "$db" "$@"
}
steps() { q "$1" "SELECT SUM(target_steps) FROM samples WHERE decoder = 'suffix'"; }

run cold.db suffix --state-save tree.bin >/dev/null 2>cold.err
expect_eq cold_exit 0 $?
expect_eq file_magic "DBSUFFX1" "$(head -c 8 tree.bin 2>/dev/null)"
expect_grep save_reported "wrote the suffix tree of suffix:depth=24,.* \(3 outputs, [0-9]+ tokens\) to tree.bin" cold.err

run warm.db suffix --state-load tree.bin >/dev/null 2>warm.err
expect_eq warm_exit 0 $?
expect_eq warm_exact "6|6" "$(q warm.db "SELECT COUNT(*), SUM(matched) FROM samples")"
cold=$(steps cold.db) warm=$(steps warm.db)
expect_eq warm_fewer_steps yes "$([ -n "$cold" ] && [ -n "$warm" ] && [ "$((2 * warm))" -lt "$cold" ] && echo yes || echo "no ($warm vs $cold)")"

run bad.db suffix:warm=0 --state-save x.bin >/dev/null 2>bad.err
expect_eq warm0_exit 1 $?
expect_grep warm0_msg "empties its global tree before every prompt \(warm=0\); use warm=1" bad.err
expect_eq warm0_no_db "" "$(ls bad.db x.bin 2>/dev/null)"

echo "cli_suffix_state: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
