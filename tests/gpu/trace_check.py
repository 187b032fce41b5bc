#!/usr/bin/env python3
"""Where a bf16 forward pass loses precision: each op of ft's first layer
against an f64 reference computed from ft's own inputs to that op.

  trace_check.py --model DIR --ids IDS --trace TRACE_DIR [--hf-hidden F32 [--hf-hidden-f32 F32]]

TRACE_DIR holds `e2e_check --dump MODEL IDS OUT cuda:0 HIDDEN TRACE_DIR`'s
files (NAME.f32, [n, width]). For each op the table gives:
  op error     ft's output against f64 of the op applied to ft's inputs to it;
  floor        the same f64 result rounded to bf16 against itself: what
               storing the output in bf16 costs at the least;
  chain error  ft's output against the whole layer computed in f64 from the
               token ids (the error accumulated up to there).
An op whose error is well above its floor rounds or approximates more than
storing its output does. Runs on the GPU machine (torch, safetensors).
"""
import argparse
import json
import os

import numpy as np
import torch
from safetensors import safe_open


def load_layer0(model_dir):
    want = {
        "embed": "model.embed_tokens.weight",
        "attn_norm": "model.layers.0.input_layernorm.weight",
        "wq": "model.layers.0.self_attn.q_proj.weight",
        "wk": "model.layers.0.self_attn.k_proj.weight",
        "wv": "model.layers.0.self_attn.v_proj.weight",
        "wo": "model.layers.0.self_attn.o_proj.weight",
        "q_norm": "model.layers.0.self_attn.q_norm.weight",
        "k_norm": "model.layers.0.self_attn.k_norm.weight",
        "ffn_norm": "model.layers.0.post_attention_layernorm.weight",
        "wg": "model.layers.0.mlp.gate_proj.weight",
        "wu": "model.layers.0.mlp.up_proj.weight",
        "wd": "model.layers.0.mlp.down_proj.weight",
    }
    found = {}
    for f in sorted(os.listdir(model_dir)):
        if not f.endswith(".safetensors"):
            continue
        with safe_open(os.path.join(model_dir, f), framework="pt", device="cuda") as st:
            for key, name in want.items():
                if name in st.keys():
                    found[key] = st.get_tensor(name).double()
    missing = [k for k in want if k not in found]
    if missing:
        raise SystemExit(f"trace_check: {model_dir} lacks {', '.join(want[k] for k in missing)}")
    return found


def bf16(x):
    return x.to(torch.bfloat16).double()


