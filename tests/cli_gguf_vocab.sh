#!/usr/bin/env bash
# cli_gguf_vocab.sh: `decbench tokenize` reproduces llama.cpp's reference ids for every string
# of ggml-vocab-llama-spm.gguf.inp, through the GGUF vocabulary and through tok32000.bin (the
# same vocabulary in llama2.c format); `detokenize` gives each string back; bad vocabularies
# fail with one line naming the file.
set -u
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_gguf}
mkdir -p "$T"
V=$S/tokenizer-vectors/ggml-vocab-llama-spm.gguf
fails=0 passes=0

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

echo "cli_gguf_vocab: $passes passed, $fails failed"
[ $fails -eq 0 ]
