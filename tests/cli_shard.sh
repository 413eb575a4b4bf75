#!/usr/bin/env bash
# cli_shard.sh: run/sweep --shard I/N and `decbench merge`. A small sweep cut 4
# ways and run by GNU parallel (cluster/parallel.sh) merges into exactly the unsharded sweep's
# deterministic figures; a run with a stateful decoder (Ouroboros warm=1) too; merging twice
# changes nothing; a partial merge is incomplete; conflicting samples and shards of another
# commit are refused and leave the output as it was.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_shard}
SRC=${DECBENCH_SOURCE:-$(dirname "$0")/..}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
command -v parallel >/dev/null || { echo "GNU parallel is missing (deps.sh installs it)"; exit 1; }

# The deterministic figures of every sample, with the run's position in its sweep (or 0) and
# the sweep's grid: what must not change whether one machine or four measured them.
det() {
    python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
pos = {}
for sw, in c.execute("SELECT DISTINCT COALESCE(sweep_id, 0) FROM runs"):
    for k, (rid,) in enumerate(c.execute("SELECT id FROM runs WHERE COALESCE(sweep_id, 0) = ? ORDER BY id", (sw,))):
        pos[rid] = k
rows = []
for r in c.execute("""SELECT s.run_id, COALESCE(w.spec, ''), s.dataset, s.sample_index, s.spec, s.repeat,
        s.output_hash, s.new_tokens, s.target_steps, s.target_rows, s.draft_steps, s.draft_rows,
        s.drafted, s.accepted, s.verify_steps, s.matched, s.turn,
        (SELECT group_concat(kind || k || '=' || count) FROM (SELECT * FROM histograms h
         WHERE h.sample_id = s.id ORDER BY kind, k))
        FROM samples s JOIN runs r ON r.id = s.run_id LEFT JOIN sweeps w ON w.id = r.sweep_id"""):
    rows.append((pos[r[0]],) + r[1:])
for r in sorted(rows, key=str): print("|".join(map(str, r)))
PY
}

# 1. a sweep, unsharded and in 4 shards through cluster/parallel.sh (GNU parallel)
SW=(sweep --model "$M" --dataset tinystories --limit 4 -n 24 --repeats 2 --warmup 0 --threads 1
    --grid 'lookahead:W=2,4;N=3;G=W' --grid 'pld:ngram=1,2')
$B "${SW[@]}" --db full.db >/dev/null 2>&1 || bad "unsharded sweep"
JOBS=2 bash "$SRC/cluster/parallel.sh" 4 merged.db "$B" "${SW[@]}" >par.out 2>&1 || { bad "parallel.sh"; cat par.out; }
for i in 1 2 3 4; do [ -s merged.shards/shard-$i.db ] && ok || bad "shard $i database missing"; done
# each shard holds a quarter of the point samples (4 points x 2 repeats x 4 prompts = 32)
n1=$(q merged.shards/shard-1.db "SELECT COUNT(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.baseline_run_id IS NOT NULL")
expect_eq shard_share 8 "$n1"
det full.db >full.det
det merged.db >merged.det
expect_eq sweep_rows 40 "$(wc -l <full.det)"
if cmp -s full.det merged.det; then ok; else bad "merged sweep differs from the unsharded one:"; diff full.det merged.det | head; fi
expect_eq merged_status "complete,complete,complete,complete,complete" "$(q merged.db "SELECT group_concat(status) FROM runs")"
expect_eq merged_shard "1,2,3,4/4" "$(q merged.db "SELECT DISTINCT shard FROM runs")"
expect_eq merged_baselines "4" "$(q merged.db "SELECT COUNT(*) FROM runs WHERE baseline_run_id = (SELECT MIN(id) FROM runs)")"
$B report --db merged.db --sweep 1 >rep.md 2>rep.err; expect_eq report_merged 0 $?

