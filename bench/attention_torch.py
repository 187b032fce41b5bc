"""The torch peer for bench/attention_bench.cpp: the same shapes with
scaled_dot_product_attention on contiguous K/V (torch has no paged cache),
bf16, CUDA events. RoPE: eager torch (q/k RMSNorm, rotate_half, index_copy_
into the cache), what a model runs without a fused kernel."""
import torch
import torch.nn.functional as F

from torch_timing import copy_gbs, time_ms

H, KVH, D = 32, 8, 128


def decode(batch, ctx):
    q = torch.randn(batch, H, 1, D, dtype=torch.bfloat16, device="cuda")
    k = torch.randn(batch, KVH, ctx, D, dtype=torch.bfloat16, device="cuda")
    v = torch.randn_like(k)
    ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
    return 2 * batch * ctx * KVH * D * 2, 0, ms


def prefill(batch, s, d=D):
    q = torch.randn(batch, H, s, d, dtype=torch.bfloat16, device="cuda")
    k = torch.randn(batch, KVH, s, d, dtype=torch.bfloat16, device="cuda")
    v = torch.randn_like(k)
    # Expanded K/V keep SDPA on its flash backend (enable_gqa may not).
    ke, ve = k.repeat_interleave(H // KVH, 1), v.repeat_interleave(H // KVH, 1)
    ms = time_ms(lambda: F.scaled_dot_product_attention(q, ke, ve, is_causal=True))
    return 0, 4 * d * H * s * (s + 1) / 2 * batch, ms


def rope(tokens):
    qkv = torch.randn(tokens, (H + 2 * KVH) * D, dtype=torch.bfloat16, device="cuda")
    wq = torch.randn(D, dtype=torch.bfloat16, device="cuda")
    wk = torch.randn_like(wq)
    inv = 1.0 / (1e6 ** (torch.arange(0, D, 2, device="cuda").float() / D))
    pos = torch.arange(tokens, device="cuda").float()
    ang = torch.outer(pos, inv)
    cos, sin = torch.cat([ang.cos()] * 2, -1)[:, None], torch.cat([ang.sin()] * 2, -1)[:, None]
    kc = torch.empty(tokens, KVH, D, dtype=torch.bfloat16, device="cuda")
    vc = torch.empty_like(kc)
    slots = torch.randperm(tokens, device="cuda")

    def rot(x):
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([-x2, x1], -1)

    def run():
        q, k, v = qkv.view(tokens, H + 2 * KVH, D).split([H, KVH, KVH], 1)
        q = F.rms_norm(q, (D,), wq, 1e-6)
        k = F.rms_norm(k, (D,), wk, 1e-6)
        q = (q * cos + rot(q) * sin).to(torch.bfloat16)
        k = (k * cos + rot(k) * sin).to(torch.bfloat16)
        kc.index_copy_(0, slots, k)
        vc.index_copy_(0, slots, v)
        return q

    ms = time_ms(run)
    return 2 * tokens * (H + 2 * KVH) * D * 2, 0, ms


def main():
    gbs_copy = copy_gbs()[0]
    rows = [
        ("torch sdpa decode b1 ctx128", *decode(1, 128)),
        ("torch sdpa decode b1 ctx4096", *decode(1, 4096)),
        ("torch sdpa decode b32 ctx4096", *decode(32, 4096)),
        ("torch sdpa decode b8 ctx16384", *decode(8, 16384)),
        ("torch sdpa prefill causal 2048", *prefill(1, 2048)),
        ("torch sdpa prefill causal 8192", *prefill(1, 8192)),
        ("torch sdpa prefill 4x1024", *prefill(4, 1024)),
        ("torch sdpa prefill causal 2048 d64", *prefill(1, 2048, 64)),
        ("torch eager rope+qknorm+kv 16384", *rope(16384)),
    ]
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}; copy {gbs_copy:.0f} GB/s (read + write)")
    print(f"{'op':<34} {'us':>10} {'GB/s':>9} {'of copy':>8} {'TFLOP/s':>10}")
    for name, nbytes, flops, ms in rows:
        s = ms * 1e-3
        if nbytes:
            print(f"{name:<34} {ms * 1e3:>10.1f} {nbytes / s / 1e9:>9.0f} {100 * nbytes / s / 1e9 / gbs_copy:>7.0f}% {'':>10}")
        else:
            print(f"{name:<34} {ms * 1e3:>10.1f} {'':>9} {'':>8} {flops / s / 1e12:>10.1f}")


if __name__ == "__main__":
    main()
