#!/usr/bin/env bash
# cli_hostile_db.sh: databases crafted to hurt the commands that read them (merge, report,
# plot, compare), as one table of cases: how the database is crafted, the command, the exit
# code expected and what must be true afterwards. Every case is classified by what happened:
#   clear error   non-zero exit with the case's message on stderr
#   ok            exit 0 and the case's check holds
#   crash         killed by a signal, or a sanitizer report
#   hang          still running after $LIMIT seconds (timeout)
#   silent wrong  exit 0 where an error was due, output or OUT that is wrong, or a failure
#                 other than the one due (compare's regression verdict on a damaged file)
#   data lost     exit 0 but something the inputs held is missing
# and the counts of each outcome are printed at the end; a case passes when its outcome and
# message are the expected ones. Run it against any build (DECBENCH=...) to count how a
# version fares.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_hostile_db}
LIMIT=${DECBENCH_HOSTILE_LIMIT:-30}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin

# Two traced shards of one run (greedy, suffix and pld: histograms, the suffix decoder's own
# counters, the step and pass traces; suffix keeps its repeat in shard 1, pld's prompts split),
# and a cost curve for the projected layout.
RUN=(run --model "$M" --dataset tinystories --limit 2 -n 16 --warmup 0 --threads 1 --trace
    --decoder suffix --decoder pld)
for i in 1 2; do
    $B "${RUN[@]}" --shard $i/2 --db s$i.db >s$i.log 2>&1 || { echo "setup: shard $i failed"; cat s$i.log; exit 1; }
done
printf 'rows,seconds\n1,0.001\n4,0.002\n16,0.005\n' >cost.csv

# copy SRC DST: a whole copy (SQLite's backup: the WAL's content included)
copy() {
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)
dst.close()
PY
}
# sqlx DB SQL: runs a script on DB as any SQLite user could (no decbench involved); a script
# that should change rows and changes none fails (the case would test nothing)
sqlx() {
    python3 - "$1" "$2" <<'PY'
import re, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript(sys.argv[2])
c.commit()
if re.search(r"\b(UPDATE|INSERT|DELETE)\b", sys.argv[2]) and not re.search(r"\bTRIGGER\b", sys.argv[2]):
    assert c.total_changes > 0, "the craft changed no row: " + sys.argv[2]
PY
}

# ---- crafts: each makes $X (and $O, the merge output, where the case needs one) -----------
plain() { copy s1.db "$X"; }
recursive_view() { # TABLE: TABLE becomes a view that never ends
    copy s1.db "$X"
    sqlx "$X" "ALTER TABLE $1 RENAME TO $1_real;
        CREATE VIEW $1 AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)
        SELECT t.* FROM $1_real t, r;"
}
out_with() { # SQL: the merge output is shard 2 with SQL applied; $X is shard 1
    copy s2.db "$O"
    sqlx "$O" "$1"
    copy s1.db "$X"
}
with() { # SQL [SHARD]: shard 1 (or SHARD) with SQL applied
    copy "s${2:-1}.db" "$X"
    sqlx "$X" "$1"
}
# A sample whose deterministic fingerprint is long (every histogram position with a large
# count) in both OUT and X, X differing only in the last entry.
long_fingerprint() {
    local fill="WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 63)
        INSERT OR REPLACE INTO histograms (sample_id, kind, k, count)
        SELECT s, kind, i, 16000000 FROM k,
        (SELECT MIN(id) AS s FROM samples WHERE decoder = 'greedy'),
        (SELECT 'accept' AS kind UNION SELECT 'pos_tried' UNION SELECT 'pos_accepted');"
    copy s1.db "$O"
    sqlx "$O" "$fill"
    copy s1.db "$X"
    sqlx "$X" "$fill UPDATE histograms SET count = count + 1 WHERE kind = 'pos_tried' AND k = 63;"
}
many_shards() { # shard 1 of 3000 holding 1..1500, shard 2's run as shard 1501
    local list
    list=$(seq -s, 1 1500)
    copy s1.db "$O"
    sqlx "$O" "UPDATE runs SET shard = '$list/3000';"
    copy s2.db "$X"
    sqlx "$X" "UPDATE runs SET shard = '1501/3000';"
}

