#!/usr/bin/env bash
# cli_datastore.sh: `decbench datastore build` and the rest decoder reading what it wrote.
#   1. a dataset's reference answers past the measured records, a text file split at
#      <|endoftext|>, both together: the same bytes when built twice; the file's magic;
#   2. usage errors exit 2 (no action, an unknown option, no --from, a bad --field); an output
#      on an input, an unknown dataset, a dataset without reference answers exit 1;
#   3. `run` with rest on the datastore is exact; a truncated datastore, one of another
#      vocabulary's size and one of the same size but another vocabulary (its fingerprint) are
#      refused with one line naming the file and the byte, before any database is created.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_datastore}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
M=$S/models/stories260K.bin
TXT=$S/datasets/tinystories/cs336_tinystories_sample.txt

# 1. building
$B datastore build --model "$M" --from tinystories --offset 64 -o ts.ds >ts.out 2>ts.err
expect_eq build_exit 0 $?
expect_eq magic "DBTOKSTR" "$(head -c 8 ts.ds 2>/dev/null)"
expect_grep build_says "^ts.ds: [0-9]+ tokens of 649 documents, vocabulary of 512" ts.out
$B datastore build --model "$M" --from tinystories --offset 64 -o ts2.ds >/dev/null 2>&1
expect_eq deterministic 0 "$(cmp -s ts.ds ts2.ds; echo $?)"
$B datastore build --model "$M" --from "$TXT" -o txt.ds >txt.out 2>&1
expect_grep text_split "^txt.ds: [0-9]+ tokens of 5 documents" txt.out
$B datastore build --model "$M" --from "$TXT" --from tinystories --offset 700 -o both.ds >both.out 2>&1
expect_grep two_sources "^both.ds: [0-9]+ tokens of 18 documents" both.out

# 2. refusals
expect_rc no_action 2 "say what to do" $B datastore
expect_rc unknown_option 2 "unknown option '--bogus'" $B datastore build --bogus
expect_rc no_from 2 "--from SOURCE" $B datastore build --model "$M" -o x.ds
expect_rc bad_field 2 "--field" $B datastore build --model "$M" --from tinystories --field x -o x.ds
cp "$TXT" corpus.txt
expect_rc out_on_input 1 "corpus.txt" $B datastore build --model "$M" --from corpus.txt -o corpus.txt
expect_eq input_intact 0 "$(cmp -s "$TXT" corpus.txt; echo $?)"
expect_rc out_on_model 1 "input" $B datastore build --model "$M" --from corpus.txt -o "$M"
expect_rc unknown_dataset 1 "no_such_set" $B datastore build --model "$M" --from no_such_set -o x.ds
printf '{"prompt": "Once upon a time"}\n' >p.jsonl
expect_rc no_reference 1 "no record .* has a reference answer \(try --field prompt\)" \
    $B datastore build --model "$M" --from jsonl:p.jsonl -o x.ds
expect_eq nothing_written "" "$(ls x.ds x.ds.tmp 2>/dev/null)"

# 3. the decoder on it
run() { # DB SPEC
    $B run --model "$M" --dataset tinystories --limit 3 --max-new 64 --threads 1 --warmup 0 \
        --decoder "$2" --db "$1"
}
run ok.db rest:ds=ts.ds >/dev/null 2>ok.err
expect_eq run_exit 0 $?
expect_eq run_exact "6|6" "$(q ok.db "SELECT COUNT(*), SUM(matched) FROM samples")"
expect_eq run_hits yes "$([ "$(q ok.db "SELECT SUM(value) FROM counters WHERE name = 'hits'")" -gt 10 ] 2>/dev/null && echo yes)"
head -c 100 ts.ds >trunc.ds
run t.db rest:ds=trunc.ds >/dev/null 2>t.err
expect_eq trunc_exit 1 $?
expect_grep trunc_msg "^decbench run: trunc.ds: truncated: 100 bytes, the [0-9]+ tokens at byte 24 need" t.err
expect_eq trunc_no_db "" "$(ls t.db 2>/dev/null)"
# another vocabulary of the same size: the fingerprint (bytes 16-23) changed, checksum resealed
python3 - ts.ds other.ds <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[16] ^= 1
h = 0xcbf29ce484222325
for c in b[:-8]:
    h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
b[-8:] = struct.pack("<Q", h)
open(sys.argv[2], "wb").write(b)
PY
run f.db rest:ds=other.ds >/dev/null 2>f.err
expect_eq fingerprint_exit 1 $?
expect_grep fingerprint_msg "other.ds: byte 16: built with another vocabulary" f.err
# another vocabulary's size: a synthetic model of 32000 tokens with Llama 2's tokenizer
$B synth --config 64,160,1,4,2,32000,128 --seed 1 -o big.bin >/dev/null 2>&1
$B datastore build --model big.bin --tokenizer "$S/models/tok32000.bin" --from "$TXT" -o big.ds \
    >/dev/null 2>big.err
expect_eq big_build 0 $?
run v.db rest:ds=big.ds >/dev/null 2>v.err
expect_eq vocab_exit 1 $?
expect_grep vocab_msg "big.ds: byte 12: built for a vocabulary of 32000 tokens, the model has 512" v.err

echo "cli_datastore: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
