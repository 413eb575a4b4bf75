#!/usr/bin/env bash
# train_convert.sh: train/convert_checkpoint.py turns published-style PyTorch files into the
# safetensors decbench loads, and refuses bad ones with one error line and no output: an EAGLE
# pytorch_model.bin (f16, with the inv_freq buffer older files carry) and Medusa-1's
# medusa_lm_head.pt (bf16) made here from the committed test heads convert to the same key names,
# shapes, dtypes and values; a pickle that would run code (os.system) is refused by the
# weights-only unpickler and runs nothing; a NaN, a truncated file and an unknown key are refused.
# Needs Debian's python3-torch (CI lacks it): skips (exit 77) without it.
set -u
. "$(dirname "$0")/lib_cli.sh"
SRC=${DECBENCH_SOURCE:?}
T=${DECBENCH_TEST_TMP:-/tmp/decbench_train_convert}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
PY=
for p in ${DECBENCH_PYTHON:-/usr/bin/python3 python3}; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, numpy' >/dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    echo "SKIP: no python3 with torch and numpy (Debian's python3-torch, python3-numpy: ./setup.sh --train)"
    exit 77
fi
CONV=$SRC/train/convert_checkpoint.py
E=$SRC/tests/data/heads/stories260K-eagle M=$SRC/tests/data/heads/stories260K-medusa

# the published-style inputs, from the committed heads
$PY - "$SRC/train" "$E" "$M" <<'PYEOF' || { echo "FAIL: could not make the inputs"; exit 1; }
import os, pickle, sys, torch
sys.path.insert(0, sys.argv[1])
from heads import read_safetensors
e = {k: torch.from_numpy(v).half() for k, v in read_safetensors(sys.argv[2] + "/model.safetensors").items()}
e["layers.0.self_attn.rotary_emb.inv_freq"] = torch.ones(4)
os.makedirs("eagle_pt", exist_ok=True)
torch.save(e, "eagle_pt/pytorch_model.bin")
open("eagle_pt/config.json", "w").write(open(sys.argv[2] + "/config.json").read())
m = {k: torch.from_numpy(v).bfloat16() for k, v in read_safetensors(sys.argv[3] + "/medusa_lm_head.safetensors").items()}
torch.save(m, "medusa_lm_head.pt")
class Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))
torch.save({"fc.weight": Evil()}, "evil.bin")
n = dict(e); n["fc.weight"] = n["fc.weight"].clone(); n["fc.weight"][0, 0] = float("nan")
torch.save(n, "nan.bin")
u = dict(e); u["layers.0.mystery.weight"] = torch.zeros(2)
torch.save(u, "unknown.bin")
raw = open("eagle_pt/pytorch_model.bin", "rb").read()
open("truncated.bin", "wb").write(raw[: len(raw) // 2])
PYEOF

out=$($PY "$CONV" eagle_pt out_e 2>&1); expect_eq eagle_rc "eagle: wrote out_e/model.safetensors" "$out"
out=$($PY "$CONV" medusa_lm_head.pt out_m 2>m.err); expect_eq medusa_rc "medusa: wrote out_m/medusa_lm_head.safetensors" "$out"
expect_grep medusa_no_config "no config.json beside medusa_lm_head.pt" m.err
[ -f out_e/config.json ] && ok || bad "config.json not copied"
# same names, shapes and values (f16 / bf16 of the originals), dtypes kept
out=$($PY - "$SRC/train" "$E" "$M" <<'PYEOF' 2>&1
import json, struct, sys, numpy as np
sys.path.insert(0, sys.argv[1])
from heads import read_safetensors
def dtypes(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]
    return {k: v["dtype"] for k, v in json.loads(b[8:8 + n]).items() if k != "__metadata__"}
for src, got, dt, tol in ((sys.argv[2] + "/model.safetensors", "out_e/model.safetensors", "F16", 1e-3),
                          (sys.argv[3] + "/medusa_lm_head.safetensors", "out_m/medusa_lm_head.safetensors", "BF16", 1e-2)):
    a, b = read_safetensors(src), read_safetensors(got)
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    assert set(dtypes(got).values()) == {dt}, dtypes(got)
    for k in a:
        assert a[k].shape == b[k].shape, k
        assert np.allclose(a[k], b[k], rtol=tol, atol=tol), k
print("same")
PYEOF
)
expect_eq converted_values same "$out"

# refused: one line, exit 1, no output file
for case in evil:"not a loadable weights-only" nan:"NaN or infinite" unknown:"unknown tensor layers.0.mystery.weight" \
            truncated:"not a loadable weights-only"; do
    f=${case%%:*} pat=${case#*:}
    err=$($PY "$CONV" "$f.bin" "out_$f" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && grep -q -- "$pat" <<<"$err" && [ "$(wc -l <<<"$err")" -eq 1 ] &&
       [ ! -e "out_$f/model.safetensors" ] && [ ! -e "out_$f/model.safetensors.tmp" ]; then ok; else bad "$f: rc=$rc $err"; fi
done
[ ! -e pwned ] && ok || bad "the hostile pickle ran code"
echo "train_convert: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