# ---- checks after exit 0: print nothing when right, else the outcome and why ----------------
passes_all() { # each sample of OUT has the passes of the sample it came from (a prompt both
    # shards measured greedy on is kept once, from shard 1), and the projection keeps its basis
    local want got key="dataset || '/' || sample_index || '/' || spec || '/' || repeat"
    local per="SELECT $key, (SELECT COUNT(*) FROM passes p WHERE p.sample_id = s.id) FROM samples s"
    want=$({ q s1.db "$per"; q s2.db "$per"; } | awk -F'|' '!seen[$1]++' | sort)
    got=$(q "$O" "$per" | sort)
    [ -n "$want" ] && [ "$got" = "$want" ] || { echo "data lost: passes per sample $(echo $got) vs $(echo $want)"; return; }
    $B report --db "$O" --layout projected --project-cost cost.csv --format csv 2>/dev/null |
        grep -q '"passes' || echo "data lost: the projection lost its basis 'passes'"
}
all_shards() {
    local want got
    want="$(seq -s, 1 1501)/3000"
    got=$(q "$O" "SELECT shard FROM runs")
    [ "$got" = "$want" ] || echo "data lost: shard list of OUT is ${#got} characters, ${#want} due"
}
sweep_created() {
    [ "$(q "$O" "SELECT created FROM sweeps")" = "2001-02-03T04:05:06.000Z" ] || echo "data lost: the sweep's creation time"
}
json_label() {
    python3 - out.txt 2>/dev/null <<'PY' || echo "data lost: the label is missing from the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert "label" in d["runs"][0] and d["runs"][0]["label"].startswith("caf"), d["runs"][0].get("label")
assert any(n.startswith("Run 1 ") for n in d["notes"]), d["notes"]
PY
}
tex_inert() { # no line of the LaTeX output starts with a control sequence from the label
    if grep -q '^\\input' out.txt || grep -q $'\r' out.txt; then echo "silent wrong: the label runs as TeX"; fi
}
md_rows() { # the label's newline does not start a table row or heading of its own
    if grep -qE '^\| fake|^# ' out.txt; then echo "silent wrong: a newline in the label split the Markdown"; fi
}
tsv_rows() { # speedup.tsv: a header and one row per dataset, every row with the header's fields
    awk -F'\t' '!/^#/ { n++; if (!f) f = NF; else if (NF != f) bad = 1 } END { exit !(n == 2 && !bad) }' \
        plot/speedup.tsv || echo "silent wrong: a newline in a dataset name split the plot data"
}

# ---- the corpus -------------------------------------------------------------------------------
# One case per line, fields separated by " :: ": name :: craft (a function above, making $X and
# $O) :: command ($X the crafted database, $O the merge output) :: exit :: error:ERE (on stderr)
# or ok:CHECK (a function above; also true).
CASES=$(cat <<'EOF'
passes_merged       :: plain                     :: merge $O s1.db s2.db                             :: 0 :: ok:passes_all
view_samples_report :: recursive_view samples    :: report --db $X                                   :: 1 :: error:samples.*view
view_samples_merge  :: recursive_view samples    :: merge $O $X                                      :: 1 :: error:samples.*view
view_samples_cmp    :: recursive_view samples    :: compare $X s1.db                                 :: 2 :: error:samples.*view
view_samples_plot   :: recursive_view samples    :: plot --db $X --kind speedup --data-only --out plot :: 1 :: error:samples.*view
view_histograms     :: recursive_view histograms :: report --db $X --layout accept                   :: 1 :: error:histograms.*view
view_meta           :: recursive_view meta       :: report --db $X                                   :: 1 :: error:meta.*view
view_runs_out       :: recursive_view runs       :: merge $X s2.db                                   :: 1 :: error:runs.*view
trigger_in_out      :: out_with "CREATE TRIGGER t AFTER INSERT ON samples BEGIN UPDATE runs SET label = 'pwned'; END;" :: merge $O $X :: 1 :: error:trigger 't'
trigger_in_input    :: with "CREATE TRIGGER t AFTER INSERT ON samples BEGIN SELECT 1; END;" :: report --db $X :: 1 :: error:trigger.*t
extra_table         :: with "CREATE TABLE extra (x);" :: merge $O $X                                    :: 1 :: error:table.*extra
extra_index         :: with "CREATE INDEX extra_ix ON samples (dataset);" :: report --db $X             :: 1 :: error:index.*extra_ix
generated_column    :: with "ALTER TABLE samples ADD COLUMN g AS (zeroblob(100000000)) VIRTUAL;" :: merge $O $X :: 1 :: error:samples.*g
new_tokens_huge_p   :: with "UPDATE samples SET new_tokens = 4000000000000000000;" :: report --db $X --layout projected --project-cost cost.csv :: 1 :: error:new_tokens
new_tokens_huge     :: with "UPDATE samples SET new_tokens = 4000000000000000000;" :: report --db $X :: 1 :: error:new_tokens
new_tokens_text     :: with "UPDATE samples SET new_tokens = 'many';" :: report --db $X                 :: 1 :: error:new_tokens
new_tokens_merge    :: with "UPDATE samples SET new_tokens = 4000000000000000000;" :: merge $O $X   :: 1 :: error:new_tokens
new_tokens_cmp      :: with "UPDATE samples SET new_tokens = 4000000000000000000;" :: compare $X s1.db :: 2 :: error:new_tokens
steps_huge_plot     :: with "UPDATE samples SET target_steps = 4000000000000000000;" :: plot --db $X --kind speedup --data-only --out plot :: 1 :: error:target_steps
hist_count_huge     :: with "DELETE FROM trace; UPDATE histograms SET count = 4000000000000000000 WHERE kind = 'accept';" :: report --db $X --layout samples --format jsonl :: 1 :: error:count
steps_huge          :: with "DELETE FROM trace; DELETE FROM histograms; UPDATE samples SET target_steps = 4000000000000000000;" :: report --db $X --layout samples --format jsonl :: 1 :: error:target_steps
hist_k_range        :: with "UPDATE histograms SET k = k + 1000000 WHERE kind = 'pos_tried';" :: report --db $X --layout accept :: 1 :: error:histogram
fingerprint_tail    :: long_fingerprint          :: merge $O $X                                      :: 1 :: error:differs from the same sample
decoder_det_counter :: with "UPDATE counters SET value = value + 1 WHERE name = 'spec_steps';" 2 :: merge $O s2.db $X :: 1 :: error:differs from the same sample
many_shards         :: many_shards               :: merge $O $X                                      :: 0 :: ok:all_shards
sweep_created       :: with "INSERT INTO sweeps (id, spec, created) VALUES (7, 'g', '2001-02-03T04:05:06.000Z'); UPDATE runs SET sweep_id = 7;" :: merge $O $X :: 0 :: ok:sweep_created
label_json_utf8     :: with "UPDATE runs SET label = CAST(x'636166ff65' AS TEXT);" :: report --db $X --format json :: 0 :: ok:json_label
label_tex_cr        :: with "UPDATE runs SET label = 'x' || char(13) || '\input{/etc/passwd}';" :: report --db $X --format latex :: 0 :: ok:tex_inert
label_md_newline    :: with "UPDATE runs SET label = 'x' || char(10) || '| fake | row |' || char(10) || '# head';" :: report --db $X :: 0 :: ok:md_rows
dataset_newline     :: with "UPDATE samples SET dataset = 'tiny' || char(10) || 'stories';" :: plot --db $X --kind speedup --data-only --out plot :: 0 :: ok:tsv_rows
EOF
)

