#!/usr/bin/env bash
# cli_model_errors.sh: every bad model/tokenizer/prompt input gives one clear error line naming
# the file and what is wrong, and a non-zero exit; tokenize/detokenize work from the shell.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli}
mkdir -p "$T"
M=$S/models/stories260K.bin TOK=$S/models/tok512.bin

# expect_fail NAME PATTERN CMD...: exit status non-zero, stderr matches PATTERN, no crash
expect_fail() {
    local name=$1 pat=$2; shift 2
    local out rc
    out=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qE "$pat" <<<"$out"; then passes=$((passes+1))
    else echo "FAIL $name: rc=$rc stderr=$out"; fails=$((fails+1)); fi
}
expect_ok() {
    local name=$1 want=$2; shift 2
    local out; out=$("$@" 2>/dev/null)
    if [ "$out" = "$want" ]; then passes=$((passes+1)); else echo "FAIL $name: got '$out' want '$want'"; fails=$((fails+1)); fi
}

: > "$T/empty.bin"
head -c 1000 "$M" > "$T/truncated.bin"
head -c 5000 /dev/urandom > "$T/garbage.bin"
printf 'hello world, not a model\n' > "$T/text.bin"
head -c 100 "$TOK" > "$T/truncated_tok.bin"
python3 - "$M" "$T/badheader.bin" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<i', data, 12, 7)   # n_heads 7: 64 is not divisible by 7
open(sys.argv[2], 'wb').write(data)
PY

expect_fail missing "nope\.bin: cannot open model" $B generate --model "$T/nope.bin" -n 1
expect_fail empty "empty.bin: empty file" $B generate --model "$T/empty.bin" -n 1
expect_fail truncated "truncated.bin: .*(truncated|implies)" $B generate --model "$T/truncated.bin" -n 1
expect_fail garbage "garbage.bin: " $B generate --model "$T/garbage.bin" -n 1
expect_fail text "text.bin: " $B generate --model "$T/text.bin" -n 1
expect_fail directory "is a directory" $B generate --model "$T" -n 1
expect_fail badheader "badheader.bin: dim 64 is not divisible by n_heads 7" $B generate --model "$T/badheader.bin" --tokenizer "$TOK" -n 1
expect_fail vocab_mismatch "tok32000.bin has 32000 tokens but model .* 512" $B generate --model "$M" --tokenizer "$S/models/tok32000.bin" -n 1
expect_fail truncated_tok "truncated_tok.bin" $B generate --model "$M" --tokenizer "$T/truncated_tok.bin" -n 1
long=$(python3 -c "print('Once upon a time ' * 400)")
expect_fail long_prompt "prompt is [0-9]+ tokens but the context length .* is 512" $B generate --model "$M" --prompt "$long" -n 1
expect_fail unknown_option "unknown option '--bogus'" $B generate --model "$M" --bogus
expect_fail bad_n "max-new: 'x' is not an integer" $B generate --model "$M" -n x
expect_fail unknown_decoder "unknown decoder 'nope'; valid decoders: greedy" $B generate --model "$M" --decoder nope -n 1
expect_fail bad_kernels "kernels fast: expected auto, exact, exact-int8, exact-int8b or blas" $B generate --model "$M" --kernels fast
expect_fail unknown_command "unknown command 'frobnicate'" $B frobnicate
expect_fail synth_bad "expected a preset" $B synth --config 12,3 -o "$T/x.bin"
# a FIFO blocked open() forever: refused at once (timeout turns a hang into a failure)
rm -f "$T/fifo"; mkfifo "$T/fifo"
expect_fail fifo_model "fifo: is not a regular file \(a FIFO\), expected a model file" timeout 20 $B generate --model "$T/fifo" -n 1
expect_fail fifo_tokenizer "fifo: is not a regular file \(a FIFO\), expected a tokenizer file" timeout 20 $B generate --model "$M" --tokenizer "$T/fifo" -n 1
expect_fail dir_tokenizer "is a directory, expected a tokenizer file" $B generate --model "$M" --tokenizer "$T" -n 1
expect_fail device_model "/dev/zero: is not a regular file \(a character device\)" timeout 20 $B generate --model /dev/zero -n 1
expect_fail fifo_detok "fifo: is not a regular file \(a FIFO\)" timeout 20 $B detokenize --tokenizer "$T/fifo" --ids "1 2"
# overflowing numbers are quoted as typed, with the option and the limit
expect_fail n_overflow "max-new: 99999999999999999999 is out of range 0\.\.16777216" $B generate --model "$M" -n 99999999999999999999
expect_fail threads_overflow "threads: -9223372036854775809 is out of range 0\.\.1024" $B generate --model "$M" --threads -9223372036854775809
expect_fail detok_range "outside the vocabulary" $B detokenize --tokenizer "$TOK" --ids "1 9999"

