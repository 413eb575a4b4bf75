#!/usr/bin/python3
"""check_heads.py --models DIR [--write] HEAD_DIR...: each head directory's files (config.json and the safetensors, read by
heads.py's own reader) still give its reference.tsv under the PyTorch forward; exit 1 naming the
first differences, 77 when torch or numpy is missing."""
import argparse
import os
import sys

try:
    import torch
except ImportError as e:
    print(f"check_heads.py: {e}: install Debian's python3-torch and python3-numpy (./setup.sh --train)",
          file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import check_dir, rewrite_reference  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True, help="folder of the target checkpoints")
    ap.add_argument("--write", action="store_true", help="rewrite each reference.tsv from the files "
                    "instead (after a change of the file's header, say)")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    torch.set_num_threads(1)
    rc = 0
    for d in a.dirs:
        if a.write:
            rewrite_reference(d, a.models)
            print(f"{d}: reference.tsv written")
            continue
        diffs = check_dir(d, a.models)
        if diffs:
            rc = 1
            print(f"{d}: {len(diffs)} differences; first: " + "; ".join(diffs[:3]), file=sys.stderr)
        else:
            print(f"{d}: reference.tsv reproduced")
    return rc


if __name__ == "__main__":
    sys.exit(main())
