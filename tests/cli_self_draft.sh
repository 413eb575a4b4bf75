#!/usr/bin/env bash
# cli_self_draft.sh: quantized self-speculation from the command line. `--draft self:TYPE` is no
# file but the target requantized in memory (model/convert/requant.h): spec, tree and Ouroboros run
# with it and stay exact; the run records the draft as 'self:TYPE' with a fingerprint derived
# from the target's, so --resume refuses another TYPE; an unknown TYPE is refused before a
# database is created; `generate` says what the draft holds.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_self}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
run() { # DB DRAFT [extra options]
    local db=$1 draft=$2; shift 2
    $B run --model "$M" --draft "$draft" --dataset tinystories --limit 2 --max-new 48 \
        --threads 1 --warmup 0 --decoder spec:gamma=3 --decoder tree:shape=2-1 \
        --decoder ouroboros:W=4,beta=4,K=2 --db "$db" "$@"
}

# 1. a run with a self:q8_0 draft: exact, recorded, and the note says what was built
run a.db self:q8_0 >/dev/null 2>a.err
expect_eq run_exit 0 $?
expect_eq exact "8|8" "$(q a.db "SELECT COUNT(*), SUM(matched) FROM samples")"
expect_eq draft_path "self:q8_0" "$(q a.db "SELECT draft_path FROM runs")"
# --kernels auto (the default) picks the int8b mode for a quantized draft of a float target
expect_eq auto_kernels "exact-int8b" "$(q a.db "SELECT kernels FROM runs")"
expect_eq draft_recorded yes "$(q a.db "SELECT CASE WHEN length(draft_hash) = 16 AND draft_bytes > 0 AND draft_hash != model_hash THEN 'yes' END FROM runs")"
expect_grep note "draft self:q8_0: the target's 36 weight matrices requantized in memory, 0.33 MB; 5 stored as f16 \(rows of 172 values, not whole blocks of q8_0, e.g. blk.0.ffn_down.weight\)" a.err
expect_eq drafts_accepted yes "$(q a.db "SELECT CASE WHEN SUM(accepted) > 0.9 * SUM(drafted) THEN 'yes' END FROM samples WHERE decoder = 'spec'")"

# 2. --resume (of the run marked interrupted): the same TYPE continues (nothing left to
# measure), another TYPE is refused
python3 - a.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE runs SET status = 'incomplete'")
c.commit()
PY
run a.db self:q8_0 --resume 1 >/dev/null 2>resume.err
expect_eq resume_same 0 $?
expect_grep resume_same_msg "0 sample\(s\) measured, 8 already stored" resume.err
run a.db self:q4_0 --resume 1 >/dev/null 2>resume2.err
expect_eq resume_other_exit 1 $?
expect_grep resume_other "--resume 1: the run used draft model '[0-9a-f]{16}', this command '[0-9a-f]{16}'" resume2.err

# 3. an unknown type: one line, exit 1, no database
run bad.db self:q5_1 >/dev/null 2>bad.err
expect_eq bad_exit 1 $?
expect_grep bad_msg "^decbench run: --draft self:q5_1: unknown weight type 'q5_1'; self:TYPE takes a type \(f32, f16, bf16, q8_0, q4_0, [a-z0-9_, ]*\) or a llama-quantize mix \([A-Z0-9_, ]*Q4_K_M[A-Z0-9_, ]*\)$" bad.err
expect_eq bad_no_db "" "$(ls bad.db 2>/dev/null)"

# 4. generate: the note, and an exact output
$B generate --model "$M" --draft self:q4_0 --decoder tree --prompt "Once upon a time" -n 40 \
    --threads 1 >gen.out 2>gen.err
expect_eq generate_exit 0 $?
expect_grep generate_note "^decbench generate: draft self:q4_0: the target's 36 weight matrices" gen.err
$B generate --model "$M" --prompt "Once upon a time" -n 40 --threads 1 >greedy.out 2>/dev/null
expect_eq generate_exact "$(cat greedy.out)" "$(cat gen.out)"

echo "cli_self_draft: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
