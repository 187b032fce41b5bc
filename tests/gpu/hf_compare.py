#!/usr/bin/env python3
"""FreeToken against HF transformers on the GPU machine (files from bench/hf_reference.py).

  hf_compare.py logits --ref A.f32 --got B.f32 [--vocab 151936] [--max 2e-2] [--label NAME] [--rows N]
      Relative L2 error of B's logits against A's, per position; exits 1 if the
      worst position reaches --max.
  hf_compare.py hidden --ref A.f32 --got B.f32 [--other C.f32] [--hidden 4096] [--positions 128]
      Per layer: relative L2 error of B's residual stream (and C's) against A's,
      over all positions (B may hold one more layer than A; it is ignored).
  hf_compare.py greedy --url URL --ref DIR
      Greedy completion of DIR/greedy.json's prompt through ft-serve's
      /v1/completions, against HF's greedy tokens: how many tokens agree before
      the first difference, and HF's top-1/top-2 logit margin there.
"""
import argparse
import json
import sys
import urllib.request

import numpy as np


def logits(a):
    ref = np.fromfile(a.ref, dtype=np.float32).reshape(-1, a.vocab)[:a.rows].astype(np.float64)
    got = np.fromfile(a.got, dtype=np.float32).reshape(-1, a.vocab)[:a.rows].astype(np.float64)
    if ref.shape != got.shape:
        print(f"{a.label}: shapes differ: {ref.shape} vs {got.shape}")
        return 1
    err = np.linalg.norm(got - ref, axis=1) / np.linalg.norm(ref, axis=1)
    agree = int((got.argmax(1) == ref.argmax(1)).sum())
    worst = int(err.argmax())
    print(f"{a.label}: {len(err)} positions, relative L2 error mean {err.mean():.3e}, worst {err[worst]:.3e} "
          f"(position {worst}), argmax agrees at {agree} of {len(err)}; limit {a.max:.0e}: "
          f"{'pass' if err[worst] < a.max else 'FAIL'}")
    return 0 if err[worst] < a.max else 1


def hidden(a):
    size = a.positions * a.hidden
    ref = np.fromfile(a.ref, dtype=np.float32).reshape(-1, size).astype(np.float64)
    rows = [("got", np.fromfile(a.got, dtype=np.float32).reshape(-1, size)[:len(ref)].astype(np.float64))]
    if a.other:
        rows.append(("other", np.fromfile(a.other, dtype=np.float32).reshape(-1, size)[:len(ref)].astype(np.float64)))
    print("layer " + " ".join(f"{name:>10}" for name, _ in rows) + "   (relative L2 against the reference)")
    for layer in range(len(ref)):
        den = np.linalg.norm(ref[layer])
        print(f"{layer:5d} " + " ".join(f"{np.linalg.norm(x[layer] - ref[layer]) / den:10.3e}" for _, x in rows))
    return 0


def greedy(a):
    from transformers import AutoTokenizer
    ref = json.load(open(f"{a.ref}/greedy.json"))
    tok = AutoTokenizer.from_pretrained(a.ref)
    body = json.dumps({"prompt": ref["prompt"], "max_tokens": len(ref["tokens"]), "temperature": 0,
                       "ignore_eos": True}).encode()
    req = urllib.request.Request(f"{a.url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    reply = json.load(urllib.request.urlopen(req, timeout=600))
    text = reply["choices"][0]["text"]
    n = len(ref["tokens"])
    matched = 0
    for k in range(1, n + 1):
        if text.startswith(tok.decode(ref["tokens"][:k])):
            matched = k
        else:
            break
    margins = ref["margins"]
    if matched == n:
        print(f"greedy: all {n} tokens agree with HF (smallest HF top-1/top-2 margin {min(margins):.3f})")
        return 0
    near = min(margins[:matched + 1])
    print(f"greedy: the first {matched} of {n} tokens agree with HF; at token {matched} HF's top-1/top-2 margin is "
          f"{margins[matched]:.3f} (smallest margin up to there {near:.3f}; logits span about "
          f"{max(margins):.2f} at the widest step)")
    print(f"  HF: {tok.decode(ref['tokens'])!r}\n  ft: {text!r}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    l = sub.add_parser("logits")
    l.add_argument("--ref", required=True)
    l.add_argument("--got", required=True)
    l.add_argument("--vocab", type=int, default=151936)
    l.add_argument("--max", type=float, default=2e-2)
    l.add_argument("--label", default="logits")
    l.add_argument("--rows", type=int, default=None, help="compare only the first N positions")
    h = sub.add_parser("hidden")
    h.add_argument("--ref", required=True)
    h.add_argument("--got", required=True)
    h.add_argument("--other")
    h.add_argument("--hidden", type=int, default=4096)
    h.add_argument("--positions", type=int, default=128)
    g = sub.add_parser("greedy")
    g.add_argument("--url", required=True)
    g.add_argument("--ref", required=True)
    a = ap.parse_args()
    return {"logits": logits, "hidden": hidden, "greedy": greedy}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
