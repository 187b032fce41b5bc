"""The torch peer for bench/ops_bench.cpp: the same shapes, bf16, CUDA events."""
import torch
import torch.nn.functional as F

from torch_timing import time_ms



def main():
    dev = "cuda"
    rows = []
    n = 512 << 20
    a = torch.empty(n, dtype=torch.uint8, device=dev)
    b = torch.empty_like(a)
    copy_ms = time_ms(lambda: b.copy_(a))
    copy_gbs = 2 * n / (copy_ms * 1e-3) / 1e9
    for r, h in [(8192, 4096), (4096, 8192), (2048, 20480)]:
        x = torch.randn(r, h, dtype=torch.bfloat16, device=dev)
        w = torch.randn(h, dtype=torch.bfloat16, device=dev)
        ms = time_ms(lambda: F.rms_norm(x, (h,), w, 1e-6))
        rows.append((f"torch rms_norm bf16 {r}x{h}", 2 * r * h * 2 + h * 2, ms))
    for r, i in [(4096, 12288), (8192, 14336)]:
        gu = torch.randn(r, 2 * i, dtype=torch.bfloat16, device=dev)
        ms = time_ms(lambda: F.silu(gu[:, :i]) * gu[:, i:])
        rows.append((f"torch silu*up bf16 {r}x{i}", 3 * r * i * 2, ms))
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}; copy {copy_gbs:.0f} GB/s (read + write)")
    print(f"{'op':<32} {'MB moved':>10} {'us':>10} {'GB/s':>9} {'of copy':>8}")
    for name, nbytes, ms in rows:
        gbs = nbytes / (ms * 1e-3) / 1e9
        print(f"{name:<32} {nbytes / 1e6:>10.1f} {ms * 1e3:>10.1f} {gbs:>9.0f} {100 * gbs / copy_gbs:>7.0f}%")


if __name__ == "__main__":
    main()