def rel(a, ref):
    return (torch.linalg.norm(a - ref) / torch.linalg.norm(ref)).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--ids", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--hf-hidden", help="HF bf16's residual stream per layer (hf_reference.py's hf_hidden.f32)")
    ap.add_argument("--hf-hidden-f32", help="HF f32's (hf_hidden_fp32.f32)")
    ap.add_argument("--hf-runs", action="store_true",
                    help="also run HF transformers on the model in f64 and f32 (eager and sdpa attention) and compare "
                         "its first layer's output with the f64 reference")
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    H, D = cfg["hidden_size"], cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    NH, NKV, I = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["intermediate_size"]
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta") or (cfg.get("rope_parameters") or {}).get("rope_theta", 10000.0)
    w = load_layer0(a.model)
    ids = torch.from_numpy(np.fromfile(a.ids, dtype=np.int32).astype(np.int64)).cuda()
    T = ids.numel()

    def ft(name, width):
        x = np.fromfile(os.path.join(a.trace, name + ".f32"), dtype=np.float32)
        if x.size != T * width:
            raise SystemExit(f"trace_check: {name}.f32 holds {x.size} values, not {T} x {width}")
        return torch.from_numpy(x.astype(np.float64)).cuda().reshape(T, width)

    def norm(x, weight):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * weight

    inv = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float64, device="cuda") / D)
    ang = torch.arange(T, dtype=torch.float64, device="cuda")[:, None] * inv[None, :]
    cos, sin = torch.cat([ang.cos()] * 2, -1)[:, None], torch.cat([ang.sin()] * 2, -1)[:, None]

    def norm_rope(x, heads, weight):  # [T, heads * D] -> normed per head, NEOX rotation
        x = norm(x.reshape(T, heads, D), weight)
        rot = torch.cat([-x[..., D // 2:], x[..., :D // 2]], -1)
        return (x * cos + rot * sin).reshape(T, heads * D)

    def attention(q, k, v):
        q, k, v = q.reshape(T, NH, D), k.reshape(T, NKV, D), v.reshape(T, NKV, D)
        rep = NH // NKV
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        s = torch.einsum("thd,shd->hts", q, k) / D ** 0.5
        s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool, device="cuda").tril(), float("-inf"))
        return torch.einsum("hts,shd->thd", s.softmax(-1), v).reshape(T, NH * D)

    def mlp_act(gu):
        g, u = gu[:, :I], gu[:, I:]
        return g * torch.sigmoid(g) * u

    x = w["embed"][ids]
    qw = NH * D
    kvw = NKV * D
    t = {n: ft(n, wd) for n, wd in [("attn_norm", H), ("qkv", qw + 2 * kvw), ("q", qw), ("attn", qw), ("o", H),
                                    ("resid", H), ("ffn_norm", H), ("gate_up", 2 * I), ("down", H)]}
    wqkv = torch.cat([w["wq"], w["wk"], w["wv"]])
    wgu = torch.cat([w["wg"], w["wu"]])

    def layer(from_ft):
        """Layer 0's ops in f64. With from_ft, each op reads ft's traced output
        of the op before it (and k as the bf16 cache holds it); without, the
        f64 results before it: the whole layer from the ids."""
        r = {}
        inp = (lambda name: t[name]) if from_ft else (lambda name: r[name])
        k_cache = bf16 if from_ft else (lambda k: k)
        r["attn_norm"] = norm(x, w["attn_norm"])
        r["qkv"] = inp("attn_norm") @ wqkv.T
        r["q"] = norm_rope(inp("qkv")[:, :qw], NH, w["q_norm"])
        r["attn"] = attention(inp("q"), k_cache(norm_rope(inp("qkv")[:, qw:qw + kvw], NKV, w["k_norm"])),
                              inp("qkv")[:, qw + kvw:])
        r["o"] = inp("attn") @ w["wo"].T
        r["resid"] = x + inp("o")
        r["ffn_norm"] = norm(inp("resid"), w["ffn_norm"])
        r["gate_up"] = inp("ffn_norm") @ wgu.T
        r["down"] = mlp_act(inp("gate_up")) @ w["wd"].T
        return r

    op, chain = layer(True), layer(False)
    print(f"{'op':10s} {'op error':>10s} {'floor':>10s} {'ratio':>6s} {'chain error':>12s}")
    for name in op:
        e, f = rel(t[name], op[name]), rel(bf16(op[name]), op[name])
        print(f"{name:10s} {e:10.3e} {f:10.3e} {e / f:6.2f} {rel(t[name], chain[name]):12.3e}")
    out_ft = t["resid"] + t["down"]
    out64 = chain["resid"] + chain["down"]
    print(f"layer 0 out (resid + down) against f64: ft {rel(out_ft, out64):.3e}")
    for label, path in (("HF bf16", a.hf_hidden), ("HF f32", a.hf_hidden_f32)):
        if path:
            hf = torch.from_numpy(np.fromfile(path, dtype=np.float32)[:T * H].astype(np.float64)).cuda().reshape(T, H)
            print(f"layer 0 out: {label} against f64 {rel(hf, out64):.3e}; ft against {label} {rel(out_ft, hf):.3e}")
    if a.hf_runs:
        from transformers import AutoModelForCausalLM
        print(f"torch {torch.__version__}: matmul allow_tf32 {torch.backends.cuda.matmul.allow_tf32}, "
              f"float32 matmul precision {torch.get_float32_matmul_precision()}")
        for dtype, attn in ((torch.float64, "eager"), (torch.float32, "eager"), (torch.float32, "sdpa"),
                            (torch.bfloat16, "sdpa")):
            try:
                m = AutoModelForCausalLM.from_pretrained(a.model, dtype=dtype, attn_implementation=attn)
            except TypeError:  # transformers before 4.56 names it torch_dtype
                m = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=dtype, attn_implementation=attn)
            m = m.cuda().eval()
            with torch.no_grad():
                h = m(ids[None], output_hidden_states=True).hidden_states[1][0].double()
            print(f"layer 0 out: HF {str(dtype).split('.')[-1]} {attn} against f64 {rel(h, out64):.3e}; "
                  f"ft against it {rel(out_ft, h):.3e}")
            del m
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
