#!/usr/bin/env bash
# cli_kv_type.sh: --kv-type, how the KV cache stores keys and values (model/model.h's kv_types[]):
#   - f32 is the default and gives the same text as no option; f16 runs in generate, run, cost
#     and tune (`paper --dry-run` passes it on to its runs);
#   - a value that is not a row of the table is a usage error (exit 2) naming the accepted ones,
#     in every command that takes it, before any model is loaded;
#   - the run record stores it (runs.kv_type), report's run note names an f16 cache, compare
#     warns when two runs differ in it, --resume refuses a different one;
#   - cost prints the cache's bytes a position (f16: half of f32's) and, with --bandwidth-rounds,
#     the one-row pass's ratio to its bound (the weights and the cache it reads).
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_kv_type}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin

# generate: f32 is the default; f16 runs and writes a story
$B generate --model "$M" -n 48 --prompt "Once" --threads 1 >def.txt 2>/dev/null; expect_eq gen_default_rc 0 $?
$B generate --model "$M" -n 48 --prompt "Once" --threads 1 --kv-type f32 >f32.txt 2>/dev/null
expect_eq gen_f32_rc 0 $?
cmp -s def.txt f32.txt && ok || bad "generate --kv-type f32 differs from the default"
$B generate --model "$M" -n 48 --prompt "Once" --threads 2 --kv-type f16 >f16.txt 2>f16.err
expect_eq gen_f16_rc 0 $?
expect_grep gen_f16_text "^Once" f16.txt

# a bad value: a usage error naming the accepted types, in every command taking the option
# (paper checks its runs' options as it does --kernels': exit 1)
for cmd in generate run cost tune sweep paper; do
    extra=() want=2
    [ "$cmd" = sweep ] && extra=(--dataset tinystories --grid greedy)
    [ "$cmd" = paper ] && extra=(lade-configs) want=1
    expect_rc "bad_$cmd" $want "--kv-type q8_0: expected f32 or f16" \
        $B "$cmd" "${extra[@]}" --model "$M" --kv-type q8_0
done
expect_rc bad_empty 2 "--kv-type : expected f32 or f16" $B generate --model "$M" --kv-type ""

# run: the record stores the type; report names an f16 cache; compare warns
run_once() { # DB KV
    $B run --model "$M" --dataset tinystories --limit 2 --max-new 24 --threads 1 --decoder greedy \
        --db "$1" ${2:+--kv-type "$2"} >/dev/null 2>&1
}
run_once a.db && run_once b.db f16 && run_once c.db f32 || bad "run setup failed"
expect_eq run_kv_default f32 "$(q a.db "SELECT kv_type FROM runs")"
expect_eq run_kv_f16 f16 "$(q b.db "SELECT kv_type FROM runs")"
expect_eq run_kv_f32 f32 "$(q c.db "SELECT kv_type FROM runs")"
$B report --db b.db >rep_b.txt 2>&1
expect_grep report_note_f16 "KV cache f16" rep_b.txt
$B report --db a.db >rep_a.txt 2>&1
grep -q "KV cache" rep_a.txt && bad "report names the KV cache of an f32 run" || ok
$B compare a.db b.db --tolerance 0.9 >cmp.out 2>cmp.err
expect_grep compare_kv_warning "different KV cache types \(f32 vs f16\): output differences are expected" cmp.out
expect_grep compare_kv_speed "different KV cache types \(f32 vs f16\)" cmp.err
$B compare a.db c.db --tolerance 0.9 >same.out 2>&1
grep -q "KV cache" same.out && bad "compare warns about equal KV cache types" || ok
# --resume of the f16 run with another type is refused
expect_rc resume_other_kv 1 "the run used --kv-type 'f16', this command 'f32'" $B run --model "$M" --dataset tinystories --limit 2 \
    --max-new 24 --threads 1 --decoder greedy --db b.db --resume 1 --kv-type f32

# cost: the cache's bytes a position, and the ratio to the bound with the cache's bytes in it
$B cost --model "$M" --rows 1 --context 8 --seconds 10ms --no-bandwidth --threads 1 >c32.txt 2>&1
$B cost --model "$M" --rows 1 --context 8 --seconds 10ms --no-bandwidth --threads 1 \
    --kv-type f16 --bandwidth-rounds 2 >c16.txt 2>&1
expect_eq cost_f16_rc 0 $?
b32=$(sed -n 's/^# KV cache f32: \([0-9]*\) bytes a position.*/\1/p' c32.txt)
b16=$(sed -n 's/^# KV cache f16: \([0-9]*\) bytes a position.*/\1/p' c16.txt)
expect_eq cost_f16_half 1 "$(awk -v a="$b32" -v b="$b16" 'BEGIN { print (a > 0 && b * 2 == a) }')"
expect_eq cost_bound_line 1 "$(awk '/against their bound, the weights and the f16 KV cache/ {
    for (i = 1; i <= NF; i++) if ($i == "ratio") r = $(i + 1) + 0
    print (r > 0) }' c16.txt)"

# paper --dry-run hands the option to each run
$B paper lade-configs --model "$M" --kv-type f16 --dry-run --limit 1 >paper.txt 2>&1
expect_grep paper_passes_kv "decbench run .*--kv-type f16" paper.txt

echo "cli_kv_type: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
