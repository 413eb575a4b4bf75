#!/usr/bin/env bash
# cli_arch.sh: the architectures, drafts and contexts from the command line:
#   - `decbench synth` writes GGUF models of each architecture in a type or llama-quantize mix,
#     with a real vocabulary padded to the model's rows, and `generate` runs them;
#   - a draft with the target's vocabulary padded differently (Qwen2.5-0.5B's 151936 rows
#     against Qwen2.5-7B's 152064, here on tiny shapes with the real Qwen2 vocabulary) drafts for
#     it, and speculative decoding emits greedy's text; drafts whose vocabularies differ are
#     refused in one line naming the draft and the difference;
#   - --ctx: the default context is capped at 4096, raised up to the trained context, refused
#     beyond it; prompts that do not fit are refused;
#   - --kernels auto (the default) resolves to exact-int8b for a quantized file, exact otherwise.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_arch}
V=$S/tokenizer-vectors
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1

expect_fail() { # NAME PATTERN CMD...: exits WANT_RC (1) with one stderr line matching PATTERN
    local name=$1 pat=$2 want=${WANT_RC:-1}; shift 2
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq "$want" ] && grep -qE -- "$pat" <<<"$err" && [ "$(wc -l <<<"$err")" -eq 1 ]; then
        passes=$((passes + 1))
    else echo "FAIL $name: rc=$rc stderr=$err"; fails=$((fails + 1)); fi
}

# Usage errors (a bad option value) exit 2, like every command's; other errors 1.

