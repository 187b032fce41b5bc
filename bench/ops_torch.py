"""The torch peer for bench/ops_bench.cpp: the same shapes, bf16, CUDA events."""
import torch
import torch.nn.functional as F

from torch_timing import copy_gbs, print_bandwidth_table, time_ms


def main():
    dev = "cuda"
    rows = []
    gbs_copy = copy_gbs()[0]
    for r, h in [(8192, 4096), (4096, 8192), (2048, 20480)]:
        x = torch.randn(r, h, dtype=torch.bfloat16, device=dev)
        w = torch.randn(h, dtype=torch.bfloat16, device=dev)
        ms = time_ms(lambda: F.rms_norm(x, (h,), w, 1e-6))
        rows.append((f"torch rms_norm bf16 {r}x{h}", 2 * r * h * 2 + h * 2, ms))
    for r, i in [(4096, 12288), (8192, 14336)]:
        gu = torch.randn(r, 2 * i, dtype=torch.bfloat16, device=dev)
        ms = time_ms(lambda: F.silu(gu[:, :i]) * gu[:, i:])
        rows.append((f"torch silu*up bf16 {r}x{i}", 3 * r * i * 2, ms))
    print_bandwidth_table("op", rows, gbs_copy)


if __name__ == "__main__":
    main()