declare -A count=()
outcomes=("clear error" "ok" "crash" "hang" "silent wrong" "data lost")
for o in "${outcomes[@]}"; do count[$o]=0; done
while IFS=$'\x1f' read -r name craft cmd want expect; do
    name=$(echo $name) cmd=$(echo $cmd) want=$(echo $want) expect=$(echo "$expect" | sed 's/^ *//;s/ *$//')
    [ -n "$name" ] || continue
    X=$T/$name.db O=$T/$name.out.db
    rm -rf "$X" "$O" plot out.txt err.txt
    eval "$craft" >craft.log 2>&1 || { echo "FAIL $name: craft failed:"; cat craft.log; fails=$((fails + 1)); continue; }
    eval "timeout -k 5 $LIMIT $B $cmd" >out.txt 2>err.txt
    rc=$?
    why=""
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        outcome=hang
    elif [ $rc -ge 128 ] || grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' err.txt; then
        outcome=crash
    elif [ $rc -ne 0 ]; then
        outcome="clear error"
        [ -s err.txt ] || outcome=crash
        # failing for another reason than the one due (compare's regression verdict on a
        # damaged file) is a wrong answer, not a clear error
        if [ "${expect%%:*}" = error ] && ! grep -qE -- "${expect#error:}" err.txt; then
            outcome="silent wrong" why="another failure than the one due"
        fi
    elif [ "${expect%%:*}" = error ]; then
        outcome="silent wrong" why="exit 0"
    else
        why=$(${expect#ok:})
        outcome=${why%%:*}
        [ -n "$why" ] || outcome=ok
    fi
    count[$outcome]=$((count[$outcome] + 1))
    good=0
    if [ "${expect%%:*}" = error ]; then
        [ "$outcome" = "clear error" ] && [ "$rc" = "$want" ] && grep -qE -- "${expect#error:}" err.txt && good=1
    else
        [ "$outcome" = ok ] && [ "$rc" = "$want" ] && good=1
    fi
    if [ $good = 1 ]; then
        passes=$((passes + 1))
    else
        fails=$((fails + 1))
        echo "FAIL $name: $outcome (exit $rc, want $want, $expect) ${why:+($why)} $(head -c 300 err.txt)"
    fi
done < <(sed 's/ *:: */\x1f/g' <<<"$CASES")

printf 'outcomes:'
for o in "${outcomes[@]}"; do printf ' %s %d;' "$o" "${count[$o]}"; done
echo
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