# tokenizer from the shell: known ids (checked against SentencePiece's Llama-2 vocabulary:
# "Once upon a time" -> 9038 2501 263 931) and a round trip
expect_ok tok32000 "1 9038 2501 263 931" $B tokenize --tokenizer "$S/models/tok32000.bin" --text "Once upon a time" --bos
ids=$($B tokenize --model "$M" --text "Tom and Sue: héllo 🙂")
expect_ok roundtrip "Tom and Sue: héllo 🙂" $B detokenize --tokenizer "$TOK" --ids "1 $ids"
# invalid UTF-8 in a prompt must not crash
expect_ok invalid_utf8_runs "0" bash -c "$B generate --model $M --prompt \$'\\xff\\xfe abc \\xc3' -n 3 >/dev/null 2>&1; echo \$?"
# synth writes a loadable model; generate works on it
# the format version the bench caches name files by: a positive integer, the one synth.h holds
expect_ok synth_version "$(sed -n 's/^#define SYNTH_VERSION \([0-9]*\).*/\1/p' "${DECBENCH_SOURCE:?}/model/convert/synth.h")" $B synth --version
$B synth --config 64,128,2,4,2,512,128 --seed 3 -o "$T/syn.bin" 2>/dev/null
expect_ok synth_generate "0" bash -c "$B generate --model $T/syn.bin --tokenizer $TOK -n 5 >/dev/null 2>&1; echo \$?"

# NaN weights: every float after the header NaN. Before, greedy emitted <unk>
# (argmax of NaN logits) silently; now the first pass fails naming the position, and a run
# stops 'incomplete' with the reason (run --allow-nonfinite decodes the garbage).
python3 - "$M" "$T/nan.bin" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
nan = struct.pack('<f', float('nan'))
for off in range(28, len(data) - 3, 4):
    data[off:off + 4] = nan
open(sys.argv[2], 'wb').write(data)
PY
expect_fail nan_generate "nan.bin: non-finite logits at position 0 \(the pass fed token 1\): logit 0 is NaN" \
    $B generate --model "$T/nan.bin" --tokenizer "$TOK" -n 4
expect_fail nan_lookahead "nan.bin: non-finite logits at position 0" \
    $B generate --model "$T/nan.bin" --tokenizer "$TOK" -n 4 --decoder lookahead
rm -f "$T/nan.db"*
expect_fail nan_run "tinystories\[0\] .* repeat 0: .*nan.bin: non-finite logits at position [0-9]+ " \
    $B run --model "$T/nan.bin" --tokenizer "$TOK" --dataset tinystories --limit 2 --max-new 4 --warmup 0 --db "$T/nan.db"
expect_ok nan_run_incomplete "incomplete|1" python3 -c 'import sqlite3, sys
print("|".join(str(v) for v in sqlite3.connect(sys.argv[1]).execute(
    "SELECT status, reason LIKE \x27%non-finite logits%\x27 FROM runs").fetchone()))' "$T/nan.db"
expect_ok nan_run_allowed "0" bash -c "$B run --model $T/nan.bin --tokenizer $TOK --dataset tinystories --limit 2 --max-new 4 --warmup 0 --allow-nonfinite --db $T/nan2.db >/dev/null 2>&1; echo \$?"

# NaN and infinity in quantized models and hyper-parameters. gguf_poke.py IN OUT tensor NAME AT
# HEX4 writes the little-endian 16-bit HEX4 at byte AT of tensor NAME's data; IN OUT key NAME
# VALUE sets the f32 key NAME to VALUE (nan, inf).
cat > "$T/gguf_poke.py" <<'PY'
import struct, sys
src, dst, what, name = sys.argv[1:5]
d = bytearray(open(src, 'rb').read())
o = 24
def rstr(o):
    n, = struct.unpack_from('<Q', d, o); return d[o + 8:o + 8 + n].decode(), o + 8 + n
SIZE = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip(t, o):
    if t == 8: return rstr(o)[1]
    if t == 9:
        et, n = struct.unpack_from('<IQ', d, o); o += 12
        for _ in range(n): o = skip(et, o)
        return o
    return o + SIZE[t]
n_t, n_kv = struct.unpack_from('<QQ', d, 8)
align = 32
for _ in range(n_kv):
    k, o = rstr(o); t, = struct.unpack_from('<I', d, o); o += 4
    if k == 'general.alignment': align, = struct.unpack_from('<I', d, o)
    if what == 'key' and k == name: struct.pack_into('<f', d, o, float(sys.argv[5]))
    o = skip(t, o)
