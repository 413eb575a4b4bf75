#!/usr/bin/env bash
# cli_chat_template.sh: `decbench run` wraps the chat templates in the model's chat format: the
# format named by --chat-template, else the one the GGUF's tokenizer.chat_template is recognised
# as (a Llama-3 template added here to a converted GGUF of stories260K), else the template's own
# (the runs table's template column says which: "chat", "chat:llama3"); the wrapped prompt is
# what gets encoded (longer than the plain one); an unknown name fails with the list.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_chat_template}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin

"$B" convert --model "$M" --type f32 -o plain.gguf >/dev/null 2>&1
expect_eq convert 0 $?
# The same file with tokenizer.chat_template = Meta-Llama-3-8B-Instruct's template.
python3 - plain.gguf llama3.gguf <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip_value(p, t):
    if t == 8: return p + 8 + struct.unpack_from('<Q', d, p)[0]
    if t == 9:
        et, n = struct.unpack_from('<IQ', d, p); p += 12
        for _ in range(n): p = skip_value(p, et)
        return p
    return p + SIZES[t]
n_t, n_kv = struct.unpack_from('<QQ', d, 8)
p, align = 24, 32
for _ in range(n_kv):
    klen = struct.unpack_from('<Q', d, p)[0]; key = d[p + 8:p + 8 + klen]; p += 8 + klen
    t = struct.unpack_from('<I', d, p)[0]; p += 4
    if key == b'general.alignment': align = struct.unpack_from('<I', d, p)[0]
    p = skip_value(p, t)
kv_end = p
for _ in range(n_t):
    nlen = struct.unpack_from('<Q', d, p)[0]; p += 8 + nlen
    nd = struct.unpack_from('<I', d, p)[0]; p += 4 + 8 * nd + 4 + 8
info_end = p
data_start = (info_end + align - 1) // align * align
tpl = (b"{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
       b"'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
       b"trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
       b"{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
       b"'<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
key = b'tokenizer.chat_template'
kv = struct.pack('<Q', len(key)) + key + struct.pack('<IQ', 8, len(tpl)) + tpl
head = d[:16] + struct.pack('<Q', n_kv + 1) + d[24:kv_end] + kv + d[kv_end:info_end]
head += b'\0' * ((-len(head)) % align)
open(sys.argv[2], 'wb').write(head + d[data_start:])
PY
expect_eq inject 0 $?

run() { # DB ARGS...: one prompt, 4 new tokens, greedy
    local db=$1; shift
    "$B" run --dataset tinystories --template chat --limit 1 --max-new 4 --threads 1 \
        --decoder greedy --db "$db" "$@" >/dev/null 2>"$db.err"
}
run own.db --model plain.gguf
expect_eq own_exit 0 $?
expect_eq own_template "chat" "$(q own.db "SELECT template FROM runs")"
run detected.db --model llama3.gguf
expect_eq detected_exit 0 $?
expect_eq detected_template "chat:llama3" "$(q detected.db "SELECT template FROM runs")"
run named.db --model plain.gguf --chat-template chatml
expect_eq named_exit 0 $?
expect_eq named_template "chat:chatml" "$(q named.db "SELECT template FROM runs")"
run override.db --model llama3.gguf --chat-template llama-2
expect_eq override_exit 0 $?
expect_eq override_template "chat" "$(q override.db "SELECT template FROM runs")"
run bin.db --model "$M" --chat-template vicuna
expect_eq llama2c_template "chat:vicuna" "$(q bin.db "SELECT template FROM runs")"
# The wrapped prompts are what was encoded: the Llama-3 and ChatML wrappers are longer (a
# 512-token vocabulary spells <|im_start|> out).
plain=$(q own.db "SELECT prompt_tokens FROM samples LIMIT 1")
expect_eq detected_longer 1 "$(q detected.db "SELECT prompt_tokens > $plain FROM samples LIMIT 1")"
expect_eq named_longer 1 "$(q named.db "SELECT prompt_tokens > $plain FROM samples LIMIT 1")"
# The Llama-2 wrapping of a Llama-3 file is the plain one.
expect_eq override_same "$plain" "$(q override.db "SELECT prompt_tokens FROM samples LIMIT 1")"

run bad.db --model plain.gguf --chat-template klingon
rc=$?
expect_eq bad_exit_nonzero 1 "$([ $rc -ne 0 ] && [ $rc -lt 128 ] && echo 1)"
expect_grep bad_message "unknown chat template \"klingon\"; valid: .*chatml" bad.db.err
expect_eq bad_one_line 1 "$(wc -l < bad.db.err)"

echo "cli_chat_template: $passes passed, $fails failed"
[ $fails -eq 0 ]
