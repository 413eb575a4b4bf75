#!/usr/bin/python3
"""check_target.py: the reference forward's greedy continuation (llama2c.py), as token ids, for
tests/train_reference.sh to compare with `decbench generate`; and, with --logits FILE, a check
that the reference's logits agree with a dump of decbench's.

  check_target.py --model M --tokens "1 291 400" -n 60
      prints the prompt ids and the greedy continuation's ids (stopping after the end token 1, as
      decbench and llama2.c stop), one line, space-separated.
  check_target.py --model M --tokens "..." --logits DUMP [--tol 1e-4]
      DUMP: one line per position "pos v0 v1 ... v{vocab-1}" (decbench's logits of that row after
      a causal pass over the tokens); exit 1 with the worst position and id when a value differs
      by more than tol x max(1, |value|).
Exit 77 when torch or numpy is missing (the test's skip code).
"""
import argparse
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"check_target.py: {e}: install Debian's python3-torch and python3-numpy "
          "(./setup.sh --train)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama2c import BOS, Target  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", required=True, help="prompt ids, space-separated (BOS first)")
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--logits")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    torch.set_num_threads(1)
    t = Target(a.model)
    ids = [int(x) for x in a.tokens.split()]
    if a.logits:
        logits, _, _ = t(torch.tensor([ids]))
        worst = (0.0, -1, -1)
        rows = 0
        with open(a.logits) as f:
            for line in f:
                v = line.split()
                if not v:
                    continue
                p = int(v[0])
                got = np.array([float(x) for x in v[1:]], dtype=np.float64)
                ref = logits[0, p].double().numpy()
                if got.shape != ref.shape:
                    print(f"{a.logits}: position {p}: {got.size} values, expected {ref.size}", file=sys.stderr)
                    return 1
                err = np.abs(got - ref) / np.maximum(1.0, np.abs(ref))
                i = int(err.argmax())
                if err[i] > worst[0]:
                    worst = (float(err[i]), p, i)
                rows += 1
        if rows != len(ids):
            print(f"{a.logits}: {rows} positions, expected {len(ids)}", file=sys.stderr)
            return 1
        print(f"logits of {rows} positions: largest difference {worst[0]:.3g} (position {worst[1]}, id {worst[2]})")
        return 1 if worst[0] > a.tol else 0
    out = t.generate(torch.tensor([ids]), a.n, 0.0)[0].tolist()
    gen = out[len(ids):]
    if BOS in gen:
        gen = gen[:gen.index(BOS) + 1]
    print(" ".join(str(x) for x in ids + gen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