# 1. every tiny architecture as GGUF, in a llama-quantize mix, with tok512's vocabulary
for p in tiny-qwen2:Q4_K_M tiny-qwen3:Q4_0 tiny-llama3:Q6_K tiny-mistral:q8_0 tiny-dscoder:f16; do
    name=${p%%:*} type=${p##*:}
    $B synth --config "$name" --type "$type" --tokenizer "$S/models/tok512.bin" -o "$name.gguf" 2>log
    expect_grep "synth_$name" "wrote $name.gguf: .* $type, dim 256" log
    out=$($B generate --model "$name.gguf" --prompt "Once upon a time" -n 16 2>/dev/null)
    [ ${#out} -gt 16 ] && passes=$((passes + 1)) || { echo "FAIL generate $name: '$out'"; fails=$((fails + 1)); }
done
# a vocabulary makes a GGUF of a llama2.c shape
$B synth --config 260K --tokenizer "$S/models/tok512.bin" -o s260s.gguf 2>log
expect_grep synth_260K_gguf "wrote s260s.gguf: stories260K shape \(llama\), f32, dim 64" log
WANT_RC=2 expect_fail synth_bad_type "--type q3: expected a type" $B synth --config tiny-qwen2 --type q3 -o x.gguf
WANT_RC=2 expect_fail synth_bad_arch "unknown architecture 'gemma'" $B synth --config gemma:64,128,1,4,2,512,256 -o x.gguf
expect_fail synth_big_vocab "ggml-vocab-qwen2.gguf has 151669 tokens, more than the 512 rows" \
    $B synth --config tiny-qwen2 --tokenizer "$V/ggml-vocab-qwen2.gguf" -o x.gguf
[ ! -e x.gguf ] && [ ! -e x.gguf.tmp ] && passes=$((passes + 1)) || { echo "FAIL: x.gguf left"; fails=$((fails + 1)); }

# 2. Qwen2.5-7B-style target (152064 rows) and -0.5B-style draft (151936): the real vocabulary
qv="--tokenizer $V/ggml-vocab-qwen2.gguf"
$B synth --config qwen2:64,128,2,4,2,152064,512 $qv --seed 3 -o t7.gguf 2>/dev/null
$B synth --config qwen2:64,128,2,4,2,151936,512 $qv --seed 4 -o d05.gguf 2>/dev/null
prompt="def fibonacci(n):"
greedy=$($B generate --model t7.gguf --prompt "$prompt" -n 32 2>/dev/null)
for dec in spec:gamma=3 ouroboros:gamma=3,W=3,beta=3; do
    got=$($B generate --model t7.gguf --draft d05.gguf --decoder $dec --prompt "$prompt" -n 32 2>/dev/null)
    expect_eq "padded_draft_$dec" "$greedy" "$got"
done
got=$($B generate --model d05.gguf --draft t7.gguf --decoder spec:gamma=3 --prompt "$prompt" -n 32 2>/dev/null)
want=$($B generate --model d05.gguf --prompt "$prompt" -n 32 2>/dev/null)
expect_eq larger_draft "$want" "$got"
# refused: a Llama-3 vocabulary, a 395-row difference, a SentencePiece one
$B synth --config llama:64,128,1,4,2,128256,512 --tokenizer "$V/ggml-vocab-llama-bpe.gguf" -o l3.gguf 2>/dev/null
$B synth --config qwen2:64,128,1,4,2,151669,512 $qv -o d0.gguf 2>/dev/null
$B synth --config llama:64,128,1,4,2,32000,512 --tokenizer "$V/ggml-vocab-llama-spm.gguf" -o spm.gguf 2>/dev/null
expect_fail draft_llama3 "draft l3\.gguf: special tokens differ from the target's: BOS 128000 \(add 1\), EOS 128001" \
    $B generate --model t7.gguf --draft l3.gguf --decoder spec --prompt "$prompt" -n 4
expect_fail draft_rows "draft d0\.gguf: 151669 tokens against the target's 152064: they differ by 395, more than the 128" \
    $B generate --model t7.gguf --draft d0.gguf --decoder spec --prompt "$prompt" -n 4
expect_fail draft_type "draft spm\.gguf: its vocabulary is SentencePiece .* the target's byte-level BPE" \
    $B generate --model t7.gguf --draft spm.gguf --decoder spec --prompt "$prompt" -n 4
# the TinyStories models: llama2xs drafts for stories260K in GGUF as in llama2.c form
$B convert --model "$S/models/stories260K.bin" --type f32 -o s260.gguf 2>/dev/null
$B convert --model "$S/models/llama2xs.bin" --tokenizer "$S/models/tok512.bin" --type q8_0 -o xs.gguf 2>/dev/null
want=$($B generate --model s260.gguf --prompt "Once upon a time" -n 48 2>/dev/null)
got=$($B generate --model s260.gguf --draft xs.gguf --decoder spec:gamma=4 --prompt "Once upon a time" -n 48 2>/dev/null)
expect_eq tinystories_gguf_draft "$want" "$got"
expect_fail tinystories_vs_qwen "draft t7\.gguf: its vocabulary is byte-level BPE" \
    $B generate --model s260.gguf --draft t7.gguf --decoder spec -n 4

# 3. --ctx
$B synth --config llama:64,128,1,4,2,512,8192 --tokenizer "$S/models/tok512.bin" -o long.gguf 2>/dev/null
out=$($B generate --model long.gguf --ctx 8192 --prompt "Once" -n 4 2>/dev/null) && [ -n "$out" ] &&
    passes=$((passes + 1)) || { echo "FAIL ctx 8192"; fails=$((fails + 1)); }
expect_fail ctx_beyond "--ctx 9000: long\.gguf was trained for a context of 1\.\.8192 tokens" \
    $B generate --model long.gguf --ctx 9000 -n 4
expect_fail ctx_prompt "prompt is [0-9]+ tokens but the context length of long\.gguf is 4" \
    $B generate --model long.gguf --ctx 4 --prompt "Once upon a time there was" -n 4
WANT_RC=2 expect_fail ctx_zero "--ctx" $B generate --model long.gguf --ctx 0 -n 4
$B run --model "$S/models/stories260K.bin" --dataset tinystories --limit 2 --max-new 16 --ctx 64 \
    --skip-long --db ctx.db 2>log
expect_eq run_ctx "2" "$(q ctx.db 'SELECT COUNT(*) FROM samples')"
expect_fail run_ctx_beyond "--ctx 600: .*stories260K\.bin was trained for a context of 1\.\.512" \
    $B run --model "$S/models/stories260K.bin" --dataset tinystories --limit 1 --ctx 600 --db ctx2.db

# 4. --kernels auto, the default: the int8b mode for a quantized file (same tokens as asking for
# it), the exact mode for a float one (cost names the mode it resolved to)
kern_of() { $B cost --model "$1" --rows 1 --context 0 --no-bandwidth --seconds 0.01 "${@:2}" | sed -n 's/.* \([a-z0-9-]*\) kernels,.*/\1/p'; }
expect_eq auto_quantized "exact-int8b" "$(kern_of tiny-qwen2.gguf)"
expect_eq auto_float "exact" "$(kern_of tiny-dscoder.gguf)"
expect_eq auto_asked "exact" "$(kern_of tiny-qwen2.gguf --kernels exact)"
# the AVX-512 int8b tiles' far prefetches (kernels.h): named when they ran, never in the exact mode
far_of() { $B cost --model tiny-qwen2.gguf --rows 1 --context 0 --no-bandwidth --seconds 0.01 "$@" | grep -c "far L2 prefetches" || true; }
expect_eq far_off "0" "$(DECBENCH_FAR_PREFETCH=0 far_of)"
expect_eq far_exact "0" "$(DECBENCH_FAR_PREFETCH=1 far_of --kernels exact)"
if grep -q avx512_vnni /proc/cpuinfo 2>/dev/null; then
    expect_eq far_on "1" "$(DECBENCH_FAR_PREFETCH=1 far_of)"
fi
for m in tiny-qwen2 tiny-llama3; do
    want=$($B generate --model $m.gguf --kernels exact-int8b --prompt "Once upon a time" -n 24 2>/dev/null)
    expect_eq "auto_tokens_$m" "$want" "$($B generate --model $m.gguf --prompt "Once upon a time" -n 24 2>/dev/null)"
done

echo "cli_arch: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
