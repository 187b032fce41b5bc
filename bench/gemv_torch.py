"""The torch peer for bench/gemv_bench.cpp: bf16 F.linear (cuBLAS GEMV) at the
same shapes, rotating weight copies past L2, launches queued behind a 2 GiB copy."""
import torch
import torch.nn.functional as F

REPEATS = 100
ROTATE_BYTES = 256 << 20


def main():
    dev = "cuda"
    busy_a = torch.empty(2 << 30, dtype=torch.uint8, device=dev)
    busy_b = torch.empty_like(busy_a)

    def time_ms(fn):
        for _ in range(3):
            fn()
        busy_b.copy_(busy_a)  # the GPU is busy while the launches queue up
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(REPEATS):
            fn()
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) / REPEATS

    busy_b.copy_(busy_a)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        busy_b.copy_(busy_a)
    stop.record()
    torch.cuda.synchronize()
    copy_ms = start.elapsed_time(stop) / 5
    copy_gbs = 2 * busy_a.numel() / (copy_ms * 1e-3) / 1e9

    rows = []
    for n, k in [(12288, 4096), (4096, 4096), (4096, 12288), (151936, 4096)]:
        wbytes = n * k * 2
        copies = max(1, -(-ROTATE_BYTES // wbytes))
        ws = [torch.randn(n, k, dtype=torch.bfloat16, device=dev) * 0.05 for _ in range(copies)]
        for m in (1, 8):
            if m == 8 and (n, k) != (4096, 4096):
                continue
            x = torch.randn(m, k, dtype=torch.bfloat16, device=dev)
            state = {"i": 0}

            def run():
                w = ws[state["i"]]
                state["i"] = (state["i"] + 1) % copies
                return F.linear(x, w)

            ms = time_ms(run)
            rows.append((f"torch bf16 m={m} {n}x{k}", wbytes + 2 * m * (k + n), ms))
        del ws
        torch.cuda.empty_cache()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}; copy {copy_gbs:.0f} GB/s (read + write)")
    print(f"{'F.linear (weight m NxK)':<30} {'MB moved':>10} {'us':>10} {'GB/s':>9} {'of copy':>8}")
    for name, nbytes, ms in rows:
        gbs = nbytes / (ms * 1e-3) / 1e9
        print(f"{name:<30} {nbytes / 1e6:>10.1f} {ms * 1e3:>10.2f} {gbs:>9.0f} {100 * gbs / copy_gbs:>7.0f}%")


if __name__ == "__main__":
    main()
