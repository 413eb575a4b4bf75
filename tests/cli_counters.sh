#!/usr/bin/env bash
# cli_counters.sh: the counter list (STAT_COUNTERS, stats/stats.h) is the one place a framework
# counter is declared, and everything else follows it:
#   1. results/README.md holds `decbench counters` (both tables, generated from the list and
#      the decoders' own tables) verbatim, between its counters markers;
#   2. a new database's samples table has one column per counter, INTEGER for int and REAL for
#      real, and no column the list or the sample record does not account for;
#   3. the test build (decbench_testcounter: one more line in the list, test_emits, and one
#      more schema step) stores the new counter, shows it in `report --layout counters`,
#      `compare` fails naming it when it differs, `generate --stats` prints it, and a database
#      of the normal build migrates to it;
#   4. Ouroboros' own counters arrive in the counters table and the counters report.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} BT=${DECBENCH_TESTCOUNTER:?} S=${DECBENCH_SHARED:?} SRC=${DECBENCH_SOURCE:?}
T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_counters}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
tiny() { # BINARY DB [decoders...]: two TinyStories prompts, 24 tokens
    local bin=$1 db=$2; shift 2
    $bin run --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 24 --threads 1 \
        --warmup 0 --db "$db" "$@" >/dev/null 2>"$db.err"
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

# 1. the documented definitions are the generated ones
$B counters >counters.md
expect_eq counters_exit 0 $?
sed -n '/<!-- decbench counters: begin -->/,/<!-- decbench counters: end -->/p' \
    "$SRC/results/README.md" | sed '1d;$d' >readme_counters.md
if diff -u counters.md readme_counters.md >readme.diff; then passes=$((passes + 1)); else
    echo "FAIL readme_counters: results/README.md differs from \`decbench counters\` (paste its output between the markers):"
    cat readme.diff; fails=$((fails + 1))
fi

# 2. the schema has exactly the list's columns
tiny "$B" plain.db --decoder pld
expect_eq plain_run 0 $?
check_schema() { # DB COUNTERS_MD: "ok" or what is wrong
    python3 - "$1" "$2" <<'PY'
import re, sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
cols = {r[1]: r[2] for r in db.execute("PRAGMA table_info(samples)")}
listed = {}
for line in open(sys.argv[2]):
    if line.startswith("Decoder counters"): break
    m = re.match(r"\| `(\w+)` \| (int|real) \|", line)
    if m: listed[m.group(1)] = "INTEGER" if m.group(2) == "int" else "REAL"
own = {"id", "run_id", "dataset", "sample_index", "sample_key", "category", "decoder", "spec",
       "repeat", "output_hash", "tps_decode", "tps_e2e", "matched", "diverge_pos", "greedy_token",
       "decoder_token", "greedy_margin", "turn"}
bad = [f"{n}: column {cols.get(n)} for a {t} counter" for n, t in listed.items() if cols.get(n) != t]
bad += [f"column {n} is neither a counter nor a sample field" for n in cols if n not in listed and n not in own]
print("ok" if listed and not bad else "; ".join(bad) or "no counters listed")
PY
}
expect_eq schema_matches_list ok "$(check_schema plain.db counters.md)"

# 3. one more line in the list: the test build
$BT counters >counters_t.md
expect_grep testbuild_lists_it '^\| `test_emits` \| int \| sum \| exact \|' counters_t.md
tiny "$BT" t.db --decoder pld
expect_eq testbuild_run 0 $?
expect_eq testbuild_schema ok "$(check_schema t.db counters_t.md)"
# greedy appends one token per dec_emit call; prompt lookup appends several at a time
expect_eq stored_greedy "0" "$(q t.db "SELECT COUNT(*) FROM samples WHERE decoder = 'greedy' AND test_emits != new_tokens")"
expect_eq stored_pld "2" "$(q t.db "SELECT COUNT(*) FROM samples WHERE decoder = 'pld' AND test_emits BETWEEN 1 AND new_tokens")"
sum=$(q t.db "SELECT SUM(test_emits) FROM samples WHERE decoder = 'pld'")
$BT report --db t.db --layout counters --format csv >report.csv
expect_eq reported "$sum" "$(grep '^tinystories,"\?pld.*,test_emits,' report.csv | cut -d, -f5 | tr -d '"')"
alter t.db t_altered.db "UPDATE samples SET test_emits = test_emits + 1 WHERE id = (SELECT MIN(id) FROM samples WHERE decoder = 'pld')"
$BT compare t.db t_altered.db --tolerance 0.99 >compare.out 2>&1
expect_eq compare_fails 1 $?
expect_grep compare_names_it '\| test_emits +\|' compare.out
$BT compare t.db t.db --tolerance 0.99 >same.out 2>&1
expect_eq compare_same_passes 0 $?
$BT generate --model "$M" -n 8 --prompt "Once" --stats >/dev/null 2>stats.err
expect_grep stats_prints_it '^test_emits +8$' stats.err
# a database of the normal build: migrated by the test build's extra step (old rows: 0)
cp plain.db migrated.db
tiny "$BT" migrated.db --decoder pld
expect_eq migrate_run 0 $?
expect_eq migrated_old_rows 4 "$(q migrated.db "SELECT COUNT(*) FROM samples WHERE run_id = 1 AND test_emits = 0")"
expect_eq migrated_new_rows 0 "$(q migrated.db "SELECT COUNT(*) FROM samples WHERE run_id = 2 AND decoder = 'greedy' AND test_emits != new_tokens")"

# 4. a decoder's own counters: Ouroboros' are stored per sample and reported
tiny "$B" o.db --decoder ouroboros:gamma=4,W=4,beta=4,K=2
expect_eq ouroboros_run 0 $?
expect_eq ouroboros_counters 28 "$(q o.db "SELECT COUNT(*) FROM counters c JOIN samples s ON s.id = c.sample_id WHERE s.decoder = 'ouroboros'")"
expect_eq ouroboros_draft_tokens_positive 2 "$(q o.db "SELECT COUNT(*) FROM counters WHERE name = 'draft_tokens' AND value > 0")"
expect_eq ouroboros_defs 14 "$(q o.db "SELECT COUNT(*) FROM counter_defs WHERE decoder = 'ouroboros'")"
$B report --db o.db --layout counters >o_report.md
expect_grep ouroboros_reported '\| ouroboros\.suffix_tokens +\|' o_report.md

echo "cli_counters: $passes passed, $fails failed"
[ $fails -eq 0 ]
