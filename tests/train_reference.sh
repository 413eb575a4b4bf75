#!/usr/bin/env bash
# train_reference.sh: train/llama2c.py's PyTorch forward of a llama2.c target (the features the
# heads are trained on come from it) computes what decbench computes: for both shipped models
# and a few prompts (none of them an evaluated prompt), its greedy continuation is decbench
# generate's token for token (compared as the text decbench detokenize makes of the reference's
# ids), and its logits of the whole sequence agree with decbench's (tests/train_logits.c, one
# causal pass) within 1e-4 x max(1, |logit|). The trained heads' files reproduce their
# reference.tsv (train/check_heads.py). Needs Debian's python3-torch and python3-numpy (CI has
# neither): without them the test says so and skips (exit 77). DECBENCH_PYTHON names the
# interpreter (default: /usr/bin/python3, then python3 on the PATH).
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} SRC=${DECBENCH_SOURCE:?} LOGITS=${DECBENCH_TRAIN_LOGITS:?}
T=${DECBENCH_TEST_TMP:-/tmp/decbench_train_reference}
mkdir -p "$T" && cd "$T" || exit 1
PY=
for p in ${DECBENCH_PYTHON:-/usr/bin/python3 python3}; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, numpy' >/dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    echo "SKIP: no python3 with torch and numpy (Debian's python3-torch, python3-numpy: ./setup.sh --train)"
    exit 77
fi

for name in stories260K llama2xs; do
    M=$S/models/$name.bin
    i=0
    for prompt in "" "The dog ran" "Tom and Sue found a big box" "A little bird sat on a tree. It"; do
        i=$((i + 1))
        ids=$($B tokenize --model "$M" --text "$prompt" --bos)
        ref=$($PY "$SRC/train/check_target.py" --model "$M" --tokens "$ids" -n 100)
        [ -n "$ref" ] || { bad "$name prompt $i: no reference output"; continue; }
        want=$($B detokenize --model "$M" --ids "$ref")
        got=$($B generate --model "$M" --prompt "$prompt" -n 100 2>/dev/null)
        expect_eq "$name greedy prompt $i" "$want" "$got"
        "$LOGITS" "$M" "$ref" >logits.txt || { bad "$name prompt $i: train_logits failed"; continue; }
        if out=$($PY "$SRC/train/check_target.py" --model "$M" --tokens "$ref" --logits logits.txt 2>&1); then
            ok
        else
            bad "$name logits prompt $i: $out"
        fi
    done
done

for dir in "$SRC"/tests/data/heads/*/; do
    [ -f "$dir/reference.tsv" ] || continue
    if out=$($PY "$SRC/train/check_heads.py" --models "$S/models" "$dir" 2>&1); then
        ok
    else
        bad "$(basename "$dir"): $out"
    fi
done
echo "train_reference: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
