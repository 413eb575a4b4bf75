#!/usr/bin/env bash
# cli_sampling.sh: sampling from the command line (--temperature, --top-k, --top-p, --seed,
# --sampling; harness/sampling_opts.h).
#   1. generate: coupled mode gives plain sampling's text with any decoder, differs from greedy,
#      is reproducible, and changes with the seed; bad options are refused with one line;
#   2. run, coupled: every decoder is checked token by token and equals plain sampling (exact
#      100%); the run records the settings, the report header shows them, and compare warns
#      against a greedy run;
#   3. run, standard: samples are stored unchecked (matched NULL) with their rejection tests,
#      the acceptance check is printed per decoder; a verifier that accepts everything
#      (test hook DECBENCH_TEST_SAMPLING_FLAW=2) fails the check and the run;
#   4. --resume refuses other sampling settings; sweep takes the options too;
#   5. at temperature 0 nothing changes: the run records 'greedy'.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_sampling}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin D=$S/models/llama2xs.bin
G=(generate --model "$M" --draft "$D" -n 48 --prompt "Once upon a time" --threads 1)

# 1. generate
$B "${G[@]}" --temperature 0.9 --top-k 50 --sampling coupled --seed 5 >g_plain.txt 2>g.err
expect_eq generate_exit 0 $?
for d in spec:gamma=3 lookahead:W=4,N=3,G=4 pld jacobi:window=4 ouroboros:gamma=3,W=4,beta=3,K=2; do
    $B "${G[@]}" --temperature 0.9 --top-k 50 --sampling coupled --seed 5 -d "$d" >g_d.txt 2>>g.err
    expect_eq "generate_coupled_${d%%:*}" "$(cat g_plain.txt)" "$(cat g_d.txt)"
done
$B "${G[@]}" >g_greedy.txt 2>>g.err
$B "${G[@]}" --temperature 0.9 --top-k 50 --sampling coupled --seed 6 >g_seed6.txt 2>>g.err
expect_eq generate_samples "yes|yes" "$(cmp -s g_plain.txt g_greedy.txt || echo -n yes)|$(cmp -s g_plain.txt g_seed6.txt || echo yes)"
$B "${G[@]}" --temperature 0.9 --top-k 50 --sampling coupled --seed 5 --stats >/dev/null 2>g_stats.err
expect_grep generate_stats_say_how "tokens chosen by +coupled sampling: temperature 0.9, top-k 50, top-p 1, seed 5" g_stats.err
expect_grep generate_stats_counters "^samp_tests +0$" g_stats.err
$B "${G[@]}" --temperature 0.9 -d spec:gamma=3 --stats >/dev/null 2>g_std.err
expect_grep generate_standard_tests "^samp_tests +[1-9]" g_std.err
bad() { # NAME MESSAGE ARGS...: refused as a usage error (exit 2) with the message
    local name=$1 msg=$2; shift 2
    $B "${G[@]}" "$@" >/dev/null 2>bad.err
    expect_eq "refused_$name" 2 $?
    expect_grep "message_$name" "$msg" bad.err
}
bad top_k_alone "--top-k has no effect without --temperature T > 0" --top-k 5
bad seed_alone "--seed has no effect without --temperature" --seed 3
bad mode "--sampling: 'exact' is neither standard nor coupled" --temperature 1 --sampling exact
bad top_p_zero "--top-p: 0 is out of range" --temperature 1 --top-p 0
bad temperature "--temperature: -1 is out of range 0..100" --temperature -1
bad temperature_text "--temperature: 'hot' is not a number" --temperature hot
bad seed_text "--seed: '-3' is not a seed" --temperature 1 --seed -3

R=(run --model "$M" --draft "$D" --dataset tinystories --limit 2 --max-new 32 --threads 1 --warmup 0
   --decoder spec:gamma=3 --decoder lookahead:W=4,N=3,G=4 --decoder pld --decoder jacobi:window=4
   --decoder ouroboros:gamma=3,W=4,beta=3,K=2)

