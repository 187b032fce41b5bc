"""The torch peer for bench/gemv_bench.cpp: bf16 F.linear (cuBLAS GEMV) at the
same shapes, rotating weight copies past L2, launches queued behind a 2 GiB copy."""
import torch
import torch.nn.functional as F

from torch_timing import copy_gbs, print_bandwidth_table, time_ms

REPEATS = 100
ROTATE_BYTES = 256 << 20


def main():
    dev = "cuda"
    gbs_copy, busy_a, busy_b = copy_gbs(2 << 30, repeats=5)

    def busy():  # the GPU is busy while the launches queue up
        busy_b.copy_(busy_a)

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

            ms = time_ms(run, REPEATS, before=busy)
            rows.append((f"torch bf16 m={m} {n}x{k}", wbytes + 2 * m * (k + n), ms))
        del ws
        torch.cuda.empty_cache()
    print_bandwidth_table("F.linear (weight m NxK)", rows, gbs_copy)


if __name__ == "__main__":
    main()
