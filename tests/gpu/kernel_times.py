#!/usr/bin/env python3
"""Summarises an `ncu --csv --metrics gpu__time_duration.sum` log: per kernel
(name without template arguments), how many launches, the mean and total
time per step, and each one's share of the whole.

Usage: kernel_times.py LOG [--steps N] [--step-end REGEX]
  The window is the last N steps: the launches after the (N+1)-th last kernel
  whose name matches REGEX (the one kernel that ends each step, by default the
  sampler) up to and including the last one.
"""
import argparse
import csv
import re
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--step-end", default="argmax|sample")
    a = ap.parse_args()
    lines = [l for l in open(a.log, errors="replace") if l.startswith('"')]
    rows = [r for r in csv.DictReader(lines) if r.get("Metric Name") == "gpu__time_duration.sum"]
    ends = [i for i, r in enumerate(rows) if re.search(a.step_end, r["Kernel Name"])]
    if len(ends) < a.steps + 1:
        raise SystemExit(f"kernel_times.py: {len(ends)} step ends in {a.log}, {a.steps + 1} needed")
    rows = rows[ends[-a.steps - 1] + 1:ends[-1] + 1]
    if not rows:
        raise SystemExit("kernel_times.py: no gpu__time_duration rows in " + a.log)
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
    agg = defaultdict(lambda: [0, 0.0])
    for r in rows:
        name = re.sub(r"<.*", "", r["Kernel Name"]).replace("void ", "").strip()
        us = float(r["Metric Value"].replace(",", "")) * scale.get(r["Metric Unit"], 1.0)
        agg[name][0] += 1
        agg[name][1] += us
    total = sum(v[1] for v in agg.values())
    n = a.steps
    print(f"{len(rows)} launches, {total / n:.1f} us of kernel time per step ({n} steps)")
    print(f"{'kernel':58s} {'launches':>9s} {'mean us':>9s} {'us/step':>9s} {'share':>6s}")
    for name, (cnt, us) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print(f"{name[:58]:58s} {cnt / n:9.1f} {us / cnt:9.2f} {us / n:9.1f} {100 * us / total:5.1f}%")


if __name__ == "__main__":
    main()