# 2. run, coupled
$B "${R[@]}" --temperature 0.8 --top-p 0.9 --sampling coupled --seed 11 --db c.db >c.out 2>c.err
expect_eq coupled_exit 0 $?
expect_eq coupled_all_exact "12|12" "$(q c.db "SELECT COUNT(*), SUM(matched) FROM samples")"
expect_eq coupled_recorded "coupled|0.8|0|0.9|11" "$(q c.db "SELECT sampling, temperature, top_k, top_p, sampling_seed FROM runs")"
expect_grep coupled_header "coupled sampling \(T=0.8, top-k=0, top-p=0.9, seed=11\)" c.out
$B "${R[@]}" --db g.db >/dev/null 2>&1
expect_eq greedy_recorded "greedy|0.0|0|1.0|0" "$(q g.db "SELECT sampling, temperature, top_k, top_p, sampling_seed FROM runs")"
$B compare g.db c.db >cmp.out 2>&1
expect_grep compare_warns "WARNING: different sampling \(greedy vs coupled T=0.8 top-k=0 top-p=0.9 seed=11\)" cmp.out

# 3. run, standard
$B "${R[@]}" --temperature 0.8 --seed 11 --db s.db >s.out 2>s.err
expect_eq standard_exit 0 $?
expect_eq standard_unchecked "2|2|10|0" "$(q s.db "SELECT SUM(decoder = 'greedy'), SUM(matched), SUM(matched IS NULL), SUM(decoder = 'greedy' AND samp_tests > 0) FROM samples")"
expect_eq standard_tests "10" "$(q s.db "SELECT COUNT(*) FROM samples WHERE decoder != 'greedy' AND samp_tests >= samp_accepts AND samp_expected > 0")"
expect_grep standard_check "sampling check: spec:gamma=3: [0-9]+ of [0-9]+ rejection tests accepted \([0-9.]+%\), theory [0-9.]+ \([0-9.]+%\): z = -?[0-9.]+$" s.err
DECBENCH_TEST_SAMPLING_FLAW=2 $B run --model "$M" --draft "$D" --dataset tinystories --limit 3 --max-new 32 \
    --threads 1 --warmup 0 --decoder pld --decoder spec:gamma=4 --temperature 0.8 --db f.db >/dev/null 2>f.err
expect_eq flawed_exit 1 $?
expect_eq flawed_failed failed "$(q f.db "SELECT status FROM runs")"
expect_grep flawed_loud "sampling check: pld: .*\*\*\* FAILED \(\|z\| > 5\)" f.err

# 4. resume and sweep
$B "${R[@]}" --temperature 0.8 --seed 12 --db s.db --resume 1 >/dev/null 2>r.err
expect_eq resume_refused 1 $?
expect_grep resume_message "the run used --seed 11, this command 12" r.err
python3 -c "import sqlite3; c = sqlite3.connect('s.db'); c.execute(\"UPDATE runs SET status = 'incomplete'\"); c.commit()"
$B "${R[@]}" --temperature 0.8 --seed 11 --db s.db --resume 1 >/dev/null 2>r2.err
expect_eq resume_same 0 $?
expect_grep resume_skips "0 sample\(s\) measured, 12 already stored" r2.err
$B sweep --model "$M" --dataset tinystories --limit 2 --max-new 24 --threads 1 --warmup 0 \
    --grid 'pld:k=2,4' --temperature 0.7 --sampling coupled --seed 3 --db w.db >w.out 2>w.err
expect_eq sweep_exit 0 $?
expect_eq sweep_recorded "3|3" "$(q w.db "SELECT COUNT(*), SUM(sampling = 'coupled' AND temperature = 0.7) FROM runs")"
expect_eq sweep_exact "0" "$(q w.db "SELECT COUNT(*) FROM samples WHERE matched != 1")"

echo "cli_sampling: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
