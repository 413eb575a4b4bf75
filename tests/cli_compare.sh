#!/usr/bin/env bash
# cli_compare.sh: `decbench compare BASE HEAD` passes (exit 0) on two runs of the same
# benchmark and fails (exit 1, the field named) on an altered copy: a changed steps value, a
# changed output hash, a missing sample, a slower decoder; errors exit 2.
set -u
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_compare}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
fails=0 passes=0
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
alter b.db slow.db "UPDATE samples SET t_total = t_prefill + 3 * (t_total - t_prefill) WHERE run_id = 2 AND decoder = 'spec'"
expect slower 1 "1 decoder spec\(s\) slower" $B compare b.db:2 slow.db:2 --tolerance 0.5
expect slower_within 0 "pass" $B compare b.db:2 slow.db:2 --tolerance 0.7

expect missing_file 2 "nope\.db" $B compare a.db nope.db
expect missing_run 2 "run 9" $B compare a.db b.db:9
expect bad_tolerance 2 "--tolerance: '2' is not a fraction" $B compare a.db b.db --tolerance 2
expect one_arg 2 "expected two arguments" $B compare a.db

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