# 2. merging twice changes nothing
dump() { python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print('\n'.join(c.iterdump()))" "$1" | sha256sum; }
before=$(dump merged.db)
$B merge merged.db merged.shards/shard-3.db merged.shards/shard-1.db >/dev/null 2>again.err; expect_eq remerge_rc 0 $?
expect_eq remerge_same "$before" "$(dump merged.db)"
expect_grep remerge_counts "0 run\(s\) added, 0 shard\(s\) joined, 0 sample\(s\) added" again.err

# 3. a partial merge is incomplete (reports do not take it for the latest result)
$B merge part.db merged.shards/shard-1.db merged.shards/shard-2.db >/dev/null 2>&1
expect_eq partial_status "incomplete" "$(q part.db "SELECT DISTINCT status FROM runs")"
expect_eq partial_shard "1,2/4" "$(q part.db "SELECT DISTINCT shard FROM runs")"

# 4. refused: a sample whose deterministic figures differ; a shard of another commit
cp merged.shards/shard-3.db bad3.db
python3 -c "import sqlite3; c = sqlite3.connect('bad3.db'); c.execute('UPDATE samples SET target_steps = target_steps + 1 WHERE id = (SELECT MIN(id) FROM samples)'); c.commit()"
cp merged.db m2.db; before=$(dump m2.db)
$B merge m2.db bad3.db >/dev/null 2>bad.err; expect_eq conflict_rc 1 $?
expect_grep conflict_msg "differs from the same sample already in the output" bad.err
expect_eq conflict_unchanged "$before" "$(dump m2.db)"
cp merged.shards/shard-4.db other.db
python3 -c "import sqlite3; c = sqlite3.connect('other.db'); c.execute(\"UPDATE environments SET git_commit = '0123456789abcdef0123456789abcdef01234567'\"); c.commit()"
cp part.db p2.db; before=$(dump p2.db)
$B merge p2.db other.db >/dev/null 2>other.err; expect_eq commit_rc 1 $?
expect_grep commit_msg "has commit 0123456789abcdef.*shards of one work must come from one build" other.err
expect_eq commit_unchanged "$before" "$(dump p2.db)"
expect_grep merge_usage "expected OUT.db and at least one IN.db" <($B merge only.db 2>&1)
$B merge merged.db merged.db >/dev/null 2>self.err; expect_eq self_rc 1 $?

# 5. run --shard with a decoder that keeps state across prompts (Ouroboros warm=1: its units are
# whole repeats) and one that does not (spec): 3 shards give the unsharded figures
RN=(run --model "$M" --draft "$D" --dataset tinystories --limit 3 -n 20 --warmup 0 --threads 1
    --decoder ouroboros:gamma=3,W=4,beta=4,K=2 --decoder spec:gamma=3)
$B "${RN[@]}" --db run_full.db >/dev/null 2>&1 || bad "unsharded run"
parallel --will-cite -q -j 2 "$B" "${RN[@]}" --shard {}/3 --db run{}.db ::: 1 2 3 >/dev/null 2>&1 || bad "run shards"
$B merge run_merged.db run1.db run2.db run3.db >/dev/null 2>&1 || bad "merge runs"
det run_full.db >rf.det
det run_merged.db >rm.det
if cmp -s rf.det rm.det; then ok; else bad "merged run differs:"; diff rf.det rm.det | head; fi
# the stateful decoder's 3 prompts of a repeat were measured in one shard
expect_eq stateful_whole 1 "$(for i in 1 2 3; do q run$i.db "SELECT COUNT(*) FROM samples WHERE decoder = 'ouroboros'"; done | grep -c '^3$')"
expect_eq run_status complete "$(q run_merged.db "SELECT status FROM runs")"
$B compare run_full.db run_merged.db --tolerance 0.99 >cmp.md 2>cmp.err
expect_grep compare_equal "deterministic figures: all 9 common samples equal" cmp.md
# --resume of a shard requires the same shard
expect_grep resume_shard "the run measured shard '1/3', this command '2/3'" \
    <($B "${RN[@]}" --shard 2/3 --db run1.db --resume 1 2>&1)
expect_grep bad_shard "--shard I: 5 is out of range 1..3" <($B "${RN[@]}" --shard 5/3 --db x.db 2>&1)

# 6. merge carries every table a run owns: two traced shards keep their pass traces (the
# projection keeps its basis), and the test build's schema, which has two tables more (one
# hanging off a sample, one off a run; tests/data/test_counter.sql), gets their rows merged
# with their samples and runs, though merge does not know those tables by name
BT=${DECBENCH_TESTCOUNTER:?}
TR=(run --model "$M" --dataset tinystories --limit 2 -n 12 --warmup 0 --threads 1 --trace
    --decoder pld)
for i in 1 2; do
    $BT "${TR[@]}" --shard $i/2 --db tr$i.db >/dev/null 2>&1 || bad "traced shard $i"
    python3 - tr$i.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
INSERT INTO test_sample_notes
    SELECT id, dataset || '/' || sample_index || '/' || spec || '/' || repeat FROM samples;
INSERT INTO test_run_notes SELECT id, 'shard ' || shard FROM runs;""")
c.commit()
PY
done
$BT merge trm.db tr1.db tr2.db >/dev/null 2>trm.err; expect_eq traced_merge_rc 0 $?
expect_eq passes_merged "$(($(q tr1.db "SELECT COUNT(*) FROM passes") + $(q tr2.db "SELECT COUNT(*) FROM passes")))" \
    "$(q trm.db "SELECT COUNT(*) FROM passes")"
printf 'rows,seconds\n1,0.001\n8,0.002\n' >c.csv
$BT report --db trm.db --layout projected --project-cost c.csv --format csv >proj.csv 2>&1
expect_grep projected_basis '"passes' proj.csv
expect_eq projected_basis_all 0 "$(grep -c 'steps\|mean rows' proj.csv)"
# every sample's note arrived with it (the note spells the sample's key), each run's note too
expect_eq sample_notes "$(($(q tr1.db "SELECT COUNT(*) FROM samples") + $(q tr2.db "SELECT COUNT(*) FROM samples")))" \
    "$(q trm.db "SELECT COUNT(*) FROM test_sample_notes n JOIN samples s ON s.id = n.sample_id
        WHERE n.note = s.dataset || '/' || s.sample_index || '/' || s.spec || '/' || s.repeat")"
expect_eq run_notes "shard 1/2,shard 2/2" "$(q trm.db "SELECT group_concat(note) FROM (SELECT note FROM test_run_notes ORDER BY note)")"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
