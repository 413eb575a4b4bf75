#!/usr/bin/env bash
# cli_recycle_state.sh: Token Recycling's adjacency matrix carried across runs with the generic
# state flags. `run --state-save` writes the matrix after the last sample; `run --state-load`
# starts from it, stays exact, and drafts from the first step of every prompt (fewer empty
# steps, fewer target steps); a matrix of another k is refused before a database is created, and
# so is warm=0 (which empties the matrix before each prompt).
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_recycle}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
run() { # DB SPEC [extra options]: Token Recycling on 3 TinyStories prompts
    local db=$1 spec=$2; shift 2
    $B run --model "$M" --dataset tinystories --limit 3 --max-new 96 --threads 1 --warmup 0 \
        --decoder "$spec" --db "$db" "$@"
}
steps() { q "$1" "SELECT SUM(target_steps) FROM samples WHERE decoder = 'recycle'"; }
empty() { q "$1" "SELECT SUM(c.value) FROM counters c JOIN samples s ON s.id = c.sample_id WHERE c.name = 'empty_steps'"; }

run cold.db recycle --state-save m.bin >/dev/null 2>cold.err
expect_eq cold_exit 0 $?
expect_eq file_magic "DBRECYC1" "$(head -c 8 m.bin 2>/dev/null)"
expect_grep save_reported "wrote the matrix of recycle:k=8,tree=paper,shape=4-2-2-1,nodes=80,warm=1 \([0-9]+ rows of 8 candidates\) to m.bin" cold.err

run warm.db recycle --state-load m.bin >/dev/null 2>warm.err
expect_eq warm_exit 0 $?
expect_eq warm_exact "6|6" "$(q warm.db "SELECT COUNT(*), SUM(matched) FROM samples")"
cold=$(steps cold.db) warm=$(steps warm.db)
expect_eq warm_fewer_steps yes "$([ -n "$cold" ] && [ -n "$warm" ] && [ "$warm" -lt "$cold" ] && echo yes || echo "no ($warm vs $cold)")"
ce=$(empty cold.db) we=$(empty warm.db)
expect_eq warm_fewer_empty yes "$([ -n "$ce" ] && [ -n "$we" ] && [ "$we" -lt "$ce" ] && echo yes || echo "no ($we vs $ce)")"

run k4.db recycle:k=4 --state-load m.bin >/dev/null 2>k4.err
expect_eq k4_exit 1 $?
expect_grep k4_msg "m.bin: byte 16: rows of 8 candidates, the decoder keeps k=4" k4.err
expect_eq k4_no_db "" "$(ls k4.db 2>/dev/null)"

run bad.db recycle:warm=0 --state-save x.bin >/dev/null 2>bad.err
expect_eq warm0_exit 1 $?
expect_grep warm0_msg "empties its matrix before every prompt \(warm=0\); use warm=1" bad.err
expect_eq warm0_no_db "" "$(ls bad.db x.bin 2>/dev/null)"

echo "cli_recycle_state: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
