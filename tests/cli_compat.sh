#!/usr/bin/env bash
# cli_compat.sh: files llama.cpp loads run from the command line, its oddities read as
# llama.cpp reads them with one "decbench: warning:" line on stderr (tests/test_compat.c holds
# the library's side).
#   - stories260K as llama.cpp's convert-llama2c-to-ggml writes it (separator and padding ids
#     4294967295, EOS 2, no pre-tokenizer, add-BOS or vocab_size key, context_length 128, an
#     output.weight copied from the tied embedding): decbench's own conversion rewritten so.
#     `generate` runs with one warning line and writes the checkpoint's text (greedy).
#   - a byte-level vocabulary with a piece of 512 spaces (GPT-NeoX/MPT have such pieces):
#     tokenize and detokenize carry it whole.
# With DECBENCH_LLAMA_CPP_BIN naming a folder holding llama.cpp's llama-convert-llama2c-to-ggml,
# the same checks run on that converter's real output; with DECBENCH_LLAMA_CPP_MODELS naming
# llama.cpp's models/ folder, on ggml-vocab-mpt.gguf's 512-space token. Each is skipped with a
# note when its variable is unset.
set -u
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_compat}
mkdir -p "$T"
source "$(dirname "$0")/lib_cli.sh"

# A GGUF rewriter (stdlib only): `gguf.py edit IN OUT KEY=u32:V|str:V|drop ... [tie-output]`
# copies IN with those keys set or dropped (set keys appended); tie-output adds output.weight
# as a copy of token_embd.weight. `gguf.py vocab OUT` writes the long-piece vocabulary.
cat > "$T/gguf.py" <<'PY'
import struct, sys
SZ = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def gstr(b): return struct.pack('<Q', len(b)) + b
def read(path):
    d = open(path, 'rb').read()
    ver, nt, nkv = struct.unpack_from('<IQQ', d, 4); p = 24; kvs = []; ts = []
    def s(p):
        (n,) = struct.unpack_from('<Q', d, p); return d[p + 8:p + 8 + n], p + 8 + n
    for _ in range(nkv):
        k, p = s(p); (t,) = struct.unpack_from('<I', d, p); start = p; p += 4
        if t == 9:
            et, n = struct.unpack_from('<IQ', d, p); p += 12
            for _ in range(n):
                if et == 8: _, p = s(p)
                else: p += SZ[et]
        elif t == 8: _, p = s(p)
        else: p += SZ[t]
        kvs.append((k, d[start:p]))
    align = 32
    for k, v in kvs:
        if k == b'general.alignment': align = struct.unpack_from('<I', v, 4)[0]
    for _ in range(nt):
        name, p = s(p); (nd,) = struct.unpack_from('<I', d, p); p += 4
        ne = struct.unpack_from('<%dQ' % nd, d, p); p += 8 * nd
        ty, off = struct.unpack_from('<IQ', d, p); p += 12
        ts.append([name, ne, ty, off])
    base = (p + align - 1) // align * align
    ends = sorted(t[3] for t in ts) + [len(d) - base]
    for t in ts:  # a tensor's bytes run to the next tensor's offset (padding included)
        nxt = min(e for e in ends if e > t[3]) if any(e > t[3] for e in ends) else len(d) - base
        t.append(d[base + t[3]:base + nxt])
    return kvs, ts
def write(path, kvs, ts):
    out = b'GGUF' + struct.pack('<IQQ', 3, len(ts), len(kvs))
    for k, v in kvs: out += gstr(k) + v
    off = 0; data = b''
    for name, ne, ty, _, blob in ts:
        out += gstr(name) + struct.pack('<I', len(ne)) + struct.pack('<%dQ' % len(ne), *ne)
        out += struct.pack('<IQ', ty, off)
        blob += b'\0' * (-len(blob) % 32); data += blob; off += len(blob)
    out += b'\0' * (-len(out) % 32)
    open(path, 'wb').write(out + data)
def val(spec):
    kind, v = spec.split(':', 1)
    return struct.pack('<I', 4) + struct.pack('<I', int(v)) if kind == 'u32' else \
        struct.pack('<I', 8) + gstr(v.encode())
if sys.argv[1] == 'edit':
    kvs, ts = read(sys.argv[2]); edits = [a.split('=', 1) for a in sys.argv[4:] if '=' in a]
    names = {k.encode() for k, _ in edits}
    kvs = [kv for kv in kvs if kv[0] not in names]
    kvs += [(k.encode(), val(v)) for k, v in edits if v != 'drop']
    if 'tie-output' in sys.argv[4:] and not any(t[0] == b'output.weight' for t in ts):
        e = next(t for t in ts if t[0] == b'token_embd.weight')
        ts.append([b'output.weight', e[1], e[2], 0, e[4]])
    write(sys.argv[3], kvs, ts)
else:  # the stand-ins of the 256 bytes, then runs of 2, 4, ..., 512 spaces merged by doubling
    def stand_in(b):
        keep = lambda c: 0x21 <= c <= 0x7e or 0xa1 <= c <= 0xac or c >= 0xae
        return chr(b) if keep(b) else chr(256 + sum(1 for c in range(b) if not keep(c)))
    toks = [stand_in(b) for b in range(256)] + ['\u0120' * (2 << r) for r in range(9)]
    merges = ['\u0120' * (1 << r) + ' ' + '\u0120' * (1 << r) for r in range(9)]
    arr = lambda items: struct.pack('<IIQ', 9, 8, len(items)) + b''.join(gstr(x.encode()) for x in items)
    kvs = [(b'tokenizer.ggml.model', val('str:gpt2')), (b'tokenizer.ggml.pre', val('str:mpt')),
           (b'tokenizer.ggml.tokens', arr(toks)), (b'tokenizer.ggml.merges', arr(merges)),
           (b'tokenizer.ggml.bos_token_id', val('u32:0')), (b'tokenizer.ggml.eos_token_id', val('u32:0'))]
    write(sys.argv[2], kvs, [])
