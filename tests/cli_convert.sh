#!/usr/bin/env bash
# cli_convert.sh: `decbench convert` from the shell: stories260K converts to every type with the
# default tokenizer (tok512.bin from the models folder), q8_0 says which tensors fell back to
# f16, the converted models generate (f32: the same text as the checkpoint); every error is one
# line with a non-zero exit, and no output (nor OUT.tmp) is left behind.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_convert}
mkdir -p "$T"
M=$S/models/stories260K.bin TOK=$S/models/tok512.bin

# expect_fail NAME PATTERN OUT CMD...: non-zero exit, one stderr line matching PATTERN, and
# neither OUT nor OUT.tmp exists afterwards.
expect_fail() {
    local name=$1 pat=$2 out=$3; shift 3
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qE -- "$pat" <<<"$err" && [ "$(wc -l <<<"$err")" -eq 1 ] &&
       [ ! -e "$out.tmp" ] && { [ -z "$out" ] || [ ! -f "$out" ]; }
    then ok; else bad "$name: rc=$rc stderr=$err"; fi
}

for t in f32 f16 bf16 q8_0; do
    rm -f "$T/s_$t.gguf"
    if err=$("$B" convert --model "$M" --type $t -o "$T/s_$t.gguf" 2>&1) && [ -f "$T/s_$t.gguf" ] &&
       grep -q "wrote $T/s_$t.gguf: $t weights (36 matrices, norms f32), vocab 512 from .*tok512.bin" <<<"$err"
    then ok; else bad "convert $t: $err"; fi
    if [ $t = q8_0 ]; then
        grep -q "note: 5 of 36 matrices (first: blk.0.ffn_down.weight, rows of 172 values) .* stored as f16 instead of q8_0" <<<"$err" && ok || bad "q8_0 fallback note: $err"
    fi
    out=$("$B" generate --model "$T/s_$t.gguf" --prompt "Once upon a time" -n 40 2>/dev/null)
    [ ${#out} -gt 60 ] && ok || bad "generate with $t: '$out'"
done
want=$("$B" generate --model "$M" --prompt "Lily and Tom" -n 300 2>/dev/null)
got=$("$B" generate --model "$T/s_f32.gguf" --prompt "Lily and Tom" -n 300 2>/dev/null)
[ "$got" = "$want" ] && ok || bad "f32 GGUF text differs: '$got' vs '$want'"
# --fallback f32 and an explicit --tokenizer; a GGUF input keeps its own vocabulary
"$B" convert --model "$M" --tokenizer "$TOK" --type q8_0 --fallback f32 -o "$T/s_q8_f32.gguf" 2>"$T/log" &&
    grep -q "stored as f32 instead of q8_0" "$T/log" && ok || bad "fallback f32: $(cat "$T/log")"
"$B" convert --model "$T/s_q8_0.gguf" --type f32 -o "$T/deq.gguf" 2>"$T/log" &&
    grep -q "from $T/s_q8_0.gguf" "$T/log" && ok || bad "GGUF input: $(cat "$T/log")"

O=$T/out.gguf
rm -f "$O" "$O.tmp"
expect_fail missing "nope\.bin: cannot open model" "$O" "$B" convert --model "$T/nope.bin" --type f16 -o "$O"
expect_fail bad_type "--type q4: expected a type \(f32, f16, bf16, q8_0, q4_0, q5_0, q4_k, q6_k\) or a llama-quantize mix \(Q4_0, Q8_0, Q4_K_M, Q6_K\)" "$O" "$B" convert --model "$M" --type q4 -o "$O"
expect_fail no_type "--type TYPE and -o OUT.gguf are required" "$O" "$B" convert --model "$M" -o "$O"
expect_fail no_output "are required" "" "$B" convert --model "$M" --type f16
expect_fail bad_fallback "--fallback f8: expected f16, f32 or none" "$O" "$B" convert --model "$M" --type q8_0 --fallback f8 -o "$O"
expect_fail refuse_q8 "tensor 'blk.0.ffn_down.weight' has rows of 172 values, not a multiple of 32" "$O" \
    "$B" convert --model "$M" --type q8_0 --fallback none -o "$O"
expect_fail unwritable "$T/no/dir/x.gguf.tmp: cannot create: No such file or directory" "$T/no/dir/x.gguf" \
    "$B" convert --model "$M" --type f16 -o "$T/no/dir/x.gguf"
mkdir -p "$T/adir"
expect_fail output_dir "adir: is a directory, expected a GGUF file" "" "$B" convert --model "$M" --type f16 -o "$T/adir"
[ ! -e "$T/adir.tmp" ] && ok || bad "adir.tmp left behind"
cp "$M" "$T/same.bin"
expect_fail same_file "-o names the input file" "" "$B" convert --model "$T/same.bin" --type f32 -o "$T/same.bin"
cmp -s "$M" "$T/same.bin" && ok || bad "the input was modified"
expect_fail vocab_mismatch "tok32000.bin has 32000 tokens but .*stories260K.bin has a vocabulary of 512" "$O" \
    "$B" convert --model "$M" --tokenizer "$S/models/tok32000.bin" --type f16 -o "$O"
expect_fail no_default_tok "no --tokenizer given and no tok512.bin" "$O" \
    env DECBENCH_MODELS="$T/adir" "$B" convert --model "$M" --type f16 -o "$O"
expect_fail bad_tok "cut.bin: token [0-9]+: (truncated|length)" "$O" bash -c \
    "head -c 1000 '$TOK' > '$T/cut.bin'; '$B' convert --model '$M' --tokenizer '$T/cut.bin' --type f16 -o '$O'"
expect_fail tok_dir "adir: is a directory, expected a tokenizer file" "$O" "$B" convert --model "$M" --tokenizer "$T/adir" --type f16 -o "$O"
"$B" convert --help 2>&1 | grep -q -- "--fallback" && ok || bad "help"

echo "cli_convert: $passes passed, $fails failed"
[ $fails -eq 0 ]
