#!/usr/bin/env bash
# cli_compare.sh: `decbench compare BASE HEAD` passes (exit 0) on two runs of the same
# benchmark and fails (exit 1, the field named) on an altered copy: a changed steps value, a
# changed output hash, a missing sample, a decoder slower in every repeat; a slower machine
# (greedy slower too) and a single repeat do not fail on speed; errors exit 2.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_compare}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
expect() { # NAME WANT_EXIT STDOUT_PATTERN CMD...
    local name=$1 want=$2 pat=$3; shift 3
    "$@" >"$name.out" 2>"$name.err"
    local rc=$?
    if [ $rc -eq "$want" ] && grep -qE -- "$pat" "$name.out" "$name.err"; then passes=$((passes + 1))
    else echo "FAIL $name: rc=$rc (want $want), /$pat/ in:"; cat "$name.out" "$name.err" | head -30; fails=$((fails + 1)); fi
}
# alter SRC DST SQL: a copy of SRC with one change (python3's sqlite3 backup: WAL-safe)
alter() {
    python3 - "$@" <<'PY'
import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)
assert dst.execute(sys.argv[3]).rowcount >= 1, sys.argv[3]
dst.commit()
PY
}

bench() {
    $B run --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 32 --threads 1 \
        --decoder 'lookahead:W=3,N=3,G=3' --decoder spec:gamma=2 --db "$1" >/dev/null 2>&1
}
bench a.db && bench b.db && bench b.db || { echo "setup failed"; exit 1; }

# Same benchmark twice: every deterministic figure equal. Speed on a shared test machine
# varies a lot between two runs of tiny prompts, so the speed tolerance is set wide here
# (the speed rule itself is tested below with a 3x slow-down).
expect identical 0 "all 6 common samples equal" $B compare a.db b.db --tolerance 0.9
expect identical_verdict 0 "decbench compare: pass" $B compare a.db b.db --tolerance 90%
expect file_run 0 "all 6 common samples equal" $B compare b.db:1 b.db:2 --tolerance 0.9
expect same_db_default 0 "PASS" $B compare a.db a.db

alter b.db steps.db "UPDATE samples SET target_steps = target_steps + 1 WHERE id = (SELECT MIN(id) FROM samples WHERE run_id = 2 AND decoder = 'lookahead')"
expect altered_steps 1 "target_steps" $B compare a.db steps.db --tolerance 0.9
expect altered_steps_verdict 1 "REGRESSION: 1 sample\(s\) with a deterministic difference" $B compare a.db steps.db --tolerance 0.9
alter b.db hash.db "UPDATE samples SET output_hash = '0123456789abcdef' WHERE id = (SELECT MAX(id) FROM samples WHERE run_id = 2)"
expect altered_hash 1 "output_hash|output hash" $B compare a.db hash.db --tolerance 0.9
alter b.db missing.db "DELETE FROM samples WHERE id = (SELECT MAX(id) FROM samples WHERE run_id = 2)"
expect missing_sample 1 "1 missing in HEAD" $B compare a.db missing.db --tolerance 0.9
# Speed is judged on the speed-up over greedy per repeat. A run on a loaded test machine can be
# as noisy as a run can be (the statistics themselves are tests/test_compare.c's), so the speed
# cases start from a copy of a real 5-repeat run whose times are replaced by fixed ones with a
# fixed small spread: greedy 1 ms and the decoders 2 ms per sample after the prompt pass, each
# sample times 1 + 0.03 x (id x 7 mod 5).
bench3() {
    $B run --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 32 --threads 1 \
        --repeats 5 --decoder 'lookahead:W=3,N=3,G=3' --decoder spec:gamma=2 --db "$1" >/dev/null 2>&1
}
bench3 r3.db || { echo "setup failed"; exit 1; }
alter r3.db quiet.db "UPDATE samples SET t_total = t_prefill + (CASE decoder WHEN 'greedy' THEN 0.001 ELSE 0.002 END) * (1 + 0.03 * ((id * 7) % 5))"
expect quiet_same 0 "decbench compare: pass" $B compare quiet.db quiet.db
alter quiet.db slow.db "UPDATE samples SET t_total = t_prefill + 3 * (t_total - t_prefill) WHERE decoder = 'spec'"
expect slower 1 "1 decoder spec\(s\) slower" $B compare quiet.db slow.db
expect slower_named 1 "\| spec +\|.*-66\.[0-9]%.*REGRESSION, p = " $B compare quiet.db slow.db
expect slower_within 0 "pass" $B compare quiet.db slow.db --tolerance 0.7
# A machine 50% slower for every decoder, greedy included: tok/s falls by a third, the
# speed-ups do not move: no regression, unless absolute tok/s is gated (--gate-tps).
alter quiet.db drift.db "UPDATE samples SET t_total = t_prefill + 1.5 * (t_total - t_prefill)"
expect slower_machine 0 "decbench compare: pass" $B compare quiet.db drift.db
expect slower_machine_tps 1 "REGRESSION \(tok/s\)" $B compare quiet.db drift.db --gate-tps
# The real run against itself: nothing moved.
expect real_same 0 "decbench compare: pass" $B compare r3.db r3.db
# One repeat gives no spread to judge by: said, not guessed.
alter b.db slow1.db "UPDATE samples SET t_total = t_prefill + 3 * (t_total - t_prefill) WHERE run_id = 2 AND decoder = 'spec'"
expect one_repeat 0 "not enough repeats to judge speed" $B compare b.db:2 slow1.db:2
expect bad_alpha 2 "--alpha: '0' is not a fraction" $B compare quiet.db slow.db --alpha 0

expect missing_file 2 "nope\.db" $B compare a.db nope.db
expect missing_run 2 "run 9" $B compare a.db b.db:9
expect bad_tolerance 2 "--tolerance: '2' is not a fraction" $B compare a.db b.db --tolerance 2
expect one_arg 2 "expected two arguments" $B compare a.db

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
