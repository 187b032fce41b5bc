"""The torch peer for bench/gemm_bench.cpp: bf16 x[2048, K] @ W[N, K]^T through
torch.nn.functional.linear (cuBLAS), CUDA events, the same shapes.
Prints a table; with --out FILE also writes "N K tflops" lines for gemm_bench --torch."""
import argparse

import torch
import torch.nn.functional as F

from torch_timing import time_ms

REPEATS = 20
TOKENS = 2048
SHAPES = [("gate_up", 12288, 4096), ("o_proj", 4096, 4096), ("down", 4096, 12288), ("lm_head", 151936, 4096)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    lines = []
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, bf16 F.linear, M = {TOKENS}")
    print(f"{'shape':<8} {'N':>7} {'K':>6} {'us':>10} {'TFLOP/s':>9}")
    for name, n, k in SHAPES:
        x = torch.randn(TOKENS, k, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
        ms = time_ms(lambda: F.linear(x, w), REPEATS)
        tflops = 2 * TOKENS * n * k / (ms * 1e-3) / 1e12
        print(f"{name:<8} {n:>7} {k:>6} {ms * 1e3:>10.1f} {tflops:>9.1f}")
        lines.append(f"{n} {k} {tflops:.2f}\n")
        del x, w
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
