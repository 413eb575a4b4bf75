#!/usr/bin/python3
"""convert_checkpoint.py: a published EAGLE-1/2 head (SafeAILab/EAGLE's pytorch_model.bin) or
Medusa-1 heads (FasterDecoding/Medusa's medusa_lm_head.pt) to the safetensors layout decbench's C
loaders read (model.safetensors / medusa_lm_head.safetensors, same key names, same dtypes).

Safety: the PyTorch file is a pickle, and unpickling runs whatever code the file names. It is read
with torch.load(..., weights_only=True) (torch >= 1.13, Debian's python3-torch), whose unpickler
only builds tensors, dicts, lists and plain numbers and refuses anything else: a hostile file fails
to load instead of running code. Nothing else of the file is executed.

  convert_checkpoint.py IN OUT_DIR
IN is the .bin / .pt file or the directory holding it (with its config.json, copied to OUT_DIR).
The kind is told by the keys: fc.weight and layers.0.* make an EAGLE head, "K.J.linear.weight"
Medusa heads (with "K.L.weight", a classifier per head, as medusa_model.py; without, the legacy
kind that reuses the base model's lm_head: said on stderr, decbench does not load that kind).
Tensors keep their dtype (f32, f16 or bf16). Buffers that are not weights (rotary_emb.inv_freq)
are dropped. A NaN or infinite value, an unknown key or a missing tensor is one error line and
exit 1; OUT_DIR's file is written to a .tmp and renamed, so nothing half-written is left, and IN
is never overwritten.
"""
import json
import os
import re
import shutil
import sys

try:
    import torch
except ImportError as e:
    print(f"convert_checkpoint.py: {e}: install Debian's python3-torch (./setup.sh --train)", file=sys.stderr)
    sys.exit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heads import write_safetensors  # noqa: E402

EAGLE_KEYS = ["fc.weight", "layers.0.self_attn.q_proj.weight", "layers.0.self_attn.k_proj.weight",
              "layers.0.self_attn.v_proj.weight", "layers.0.self_attn.o_proj.weight",
              "layers.0.mlp.gate_proj.weight", "layers.0.mlp.up_proj.weight",
              "layers.0.mlp.down_proj.weight", "layers.0.post_attention_layernorm.weight"]
EAGLE_OPTIONAL = re.compile(r"^(fc\.bias|embed_tokens\.weight|layers\.\d+\.(self_attn\.[qkvo]_proj\.(weight|bias)|"
                            r"mlp\.(gate|up|down)_proj\.weight|(input|post_attention)_layernorm\.weight))$")
MEDUSA_KEY = re.compile(r"^(\d+)\.(\d+)\.(linear\.weight|linear\.bias|weight)$")


class ConvertError(Exception):
    pass


def find_input(path):
    if os.path.isdir(path):
        for name in ("pytorch_model.bin", "medusa_lm_head.pt"):
            if os.path.exists(os.path.join(path, name)):
                return os.path.join(path, name), path
        raise ConvertError(f"{path}: holds neither pytorch_model.bin nor medusa_lm_head.pt")
    return path, os.path.dirname(path)


def convert(src, out_dir):
    """Returns (kind, output file)."""
    try:
        sd = torch.load(src, map_location="cpu", weights_only=True)
    except Exception as e:  # the restricted unpickler's refusal, or a truncated file
        raise ConvertError(f"{src}: not a loadable weights-only PyTorch file: {str(e).splitlines()[0]}")
    if not isinstance(sd, dict):
        raise ConvertError(f"{src}: holds a {type(sd).__name__}, expected a state dict")
    tensors = {}
    for k, v in sd.items():
        k = k[len("module."):] if k.startswith("module.") else k
        if k.endswith("rotary_emb.inv_freq"):
            continue
        if not isinstance(v, torch.Tensor):
            raise ConvertError(f"{src}: entry {k} is a {type(v).__name__}, not a tensor")
        if v.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            raise ConvertError(f"{src}: tensor {k} has dtype {v.dtype}, expected f32, f16 or bf16")
        if not torch.isfinite(v.float()).all():
            raise ConvertError(f"{src}: tensor {k} holds a NaN or infinite value")
        tensors[k] = v
    if "fc.weight" in tensors:
        kind, name = "eagle", "model.safetensors"
        for k in EAGLE_KEYS:
            if k not in tensors:
                raise ConvertError(f"{src}: EAGLE head without tensor {k}")
        for k in tensors:
            if k not in EAGLE_KEYS and not EAGLE_OPTIONAL.match(k):
                raise ConvertError(f"{src}: unknown tensor {k} for an EAGLE head")
    elif tensors and all(MEDUSA_KEY.match(k) for k in tensors):
        kind, name = "medusa", "medusa_lm_head.safetensors"
        if not any(MEDUSA_KEY.match(k).group(3) == "weight" for k in tensors):
            print(f"convert_checkpoint.py: {src}: Medusa heads without their own classifier (the legacy "
                  "kind, which reuses the base model's lm_head); decbench loads only heads with one",
                  file=sys.stderr)
    else:
        bad = next((k for k in tensors if not MEDUSA_KEY.match(k)), None)
        raise ConvertError(f"{src}: neither an EAGLE head (no fc.weight) nor Medusa heads (key {bad})")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, name)
    if os.path.abspath(out) == os.path.abspath(src):
        raise ConvertError(f"{out}: the output would overwrite the input")
    write_safetensors(out, tensors, {"format": "pt", "converted_from": os.path.basename(src)})
    return kind, out


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) != 3:
        print("usage: convert_checkpoint.py IN OUT_DIR (IN: pytorch_model.bin, medusa_lm_head.pt or "
              "their directory; --help for more)", file=sys.stderr)
        return 2
    try:
        src, src_dir = find_input(argv[1])
        kind, out = convert(src, argv[2])
        cfg_in = os.path.join(src_dir, "config.json")
        cfg_out = os.path.join(argv[2], "config.json")
        if os.path.exists(cfg_in) and os.path.abspath(cfg_in) != os.path.abspath(cfg_out):
            with open(cfg_in) as f:
                json.load(f)  # a config that is not JSON is an error now, not at load time
            shutil.copyfile(cfg_in, cfg_out)
        elif not os.path.exists(cfg_out):
            print(f"convert_checkpoint.py: note: no config.json beside {src}: put the published one in "
                  f"{argv[2]}", file=sys.stderr)
    except (ConvertError, OSError, ValueError) as e:
        print(f"convert_checkpoint.py: {e}", file=sys.stderr)
        return 1
    print(f"{kind}: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
