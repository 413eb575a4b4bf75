#!/usr/bin/env bash
# cli_heads.sh: the learned drafters' heads priced like draft models:
#   - the pass trace (run --trace) records eagle's and medusa's head forwards as draft passes:
#     eagle one per head pass it counts (draft_steps), its decode rows summing to draft_rows;
#     medusa one per step that drafted (drafting_steps), its rows (the heads run) summing to
#     the depths offered (drafted), logit rows = rows, context 0;
#   - `decbench synth --head eagle|medusa` writes random heads of a shape in the published
#     layout, which the decoders load and run (output equal to greedy's);
#   - `decbench cost --head DIR` writes a curve (CSV v2) of the head's pass, Medusa's at context
#     0 with rows = logit rows = heads; a head that does not fit the target, or a directory
#     holding no head, is one error line and exit 1 with nothing written;
#   - report --layout projected prices the head passes on --project-draft-cost (no "draft not
#     priced"), and says "draft not priced" for medusa without one.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_heads}
H=$(cd "$(dirname "$0")/data/heads" && pwd)
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
EH=eagle:head=$H/stories260K-eagle,total_tokens=16,depth=4,top_k=4
MH=medusa:head=$H/stories260K-medusa,nodes=15

# the trace: head passes as draft passes, matching the decoders' own statistics
$B run --model "$M" --dataset tinystories --limit 2 --max-new 24 --threads 1 --trace --db t.db \
    --decoder greedy --decoder "$EH" --decoder "$MH" >/dev/null 2>run.err
expect_eq run_rc 0 $?
python3 - t.db >trace.txt <<'EOF'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for dec, in db.execute("SELECT DISTINCT decoder FROM samples ORDER BY decoder"):
    q = lambda sql: db.execute(sql, (dec,)).fetchone()
    n, rows, lrows, ctx0 = q("SELECT COUNT(*), COALESCE(SUM(CASE WHEN prefill = 0 THEN p.rows END), 0), "
        "COALESCE(SUM(logit_rows = p.rows), 0), COALESCE(SUM(context = 0), 0) FROM passes p "
        "JOIN samples s ON s.id = p.sample_id WHERE s.decoder = ? AND model = 'draft'")
    steps, drows, drafting, drafted = q("SELECT SUM(draft_steps), SUM(draft_rows), "
        "SUM(drafting_steps), SUM(drafted) FROM samples WHERE decoder = ?")
    print(dec, n, rows, lrows, ctx0, steps, drows, drafting, drafted)
EOF
expect_grep greedy_no_draft '^greedy 0 0 0 0 0 0 ' trace.txt
# eagle: every head pass counted is traced, and the decode rows agree; some passes have more
# rows than logit rows (the appends: one row's logits)
awk '$1 == "eagle" && $2 > 0 && $2 == $6 && $3 == $7 && $4 < $2 { ok = 1 } END { exit !ok }' trace.txt \
    && ok || bad "eagle's draft passes do not match its statistics: $(cat trace.txt)"
# medusa: a pass per drafting step, rows = the depth offered, logit rows = rows, context 0, and
# no draft step counted (no draft model ran)
awk '$1 == "medusa" && $2 > 0 && $2 == $8 && $3 == $9 && $4 == $2 && $5 == $2 && $6 == 0 { ok = 1 }
    END { exit !ok }' trace.txt && ok || bad "medusa's draft passes do not match its steps: $(cat trace.txt)"

# synth --head: random heads of the 260K shape load and decode (exactly: cli_run's check)
$B synth --config 260K --head eagle --seed 3 -o eh 2>synth.err; expect_eq synth_eagle_rc 0 $?
$B synth --config 260K --head medusa --heads 3 -o mh 2>>synth.err; expect_eq synth_medusa_rc 0 $?
expect_grep synth_eagle_files '"hidden_size": 64' eh/config.json
expect_grep synth_medusa_files '"medusa_num_heads": 3' mh/config.json
expect_grep synth_f16 '"torch_dtype": "float16"' eh/config.json
[ -f eh/model.safetensors ] && [ -f mh/medusa_lm_head.safetensors ] && ok || bad "synth --head wrote no weights"
$B run --model "$M" --dataset tinystories --limit 1 --max-new 16 --threads 1 --db s.db \
    --decoder greedy --decoder eagle:head=eh --decoder medusa:head=mh >s.txt 2>s.err
expect_eq synth_heads_run_rc 0 $?
expect_eq synth_heads_exact 3 "$(grep -cE '\| +100\.0 \|$' s.txt)"
expect_rc synth_bad_kind 2 "--head: expected eagle or medusa" $B synth --config 260K --head hydra -o x
expect_rc synth_bad_type 2 "--type with --head" $B synth --config 260K --head eagle --type q8_0 -o x

# cost --head: a curve of each head
quick=(--model "$M" --rows 1,2,4 --context 4 --seconds 0.005 --no-bandwidth --threads 1)
$B cost "${quick[@]}" --head "$H/stories260K-eagle" --csv e.csv >e.txt 2>e.err
expect_eq cost_eagle_rc 0 $?
expect_grep cost_eagle_header '^rows,seconds,context,logit_rows$' e.csv
expect_eq cost_eagle_points 5 "$(grep -cE '^[124],[0-9.e-]+,4,[124]$' e.csv)"
$B cost "${quick[@]}" --head mh --csv m.csv >m.txt 2>m.err
expect_eq cost_medusa_rc 0 $?
# rows 1, 2 (the 4 exceeds its 3 heads), each at context 0 with every row's logits
expect_eq cost_medusa_points "1,0,1 2,0,2" "$(awk -F, '/^[0-9]/ {printf "%s%s,%s,%s", n++ ? " " : "", $1, $3, $4}' m.csv)"
# a head that does not fit the target: one line, exit 1, no curve
$B synth --config 32,64,1,4,4,512,64 --seed 1 -o other.bin 2>/dev/null
expect_rc cost_mismatch_eagle 1 "hidden_size 64 does not match the target's embedding width 32" \
    $B cost --model other.bin --head "$H/stories260K-eagle" --csv bad.csv "${quick[@]:2}"
expect_rc cost_mismatch_medusa 1 "hidden size|vocabulary" \
    $B cost --model other.bin --head "$H/stories260K-medusa" --csv bad.csv "${quick[@]:2}"
expect_eq cost_mismatch_lines 1 "$($B cost --model other.bin --head "$H/stories260K-eagle" "${quick[@]:2}" 2>&1 >/dev/null | wc -l)"
expect_rc cost_no_head 1 "neither model.safetensors .* nor medusa_lm_head.safetensors" \
    $B cost --model "$M" --head . --csv bad.csv
[ -e bad.csv ] && bad "a refused --head wrote its CSV"

# the projection: head passes priced on the draft curve
$B report --db t.db --layout projected --project-cost e.csv >p0.txt 2>&1
expect_grep medusa_unpriced '\| medusa:.*draft not priced' p0.txt
$B report --db t.db --layout projected --project-cost e.csv --project-draft-cost m.csv >p1.txt 2>&1
expect_eq run_report_rc 0 $?
expect_grep medusa_in_report '\| medusa:' p1.txt
grep -E '\| medusa:' p1.txt | grep -q 'draft not priced' && bad "medusa's heads not priced: $(cat p1.txt)" || ok

echo "cli_heads: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