PY

# --- stories260K as llama.cpp's converter writes it --------------------------------------
"$B" convert --model stories260K.bin --type f32 -o "$T/s.gguf" > /dev/null 2>&1
python3 "$T/gguf.py" edit "$T/s.gguf" "$T/l2c.gguf" general.name=str:llama general.file_type=drop \
    llama.context_length=u32:128 llama.rope.freq_base=drop llama.vocab_size=drop \
    tokenizer.ggml.pre=drop tokenizer.ggml.add_bos_token=drop tokenizer.ggml.add_eos_token=drop \
    tokenizer.ggml.eos_token_id=u32:2 tokenizer.ggml.seperator_token_id=u32:4294967295 \
    tokenizer.ggml.padding_token_id=u32:4294967295 tie-output
expect_eq "fixture written" 0 $?

# generate on FILE against the checkpoint: exit 0, one warning line naming both keys, the
# checkpoint's text (the converted file ends at EOS 2, which these models never emit, so its
# text may run on past the checkpoint's end: compare the checkpoint's length).
same_as_checkpoint() { # NAME FILE
    local name=$1 file=$2 prompt
    for prompt in "Once upon a time" "The cat" ""; do
        "$B" generate --model "$file" --prompt "$prompt" -n 100 > "$T/g.out" 2> "$T/g.err"
        local rc=$?
        "$B" generate --model stories260K.bin --prompt "$prompt" -n 100 > "$T/c.out" 2> /dev/null
        expect_eq "$name '$prompt': exit" 0 $rc
        expect_eq "$name '$prompt': stderr lines" 1 "$(wc -l < "$T/g.err")"
        expect_grep "$name '$prompt': warning" "^decbench: warning: .*: tokenizer.ggml.seperator_token_id = 4294967295, tokenizer.ggml.padding_token_id = 4294967295: not token ids of its 512 tokens, read as absent" "$T/g.err"
        local want got
        want=$(cat "$T/c.out")
        got=$(head -c "$(wc -c < "$T/c.out")" "$T/g.out")
        expect_eq "$name '$prompt': text" "$want" "$got"
        [ -s "$T/c.out" ] || { echo "FAIL $name: the checkpoint wrote nothing"; fails=$((fails + 1)); }
    done
    # tokenize through --model: the same warning, the checkpoint's ids
    expect_eq "$name tokenize" "$("$B" tokenize --model stories260K.bin --text 'Hi there' 2>/dev/null)" \
        "$("$B" tokenize --model "$file" --text 'Hi there' 2>/dev/null)"
}
same_as_checkpoint fixture "$T/l2c.gguf"

if [ -n "${DECBENCH_LLAMA_CPP_BIN:-}" ]; then
    "$DECBENCH_LLAMA_CPP_BIN/llama-convert-llama2c-to-ggml" --copy-vocab-from-model "$S/models/tok512.bin" \
        --llama2c-model "$S/models/stories260K.bin" --llama2c-output-model "$T/real.gguf" > "$T/conv.log" 2>&1
    expect_eq "llama.cpp's converter ran" 0 $?
    same_as_checkpoint llama.cpp "$T/real.gguf"
else
    echo "note: DECBENCH_LLAMA_CPP_BIN is not set (a folder with llama.cpp's llama-convert-llama2c-to-ggml): its own output was not tried"
fi

# --- a piece of 512 spaces -----------------------------------------------------------------
python3 "$T/gguf.py" vocab "$T/long.gguf"
text="$(printf '%*s' 598 '') xy"
expect_eq "long: tokenize" "264 261 259 257 256 32 120 121" "$("$B" tokenize --tokenizer "$T/long.gguf" --text "$text" 2>&1)"
"$B" detokenize --tokenizer "$T/long.gguf" --ids "264 261 259 257 256 32 120 121" > "$T/back.txt" 2>&1
expect_eq "long: detokenize" "$(printf '%s\n' "$text" | od -An -c | tr -s ' ' | md5sum)" "$(od -An -c < "$T/back.txt" | tr -s ' ' | md5sum)"
if [ -n "${DECBENCH_LLAMA_CPP_MODELS:-}" ]; then
    M=$DECBENCH_LLAMA_CPP_MODELS/ggml-vocab-mpt.gguf
    "$B" detokenize --tokenizer "$M" --ids 19979 > "$T/mpt.txt" 2> "$T/mpt.err"
    expect_eq "mpt: token 19979 is 512 spaces" "513 0" "$(wc -c < "$T/mpt.txt") $(tr -d ' \n' < "$T/mpt.txt" | wc -c)"
    expect_eq "mpt: no warning" "" "$(cat "$T/mpt.err")"
else
    echo "note: DECBENCH_LLAMA_CPP_MODELS is not set (llama.cpp's models/ folder): ggml-vocab-mpt.gguf was not tried"
fi

echo "cli_compat: $passes passed, $fails failed"
[ $fails -eq 0 ]
