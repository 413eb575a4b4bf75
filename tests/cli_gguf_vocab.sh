#!/usr/bin/env bash
# cli_gguf_vocab.sh: `decbench tokenize` reproduces llama.cpp's reference ids for every string
# of ggml-vocab-llama-spm.gguf.inp, through the GGUF vocabulary and through tok32000.bin (the
# same vocabulary in llama2.c format); `detokenize` gives each string back; the same through
# --model on every byte-level BPE vocabulary file (vocabulary-only GGUFs of the llama, qwen2
# and gpt2 architectures: only the vocabulary is read), every fifth string (the unit test
# test_tokenizer_bpe runs them all); bad vocabularies fail with one line naming the file. Under
# the sanitizers (DECBENCH_SANITIZED) every third llama-spm string and every fifteenth BPE one:
# each check is a process, and the whole set took 117 s there.
set -u
spm_step=1 bpe_step=5
[ -n "${DECBENCH_SANITIZED:-}" ] && spm_step=3 bpe_step=15
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_gguf}
mkdir -p "$T"
V=$S/tokenizer-vectors/ggml-vocab-llama-spm.gguf
source "$(dirname "$0")/lib_cli.sh"

# Split the .inp file at "\n__ggml_vocab_test__\n" into case files (bash strings cannot hold
# every case byte for byte, e.g. trailing newlines).
python3 - "$V.inp" "$T" <<'PY'
import sys
cases = open(sys.argv[1], 'rb').read().split(b'\n__ggml_vocab_test__\n')[:-1]
for i, c in enumerate(cases):
    open('%s/case%02d.txt' % (sys.argv[2], i), 'wb').write(c)
print(len(cases))
PY

i=0
while IFS= read -r want; do
    if [ $((i % spm_step)) -ne 0 ]; then i=$((i+1)); continue; fi
    f=$(printf '%s/case%02d.txt' "$T" $i)
    text=$(cat "$f"; printf x); text=${text%x} # keep trailing newlines
    want=$(echo $want) # the .out lines start with a space
    for vocab in "$V" "$S/models/tok32000.bin"; do
        got=$("$B" tokenize --tokenizer "$vocab" --text "$text" 2>&1)
        if [ "$got" = "$want" ]; then passes=$((passes+1))
        else echo "FAIL case $i ($(basename "$vocab")): got '$got' want '$want'"; fails=$((fails+1)); fi
    done
    if [ -n "$want" ]; then # decode(encode(text)) == text byte for byte (plus the final newline)
        "$B" detokenize --tokenizer "$V" --ids "1 $want" > "$T/back.txt" 2>&1
        { cat "$f"; printf '\n'; } > "$T/expect.txt"
        if cmp -s "$T/back.txt" "$T/expect.txt"; then passes=$((passes+1))
        else echo "FAIL case $i: detokenize gave '$(cat "$T/back.txt")'"; fails=$((fails+1)); fi
    fi
    i=$((i+1))
done < "$V.out"
[ $i -eq 46 ] || { echo "FAIL: read $i cases, expected 46"; fails=$((fails+1)); }

# Byte-level BPE vocabularies through --model (no weights in these files).
for name in llama-bpe qwen2 deepseek-coder deepseek-llm gpt-2; do
    W=$S/tokenizer-vectors/ggml-vocab-$name.gguf
    mkdir -p "$T/$name"
    python3 - "$W.inp" "$T/$name" <<'PY'
import sys
cases = open(sys.argv[1], 'rb').read().split(b'\n__ggml_vocab_test__\n')[:-1]
for i, c in enumerate(cases):
    open('%s/case%02d.txt' % (sys.argv[2], i), 'wb').write(c)
PY
    i=0 ran=0
    while IFS= read -r want; do
        if [ $((i % bpe_step)) -eq 0 ]; then
            f=$(printf '%s/%s/case%02d.txt' "$T" $name $i)
            text=$(cat "$f"; printf x); text=${text%x}
            want=$(echo $want)
            got=$("$B" tokenize --model "$W" --text "$text" 2>&1)
            expect_eq "$name case $i" "$want" "$got"
            if [ -n "$want" ]; then
                "$B" detokenize --model "$W" --ids "$want" > "$T/back.txt" 2>&1
                { cat "$f"; printf '\n'; } > "$T/expect.txt"
                if cmp -s "$T/back.txt" "$T/expect.txt"; then passes=$((passes+1))
                else echo "FAIL $name case $i: detokenize gave '$(cat "$T/back.txt")'"; fails=$((fails+1)); fi
            fi
            ran=$((ran+1))
        fi
        i=$((i+1))
    done < "$W.out"
    expect_eq "$name cases read" 46 $i
done
# Control tokens: text by default, tokens with --special; BOS from --bos.
Q=$S/tokenizer-vectors/ggml-vocab-qwen2.gguf
expect_eq "qwen2 --special" "151644 872 198 13048 151645" \
    "$("$B" tokenize --model "$Q" --special --text $'<|im_start|>user\nHi<|im_end|>' 2>&1)"
expect_eq "llama-bpe --bos" "128000 9906" \
    "$("$B" tokenize --model "$S/tokenizer-vectors/ggml-vocab-llama-bpe.gguf" --bos --text Hello 2>&1)"

# Bad vocabularies: one line naming the file, non-zero exit, no crash.
expect_fail() {
    local name=$1 pat=$2; shift 2
    local out rc
    out=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qE "$pat" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ]
    then passes=$((passes+1)); else echo "FAIL $name: rc=$rc stderr=$out"; fails=$((fails+1)); fi
}
head -c 3000 "$V" > "$T/cut.gguf"
printf 'GGUF\001\000\000\000' > "$T/v1.gguf"
expect_fail truncated "cut.gguf: .*truncated" "$B" tokenize --tokenizer "$T/cut.gguf" --text hi
expect_fail version "v1.gguf: GGUF version 1 is not supported" "$B" tokenize --tokenizer "$T/v1.gguf" --text hi
expect_fail dir "is a directory" "$B" tokenize --tokenizer "$T" --text hi
# A byte-level vocabulary with an unknown pre-tokenizer, and one whose merge names no token:
# built from the Qwen2 file by replacing bytes of the same length.
python3 - "$Q" "$T" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
i = data.index(b'tokenizer.ggml.pre') + len(b'tokenizer.ggml.pre') + 4 + 8  # type, length
assert data[i:i + 5] == b'qwen2'
open(sys.argv[2] + '/pre.gguf', 'wb').write(data[:i] + b'qwen9' + data[i + 5:])
i = data.index(b'i n', data.index(b'tokenizer.ggml.merges'))  # an early merge
open(sys.argv[2] + '/merge.gguf', 'wb').write(data[:i] + b'i \x01' + data[i + 3:])
PY
expect_fail pre "pre.gguf: tokenizer.ggml.pre: pre-tokenizer 'qwen9' is not supported" "$B" tokenize --model "$T/pre.gguf" --text hi
# A merge naming no token loads, as llama.cpp loads it: one warning line on stderr.
out=$("$B" detokenize --model "$T/merge.gguf" --ids 1 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q '^decbench: warning: .*merge.gguf: ' <<<"$out" &&
    grep -qF 'tokenizer.ggml.merges: 1 entries name or make a string that is no token (first: [2] '"'i \\x01'" <<<"$out"
then passes=$((passes+1)); else echo "FAIL merge: rc=$rc stderr=$out"; fails=$((fails+1)); fi

echo "cli_gguf_vocab: $passes passed, $fails failed"
[ $fails -eq 0 ]
