#!/usr/bin/env bash
# download.sh: fetch the benchmark prompt files into DEST, laid out like ../shared/datasets,
# for a machine without the shared data folder. Then run decbench with --data-dir DEST (or
# DECBENCH_DATASETS=DEST).
#
#   usage: datasets/download.sh DEST
#   needs: curl, gunzip, python3 (to derive the CNN/DM, WMT and TinyStories files), sha256sum
#
# NOT TESTED ONLINE: the machine this was written on has no internet access, so the URLs have
# never been fetched. They, the commits and the derivations come from
# ../shared/datasets/*/SOURCE.md. The rest of the script was dry-run with a stand-in curl that
# served the shared copies: every output file was byte-identical to ../shared/datasets.
# Every file is checked against the sha256 of the copy decbench was tested with; a mismatch is
# reported (the loader accepts the file, but the golden hashes in tests/test_datasets.c would
# then not match).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 DEST   (then: decbench --data-dir DEST ...)" >&2
    exit 2
fi
DEST=$1
mkdir -p "$DEST"/{humaneval,mbpp,gsm8k,mt_bench,spec_bench,cnn_dailymail,wmt_de_en,tinystories}
GH=https://raw.githubusercontent.com
mismatches=0

get() { # URL OUT
    echo "fetching $2" >&2
    curl -fsSL --retry 3 -o "$2" "$1"
}

check() { # FILE SHA256
    local got
    got=$(sha256sum "$1" | cut -d' ' -f1)
    if [ "$got" != "$2" ]; then
        echo "WARNING: $1: sha256 $got, decbench was tested with $2" >&2
        mismatches=$((mismatches + 1))
    fi
}

# HumanEval (MIT): openai/human-eval, gzipped in the repo.
get "$GH/openai/human-eval/6d43fb980f9fee3c892a914eda09951f772ad10d/data/HumanEval.jsonl.gz" \
    "$DEST/humaneval/HumanEval.jsonl.gz"
gunzip -f "$DEST/humaneval/HumanEval.jsonl.gz"
check "$DEST/humaneval/HumanEval.jsonl" 1d49078ba3e2b196b9344535bef34a43021f038fad9561d6ee7c53450609a6a2

# MBPP (CC-BY-4.0 data): google-research/google-research mbpp/. The shared copy of mbpp.jsonl
# came byte for byte from patdfb/TPC-EES@30c8c572 and matches google-research@30adf0ec in
# length and sampled windows; sanitized-mbpp.json there is compact JSON of the same records
# (the loader does not care about JSON formatting).
get "$GH/google-research/google-research/30adf0ec5f35f9609c2f1d896005e184195d9146/mbpp/mbpp.jsonl" \
    "$DEST/mbpp/mbpp.jsonl"
check "$DEST/mbpp/mbpp.jsonl" ccf64ceae9c5403bf50a044cb6d505bfd2a2963ee58338ba268fd65beab92a9f
get "$GH/google-research/google-research/30adf0ec5f35f9609c2f1d896005e184195d9146/mbpp/sanitized-mbpp.json" \
    "$DEST/mbpp/sanitized-mbpp.json"
check "$DEST/mbpp/sanitized-mbpp.json" ca95deaa9a01ef0a6f439f88bcf0dd3db3563d22f22aad6cae04ebb9a8d8c8e9

# GSM8K test split (MIT): openai/grade-school-math.
get "$GH/openai/grade-school-math/3101c7d5072418e28b9008a6636bde82a006892c/grade_school_math/data/test.jsonl" \
    "$DEST/gsm8k/test.jsonl"
check "$DEST/gsm8k/test.jsonl" 3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14

# MT-bench questions (Apache-2.0): lm-sys/FastChat.
get "$GH/lm-sys/FastChat/0e6d3e4beaab66f4d3f93db72541a4abab8af28d/fastchat/llm_judge/data/mt_bench/question.jsonl" \
    "$DEST/mt_bench/question.jsonl"