offset = None
for _ in range(n_t):
    k, o = rstr(o); nd, = struct.unpack_from('<I', d, o); o += 4 + 8 * nd
    t, off = struct.unpack_from('<IQ', d, o); o += 12
    if k == name: offset = off
if what == 'tensor':
    at = (o + align - 1) // align * align + offset + int(sys.argv[5])
    struct.pack_into('<H', d, at, int(sys.argv[6], 16))
open(dst, 'wb').write(d)
PY
poke() { python3 "$T/gguf_poke.py" "$@"; }
$B synth --config 64,128,2,4,2,512,128 --type q8_0 --seed 3 -o "$T/q8.gguf" 2>/dev/null
$B synth --config 64,128,2,4,2,512,128 --type f16 --seed 3 -o "$T/f16.gguf" 2>/dev/null
# a block scale NaN: refused at load, naming the tensor, the block and the scale (before: the
# int8 mode decoded token 0 to the end, exit 0, and run stored every sample as matched)
poke "$T/q8.gguf" "$T/q8_scale.gguf" tensor blk.1.attn_v.weight $((2 * 34)) 7e00
expect_fail scale_generate "q8_scale.gguf: tensor 'blk.1.attn_v.weight' \(q8_0\): block 2 \(row 1, columns 0\.\.31\) has scale d = NaN; the file is corrupt" \
    $B generate --model "$T/q8_scale.gguf" --tokenizer "$TOK" -n 4
rm -f "$T/scale.db"*
expect_fail scale_run "q8_scale.gguf: tensor 'blk.1.attn_v.weight'" \
    $B run --model "$T/q8_scale.gguf" --tokenizer "$TOK" --dataset tinystories --limit 2 --max-new 4 --warmup 0 --db "$T/scale.db"
expect_ok scale_run_nothing_stored "0" bash -c "[ -e $T/scale.db ] && python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*) FROM samples\").fetchone()[0])' $T/scale.db || echo 0"
# a NaN norm weight in a q8_0 model: the int8 mode (the default) reports it as the exact mode does
# (before: its quantizer made the NaN activations 0, and it decoded, exit 0)
poke "$T/q8.gguf" "$T/q8_norm.gguf" tensor blk.0.attn_norm.weight 2 7fc0
for k in auto exact-int8 exact; do
    expect_fail "norm_generate_$k" "q8_norm.gguf: non-finite logits at position 0 \(the pass fed token 1\): logit 0 is NaN; .* \(tensor 'blk.0.attn_norm.weight' \(f32\): value 0 is NaN\)" \
        $B generate --model "$T/q8_norm.gguf" --tokenizer "$TOK" -n 4 --kernels $k
done
rm -f "$T/norm.db"*
expect_fail norm_run "tinystories\[0\] .* greedy repeat 0: .*q8_norm.gguf: non-finite logits at position [0-9]+ " \
    $B run --model "$T/q8_norm.gguf" --tokenizer "$TOK" --dataset tinystories --limit 2 --max-new 4 --warmup 0 --decoder greedy --decoder pld --db "$T/norm.db"
expect_ok norm_run_incomplete "incomplete|0" python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT status FROM runs").fetchone()[0] + "|" + str(c.execute("SELECT COUNT(*) FROM samples WHERE matched = 1").fetchone()[0]))' "$T/norm.db"
# a NaN weight of attn_q in an f16 model (the exact mode): its scores were NaN, and the softmax
# gave them weights of 1e-38, so the head's output looked like a number
poke "$T/f16.gguf" "$T/f16_q.gguf" tensor blk.1.attn_q.weight $((2 * (64 * 5 + 7))) 7e00
expect_fail attn_q_generate "f16_q.gguf: non-finite logits at position 0 .*\(tensor 'blk.1.attn_q.weight' \(f16\): row 5, column 7 is NaN\)" \
    $B generate --model "$T/f16_q.gguf" --tokenizer "$TOK" -n 4
# float hyper-parameters: NaN and infinity passed "must be positive"
poke "$T/q8.gguf" "$T/theta.gguf" key llama.rope.freq_base inf
expect_fail freq_base_inf "theta.gguf: llama.rope.freq_base = inf, expected a positive finite number" \
    $B generate --model "$T/theta.gguf" --tokenizer "$TOK" -n 4
for v in inf nan; do
    poke "$T/q8.gguf" "$T/eps.gguf" key llama.attention.layer_norm_rms_epsilon $v
    expect_fail eps_$v "eps.gguf: llama.attention.layer_norm_rms_epsilon = $v, expected a positive finite number" \
        $B generate --model "$T/eps.gguf" --tokenizer "$TOK" -n 4
done

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
