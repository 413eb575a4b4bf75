#!/usr/bin/python3
"""train_heads.py: trains an EAGLE-1/2 head and Medusa-1 heads for a llama2.c target on the
target's own outputs and writes them in the published formats (see heads.py), with a
reference.tsv of the PyTorch forward for decbench's loaders to compare against.

Training data (train/README.md says why): stories the target samples from BOS at temperature 1,
and greedy continuations of short prefixes of other sampled stories; each sequence is cut after
its first BOS (llama2.c's end of story), and any sequence whose text starts with one of the
evaluated prompts (--exclude, datasets/tinystories/prompts_once_upon_a_time.jsonl) is dropped.
The held-out set is greedy continuations made with another seed, so accuracies compare the heads'
top-1 with the target's greedy token, which is what greedy verification accepts.

Losses as the references: EAGLE (eagle/train/main.py) 1.0 x SmoothL1(predicted feature, the next
feature) + 0.1 x cross-entropy of the target's classifier on the prediction against the target's
softmax at the next feature, uniform noise on the input features ((U - 0.5) x 0.2 x 512 / length);
Medusa (medusa/train/train_legacy.py) the sum over heads of the cross-entropy of head k at
position t against the token at t + k + 2.

Everything is deterministic given --seed on one thread (torch.set_num_threads(1): the machine is
shared). Example:
  /usr/bin/python3 train/train_heads.py --target ../shared/models/stories260K.bin \\
      --exclude ../shared/datasets/tinystories/prompts_once_upon_a_time.jsonl \\
      --eagle-out tests/data/heads/stories260K-eagle --medusa-out tests/data/heads/stories260K-medusa
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heads import EagleHead, MedusaHeads, write_safetensors  # noqa: E402
from reference import write_eagle_reference, write_medusa_reference  # noqa: E402
from llama2c import BOS, Target, Tokenizer  # noqa: E402


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---- data --------------------------------------------------------------------------------------

def story_len(row):
    """Tokens kept of a generated row: up to and including its first BOS after position 0 (the
    target's own end-of-story prediction is a token worth learning), else all."""
    for i in range(1, len(row)):
        if row[i] == BOS:
            return i + 1
    return len(row)


def load_excluded(path):
    if not path:
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line)["prompt"].strip())
    return out


def make_data(target, tok, n_sampled, n_greedy, length, seed, excluded, batch=64):
    """Returns (tokens [N, length] int64, lengths [N], n_dropped)."""
    gen = torch.Generator().manual_seed(seed)
    rows, kept_len, dropped = [], [], 0

    def keep(t):
        nonlocal dropped
        for r in t.tolist():
            n = story_len(r)
            text = tok.decode(r[1:n])
            if any(text.startswith(p) for p in excluded):
                dropped += 1
                continue
            rows.append(r + [0] * (length - len(r)))
            kept_len.append(n)

    bos = lambda b: torch.full((b, 1), BOS, dtype=torch.long)  # noqa: E731
    done = 0
    while done < n_sampled:
        b = min(batch, n_sampled - done)
        keep(target.generate(bos(b), length - 1, 1.0, gen))
        done += b
    done = 0
    while done < n_greedy:
        b = min(batch, n_greedy - done)
        # a prefix of 16..47 tokens of a fresh sampled story (past its first sentence, mostly: a
        # shorter one makes the greedy continuation start with an evaluated prompt too often),
        # then the target's greedy tokens
        k = int(torch.randint(16, 48, (1,), generator=gen))
        pre = target.generate(bos(b), k - 1, 1.0, gen)
        keep(target.generate(pre, length - k, 0.0))
        done += b
    return torch.tensor(rows, dtype=torch.long), torch.tensor(kept_len), dropped


@torch.no_grad()
def features(target, tokens, batch=64):
    out = []
    for i in range(0, len(tokens), batch):
        _, f, _ = target(tokens[i:i + batch])
        out.append(f)
    return torch.cat(out)


# ---- training ----------------------------------------------------------------------------------

