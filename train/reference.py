"""reference.py: reference.tsv, the PyTorch forward's top-5 of a trained head on a fixed token
sequence, which decbench's C loaders compare against (same top-1 ids, logits within 1e-4
relative); and the check that a head directory's files still give its reference.tsv.
"""
import json
import os

import torch

from heads import EagleHead, MedusaHeads, read_safetensors
from llama2c import BOS, Target


def reference_sequence(target, n):
    """BOS and the target's greedy continuation: n tokens, a fixed and easily rebuilt sequence."""
    return target.generate(torch.tensor([[BOS]]), n - 1, 0.0)[0]


def fmt_top(logits, k=5):
    v, i = logits.topk(k)
    return "\t".join(f"{int(a)}\t{float(b):.9g}" for a, b in zip(i, v))


@torch.no_grad()
def write_eagle_reference(path, target, head, target_name, n=48):
    seq = reference_sequence(target, n)
    _, f, _ = target(seq[None])
    R = n - 1
    out, _ = head(f[:, :R], target.embed[seq[None, 1:]], torch.arange(R)[None])
    lg = target.classify(out[0])
    with open(path, "w") as fh:
        fh.write(f"# EAGLE head reference: PyTorch forward (train/heads.py) of this directory's head on "
                 f"target {target_name}\n")
        fh.write(f"# tokens ({n}; BOS then the target's greedy continuation): "
                 f"{' '.join(str(int(t)) for t in seq)}\n")
        fh.write("# fed: one causal pass of the target over all tokens at positions 0.."
                 f"{n - 1}; f_i = its hidden state after the final norm at position i. Head row i "
                 f"(i = 0..{R - 1}) = fc(cat(target_embedding(tokens[i+1]), f_i)) at RoPE position i, "
                 "attending to head rows 0..i (causal; the same as drafting row by row with the "
                 "head's KV cache); RoPE as Hugging Face's Llama (rotate_half: pairs (j, j + head_dim/2), "
                 "theta^(-2j/head_dim)), not the llama2.c target's pairs; no final norm; logits = target "
                 "classifier(head output row i), the head's guess of tokens[i+2]\n")
        fh.write("# columns: row\tnext_token(tokens[i+1])\tid1\tlogit1\t...\tid5\tlogit5 "
                 "(top-5 by logit, in order)\n")
        for i in range(R):
            fh.write(f"{i}\t{int(seq[i + 1])}\t{fmt_top(lg[i])}\n")


@torch.no_grad()
def write_medusa_reference(path, target, heads, target_name, n=48):
    seq = reference_sequence(target, n)
    _, f, _ = target(seq[None])
    lg = heads(f[0])  # [K, n, V]
    with open(path, "w") as fh:
        fh.write(f"# Medusa heads reference: PyTorch forward (train/heads.py) of this directory's heads "
                 f"on target {target_name}\n")
        fh.write(f"# tokens ({n}; BOS then the target's greedy continuation): "
                 f"{' '.join(str(int(t)) for t in seq)}\n")
        fh.write(f"# fed: one causal pass of the target over all tokens at positions 0..{n - 1}; f_t = "
                 "its hidden state after the final norm at position t; head k (0-based) reads f_t and "
                 "guesses tokens[t+k+2]\n")
        fh.write("# columns: pos\thead\tid1\tlogit1\t...\tid5\tlogit5 (top-5 by logit, in order)\n")
        for t in range(n):
            for k in range(heads.n_heads):
                fh.write(f"{t}\t{k}\t{fmt_top(lg[k, t])}\n")



def load_head_dir(d):
    """('eagle', EagleHead) or ('medusa', MedusaHeads) and the config, from a head directory in the
    published layout."""
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    if os.path.exists(os.path.join(d, "model.safetensors")):
        head = EagleHead.from_config(cfg)
        head.load_published(read_safetensors(os.path.join(d, "model.safetensors")))
        return "eagle", head.eval(), cfg
    if os.path.exists(os.path.join(d, "medusa_lm_head.safetensors")):
        t = read_safetensors(os.path.join(d, "medusa_lm_head.safetensors"))
        heads = MedusaHeads(cfg["hidden_size"], cfg["vocab_size"], cfg["medusa_num_heads"], cfg["medusa_num_layers"])
        heads.load_published(t)
        return "medusa", heads.eval(), cfg
    raise ValueError(f"{d}: neither model.safetensors (EAGLE) nor medusa_lm_head.safetensors (Medusa)")


def read_reference(path):
    """(tokens, rows): rows are the data lines split on tabs."""
    tokens, rows = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("# tokens"):
                tokens = [int(x) for x in line.split(":", 1)[1].split()]
            elif line.strip() and not line.startswith("#"):
                rows.append(line.rstrip("\n").split("\t"))
    if tokens is None:
        raise ValueError(f"{path}: no '# tokens' line")
    return tokens, rows


@torch.no_grad()
def check_dir(d, models, tol=1e-4):
    """Recomputes d/reference.tsv from d's files and the target named in its config; returns a list
    of differences (empty when it agrees). The tolerance is the target logits check's
    (tests/train_reference.sh): PyTorch's float32 sums differ by CPU, and 1e-5 failed by 1.5e-5 on
    a Zen 5 core for a reference written on another machine."""
    kind, head, cfg = load_head_dir(d)
    target = Target(os.path.join(models, cfg["base_model_name_or_path"]))
    tokens, rows = read_reference(os.path.join(d, "reference.tsv"))
    seq = torch.tensor(tokens)
    _, f, _ = target(seq[None])
    if kind == "eagle":
        R = len(tokens) - 1
        out, _ = head(f[:, :R], target.embed[seq[None, 1:]], torch.arange(R)[None])
        lg = {(i,): target.classify(out[0, i]) for i in range(R)}
        keyn = 1
    else:
        m = head(f[0])
        lg = {(t, k): m[k, t] for t in range(len(tokens)) for k in range(head.n_heads)}
        keyn = 2
    diffs = []
    if len(rows) != len(lg):
        diffs.append(f"{len(rows)} rows, expected {len(lg)}")
    for r in rows:
        key = tuple(int(x) for x in r[:keyn])
        want = lg.get(key)
        if want is None:
            diffs.append(f"row {key}: not expected")
            continue
        first = keyn + (1 if kind == "eagle" else 0)
        ids = [int(x) for x in r[first::2]]
        vals = [float(x) for x in r[first + 1::2]]
        v, i = want.topk(len(ids))
        if ids[0] != int(i[0]):
            diffs.append(f"row {key}: top-1 {ids[0]} in the file, {int(i[0])} computed")
        for a, b in zip(ids, vals):
            c = float(want[a])
            if abs(c - b) > tol * max(1.0, abs(b)):
                diffs.append(f"row {key}: logit of {a} {b} in the file, {c} computed")
    return diffs


def rewrite_reference(d, models):
    kind, head, cfg = load_head_dir(d)
    target = Target(os.path.join(models, cfg["base_model_name_or_path"]))
    path = os.path.join(d, "reference.tsv")
    if kind == "eagle":
        write_eagle_reference(path, target, head, cfg["base_model_name_or_path"])
    else:
        write_medusa_reference(path, target, head, cfg["base_model_name_or_path"])