check "$DEST/mt_bench/question.jsonl" 119565adbab82227089cefdb44c8d7e2cf04dc0a0ec233634c82e7d4e2a944f7

# Spec-Bench (Apache-2.0): hemingkx/Spec-Bench.
get "$GH/hemingkx/Spec-Bench/fd2c1cd7d2201ef71db4c5f4e455008f017967bf/data/spec_bench/question.jsonl" \
    "$DEST/spec_bench/question.jsonl"
check "$DEST/spec_bench/question.jsonl" 4b6d33e79484f9841c487ee87d1cf6aa8c6066f61d5d482ff09e5a007fafdf04

# CNN/DM and WMT de-en samples: derived from Spec-Bench's summarization and translation tasks
# (prefix removed from turns[0], reference[0] kept), as described in their SOURCE.md.
python3 - "$DEST" <<'EOF'
import json, sys
dest = sys.argv[1]
with open(f"{dest}/spec_bench/question.jsonl", encoding="utf-8") as f:
    recs = [json.loads(line) for line in f]
def derive(category, prefix, text_key, ref_key, out):
    with open(out, "w", encoding="utf-8") as f:
        for r in recs:
            if r["category"] != category:
                continue
            assert r["turns"][0].startswith(prefix)
            f.write(json.dumps({"question_id": r["question_id"], text_key: r["turns"][0][len(prefix):],
                                ref_key: r["reference"][0]}, ensure_ascii=False) + "\n")
derive("summarization", "Summarize: ", "article", "highlights",
       f"{dest}/cnn_dailymail/specbench_summarization.jsonl")
derive("translation", "Translate German to English: ", "de", "en",
       f"{dest}/wmt_de_en/specbench_translation.jsonl")
EOF
check "$DEST/cnn_dailymail/specbench_summarization.jsonl" d6aff83119c8325a0ad1967bd5abc24093f31625216ef200b88d103a469122f8
check "$DEST/wmt_de_en/specbench_translation.jsonl" 4909cb32ba06b6b7803979fe17ad4e9ea0578ae8ac7a80211645b1658de6560d

# TinyStories (CDLA-Sharing-1.0 data): the head of the HF validation split as vendored by
# yuninxia/moe-routing-bench, then the "Once upon a time" prompts derived from it (blocks split
# on a blank line and stripped; prompt = up to the first . ! or ?).
get "$GH/yuninxia/moe-routing-bench/bb9bb0bd461aa77cf6ab89423b758f586a6f75d1/data/tinystories_val.txt" \
    "$DEST/tinystories/tinystories_validation_head.txt"
check "$DEST/tinystories/tinystories_validation_head.txt" 5fc1fb0113df62b567fb271806cd645ce8d75f59c58ca0b764c03d3b6ff34ca6
python3 - "$DEST" <<'EOF'
import json, re, sys
dest = sys.argv[1]
with open(f"{dest}/tinystories/tinystories_validation_head.txt", encoding="utf-8") as f:
    text = f.read()
blocks = [b.strip() for b in text.split("\n\n") if b.strip().startswith("Once upon a time")]
with open(f"{dest}/tinystories/prompts_once_upon_a_time.jsonl", "w", encoding="utf-8") as f:
    for i, b in enumerate(blocks):
        m = re.search(r"[.!?]", b)
        f.write(json.dumps({"id": i, "prompt": b[:m.end()] if m else b, "paragraph": b},
                           ensure_ascii=False) + "\n")
EOF
check "$DEST/tinystories/prompts_once_upon_a_time.jsonl" b08a76ca94687921530c29e00880b1208f068bf6454604a30403e5d0c3a0bcba

if [ "$mismatches" -gt 0 ]; then
    echo "done with $mismatches checksum mismatch(es); see the warnings above" >&2
else
    echo "done: all files match; use --data-dir $DEST or DECBENCH_DATASETS=$DEST" >&2
fi