def lr_at(step, steps, lr, warmup):
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def train_eagle(target, head, tokens, lengths, feats, steps, bs, lr, seed, noise=0.2):
    gen = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.AdamW(head.parameters(), lr=lr, betas=(0.9, 0.95))
    N, T = tokens.shape
    pos = torch.arange(T - 1)
    smooth = torch.nn.SmoothL1Loss(reduction="none")
    t0 = time.time()
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, max(1, steps // 20))
        idx = torch.randint(0, N, (bs,), generator=gen)
        tk, ln, f = tokens[idx], lengths[idx], feats[idx]
        # row i: feature f_i and token x_{i+1}; targets f_{i+1}; valid while i + 1 < length
        fin = f[:, :-1]
        if noise:
            fin = fin + (torch.rand(fin.shape, generator=gen) - 0.5) * noise * 512 / T
        emb = target.embed[tk[:, 1:]]
        tgt = f[:, 1:]
        mask = (pos[None, :] + 1 < ln[:, None]).float()[..., None]
        out, _ = head(fin, emb, pos[None].expand(bs, -1))
        vloss = (smooth(out, tgt).mean(-1, keepdim=True) * mask).sum() / (mask.sum() + 1e-5)
        with torch.no_grad():
            tp = torch.softmax(target.classify(tgt), -1)
        logp = torch.log_softmax(target.classify(out), -1)
        ploss = -((tp * logp).sum(-1, keepdim=True) * mask).sum() / (mask.sum() + 1e-5)
        loss = 1.0 * vloss + 0.1 * ploss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(head.parameters(), 0.5)
        opt.step()
        if step % 200 == 0 or step == steps - 1:
            log(f"eagle step {step} vloss {vloss.item():.4f} ploss {ploss.item():.4f} "
                f"({time.time() - t0:.0f} s)")


def train_medusa(target, heads, tokens, lengths, feats, steps, bs, lr, seed):
    """Rows are independent for Medusa (each head reads one feature), so a batch is bs random
    positions t of any sequence whose t + K + 1 is still inside the story (every head has a
    label)."""
    gen = torch.Generator().manual_seed(seed + 2)
    opt = torch.optim.AdamW(heads.parameters(), lr=lr, betas=(0.9, 0.95))
    N, T = tokens.shape
    K = heads.n_heads
    seq, pos = torch.nonzero(torch.arange(T)[None, :] + K + 1 < lengths[:, None], as_tuple=True)
    t0 = time.time()
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, max(1, steps // 20))
        idx = torch.randint(0, len(seq), (bs,), generator=gen)
        s, p = seq[idx], pos[idx]
        logits = heads(feats[s, p])  # [K, bs, V]
        loss, parts = 0.0, []
        for k in range(K):
            lk = torch.nn.functional.cross_entropy(logits[k], tokens[s, p + k + 2])
            loss = loss + lk
            parts.append(lk.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0 or step == steps - 1:
            log(f"medusa step {step} losses {' '.join(f'{p:.3f}' for p in parts)} ({time.time() - t0:.0f} s)")


# ---- held-out accuracy -------------------------------------------------------------------------

@torch.no_grad()
def eagle_accuracy(target, head, tokens, lengths, feats, depth=5):
    """Per draft step k (0-based): drafting from every start position p of each held-out greedy
    sequence as decbench does (head rows 0..p from the target's features, then the head's own
    feature and argmax token), top-1 of the step against the target's greedy token at p + 2 + k.
    Returns (conditional accuracy per step: P(step k right | steps < k right), cumulative: P(steps
    0..k all right))."""
    right = np.zeros(depth)
    tried = np.zeros(depth)
    allright = np.zeros(depth)
    starts = np.zeros(depth)
    for s in range(len(tokens)):
        n = int(lengths[s])
        if n < 4:
            continue
        tk, f = tokens[s, :n], feats[s, :n]
        greedy = target.classify(f).argmax(-1)  # greedy[i]: the target's token at i + 1
        R = n - 1  # rows 0..n-2 from the target
        out, (K, V) = head(f[None, :R], target.embed[tk[None, 1:R + 1]], torch.arange(R)[None])
        P = R - 1  # starts p = 0..R-2 (p + 1 has a feature to compare against)
        p = torch.arange(P)
        hcur = out[0, :P]  # head output of row p: its guess of f_{p+1}
        Kp, Vp = K.expand(P, -1, -1, -1), V.expand(P, -1, -1, -1)
        ok = torch.ones(P, dtype=torch.bool)
        for k in range(depth):
            y = target.classify(hcur).argmax(-1)  # draft token for position p + 2 + k
            valid = p + 2 + k <= n - 1
            g = greedy[(p + 1 + k).clamp(max=n - 1)]
            hit = (y == g) & valid
            tried[k] += (ok & valid).sum().item()
            right[k] += (ok & hit).sum().item()
            starts[k] += valid.sum().item()
            ok = ok & hit
            allright[k] += ok.sum().item()
            if k + 1 == depth:
                break
            # next row: feature hcur, token y, position p + 1 + k; sees true rows 0..p and the chain
            M = Kp.shape[2]
            mask = torch.zeros(P, 1, M + 1, dtype=torch.bool)
            mask[:, 0, :R] = torch.arange(R)[None, :] <= p[:, None]
            mask[:, 0, R:] = True
            # starts whose row would sit past the context are not counted (valid is False): any
            # position in range does for them
            rpos = (p + 1 + k).clamp(max=head.max_pos - 1)
            o, (Kp, Vp) = head(hcur[:, None], target.embed[y][:, None], rpos[:, None], mask, (Kp, Vp))
            hcur = o[:, 0]
    return right / np.maximum(tried, 1), allright / np.maximum(starts, 1)


@torch.no_grad()
def medusa_accuracy(heads, tokens, lengths, feats, topk=(1, 5)):
    """Per head k: top-1 (and top-5) of head k at position t against the greedy token at t + k + 2."""
    K = heads.n_heads
    acc = {t: np.zeros(K) for t in topk}
    cnt = np.zeros(K)
    for s in range(len(tokens)):
        n = int(lengths[s])
        lg = heads(feats[s, :n])  # [K, n, V]
        for k in range(K):
            if n <= k + 2:
                continue
            lab = tokens[s, k + 2:n]
            top = lg[k, :n - (k + 2)].topk(max(topk), -1).indices
            for t in topk:
                acc[t][k] += (top[:, :t] == lab[:, None]).any(-1).sum().item()
            cnt[k] += n - (k + 2)
    return {t: acc[t] / np.maximum(cnt, 1) for t in topk}


def write_readme(d, kind, tname, command, data_line, acc_line):
    files = ("config.json, model.safetensors (cnets1.Model's keys; no embed_tokens.weight: the "
             "target's embedding is used)") if kind == "eagle" else \
        "config.json, medusa_lm_head.safetensors (medusa_model.py's medusa_head keys)"
    what = ("an EAGLE-1/2 head (one decoder layer, fc over cat(embedding, feature))" if kind == "eagle"
            else "Medusa-1 heads (one ResBlock and a classifier each)")
    with open(os.path.join(d, "README.md"), "w") as fh:
        fh.write(f"# {os.path.basename(os.path.normpath(d))}: {what} for {tname}\n\n"
                 f"Trained by train/train_heads.py on {tname}'s own outputs (train/README.md: data, losses); "
                 f"test data for decbench's loaders: {files}, and reference.tsv (the PyTorch forward's "
                 f"top-5 on the sequence its header gives; tests/train_reference.sh checks that these files "
                 f"still reproduce it). f32 tensors.\n\n"
                 f"Command (from the repository root, ../shared beside it; deterministic on one thread):\n\n"
                 f"    /usr/bin/python3 {command}\n\n"
                 f"{data_line}\n\n{acc_line}\n")


# ---- main --------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", required=True, help="llama2.c checkpoint")
    ap.add_argument("--tokenizer", help="llama2.c tokenizer (default tok<vocab>.bin beside the target)")
    ap.add_argument("--exclude", help="JSONL of evaluated prompts (field prompt): sequences starting "
                    "with one are dropped")
    ap.add_argument("--eagle-out", help="directory for the EAGLE head")
    ap.add_argument("--medusa-out", help="directory for the Medusa heads")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sampled", type=int, default=1024, help="sampled stories (T = 1)")
    ap.add_argument("--greedy", type=int, default=1024, help="greedy continuations")
    ap.add_argument("--heldout", type=int, default=64, help="held-out greedy continuations")
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--eagle-steps", type=int, default=2000)
    ap.add_argument("--medusa-steps", type=int, default=2000)
    ap.add_argument("--bs", type=int, default=4, help="EAGLE batch: sequences (the reference's 4)")
    ap.add_argument("--medusa-bs", type=int, default=256, help="Medusa batch: positions")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--medusa-heads", type=int, default=4)
    ap.add_argument("--no-noise", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", help="keep the generated data in this .npz and reuse it when the "
                    "data options match (only saves time: the data are deterministic)")
    ap.add_argument("--report", help="append the held-out accuracies (markdown) to this file")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    target = Target(a.target)
    c = target.cfg
    tname = os.path.basename(a.target)
    tokp = a.tokenizer or os.path.join(os.path.dirname(a.target), f"tok{c.vocab_size}.bin")
    tok = Tokenizer(tokp, c.vocab_size)
    length = min(a.length, c.seq_len)
    excluded = load_excluded(a.exclude)
    t0 = time.time()
    key = f"{tname} seed {a.seed} sampled {a.sampled} greedy {a.greedy} heldout {a.heldout} length {length} exclude {len(excluded)}"
    if a.cache and os.path.exists(a.cache) and str(np.load(a.cache)["key"]) == key:
        z = np.load(a.cache)
        tokens, lengths, ho_tok, ho_len = (torch.from_numpy(z[k]) for k in ("tokens", "lengths", "ho_tok", "ho_len"))
        dropped, ho_drop = int(z["dropped"]), int(z["ho_drop"])
    else:
        tokens, lengths, dropped = make_data(target, tok, a.sampled, a.greedy, length, a.seed, excluded)
        ho_tok, ho_len, ho_drop = make_data(target, tok, 0, a.heldout, length, a.seed + 1000, excluded)
        if a.cache:
            np.savez(a.cache, key=key, tokens=tokens.numpy(), lengths=lengths.numpy(), ho_tok=ho_tok.numpy(),
                     ho_len=ho_len.numpy(), dropped=dropped, ho_drop=ho_drop)
    data_line = (f"Data: {len(tokens)} sequences, {int(lengths.sum())} tokens ({dropped} more dropped: they "
                 f"start with an evaluated prompt); held-out: {len(ho_tok)} greedy continuations ({ho_drop} dropped).")
    log(f"{data_line} {time.time() - t0:.0f} s")
    # the command that remakes the heads: --cache and --report change no bit of them
    args, skip = [], False
    for x in sys.argv[1:]:
        if skip:
            skip = False
        elif x in ("--cache", "--report"):
            skip = True
        elif not x.startswith(("--cache=", "--report=")):
            args.append(x)
    command = " ".join(["train/train_heads.py"] + args)
    feats, ho_feats = features(target, tokens), features(target, ho_tok)
    meta = {"target": tname, "seed": a.seed, "command": command}
    lines = []
    if a.eagle_out:
        torch.manual_seed(a.seed)
        head = EagleHead(c.dim, c.hidden_dim, c.n_heads, c.n_kv_heads, eps=c.norm_eps, theta=c.rope_theta,
                         max_pos=c.seq_len)
        train_eagle(target, head, tokens, lengths, feats, a.eagle_steps, a.bs, a.lr, a.seed,
                    0.0 if a.no_noise else 0.2)
        head.eval()
        os.makedirs(a.eagle_out, exist_ok=True)
        with open(os.path.join(a.eagle_out, "config.json"), "w") as fh:
            json.dump(head.config(c.vocab_size, tname), fh, indent=2)
            fh.write("\n")
        write_safetensors(os.path.join(a.eagle_out, "model.safetensors"), head.published_state(),
                          {"format": "pt", **meta})
        write_eagle_reference(os.path.join(a.eagle_out, "reference.tsv"), target, head, tname)
        cond, cum = eagle_accuracy(target, head, ho_tok, ho_len, ho_feats)
        s = (f"EAGLE {tname}: held-out top-1 per draft step (given the earlier steps right): "
             f"{' '.join(f'{x:.3f}' for x in cond)}; all steps right up to k: {' '.join(f'{x:.3f}' for x in cum)}")
        log(s)
        lines.append(s)
        write_readme(a.eagle_out, "eagle", tname, command, data_line, s)
    if a.medusa_out:
        torch.manual_seed(a.seed)
        heads = MedusaHeads(c.dim, c.vocab_size, a.medusa_heads, 1)
        with torch.no_grad():  # start from the target's classifier (the reference starts at random)
            for h in heads.heads:
                h[-1].weight.copy_(target.cls)
        train_medusa(target, heads, tokens, lengths, feats, a.medusa_steps, a.medusa_bs, a.lr, a.seed)
        heads.eval()
        os.makedirs(a.medusa_out, exist_ok=True)
        with open(os.path.join(a.medusa_out, "config.json"), "w") as fh:
            json.dump(heads.config(tname), fh, indent=2)
            fh.write("\n")
        write_safetensors(os.path.join(a.medusa_out, "medusa_lm_head.safetensors"), heads.published_state(),
                          {"format": "pt", **meta})
        write_medusa_reference(os.path.join(a.medusa_out, "reference.tsv"), target, heads, tname)
        acc = medusa_accuracy(heads, ho_tok, ho_len, ho_feats)
        s = (f"Medusa {tname}: held-out top-1 per head (head k guesses token t+k+2): "
             f"{' '.join(f'{x:.3f}' for x in acc[1])}; top-5: {' '.join(f'{x:.3f}' for x in acc[5])}")
        log(s)
        lines.append(s)
        write_readme(a.medusa_out, "medusa", tname, command, data_line, s)
    if a.report:
        with open(a.report, "a") as fh:
            for s in lines:
                fh.write(f"- {s}\n")
    log(f"total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
