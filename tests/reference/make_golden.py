#!/usr/bin/env python3
"""Makes the golden-logit fixtures the CPU forward pass is checked against.

Builds tiny random Qwen3, Llama (with llama3 rope scaling) and Qwen2 (q/k/v
biases) models with HF transformers in float32, saves each as a safetensors
folder, and records the teacher-forced logits of a fixed prompt.

Run on a machine with torch and transformers (the GPU machine has both):
    python3 tests/reference/make_golden.py OUT_DIR
then copy OUT_DIR/* to tests/reference/golden/. Output per model:
    config.json, model.safetensors, golden.json {"prompt": [...], "vocab": V},
    logits.f32 (little-endian float32, [len(prompt), V]).
"""
import json
import os
import sys

import torch
import transformers
from safetensors.torch import save_file

PROMPT = [1, 17, 42, 255, 3, 99, 100, 101, 7, 7, 7, 200, 13, 64, 128, 5, 250, 31, 8, 77, 150, 2, 9, 180,
          44, 61, 19, 240, 11, 90, 33, 120, 6, 222, 15, 70, 140, 55]

COMMON = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
              rms_norm_eps=1e-6, tie_word_embeddings=False, torch_dtype="float32")

MODELS = {
    "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM,
              dict(head_dim=32, rope_theta=1000000.0)),
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM,
              dict(rope_theta=500000.0,
                   rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                     high_freq_factor=4.0, original_max_position_embeddings=64))),
    "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM,
              dict(rope_theta=10000.0, tie_word_embeddings=True)),
}


def main():
    out_root = sys.argv[1]
    for name, (config_cls, model_cls, extra) in MODELS.items():
        torch.manual_seed(1234)
        config = config_cls(**{**COMMON, **extra})
        config._attn_implementation = "eager"
        model = model_cls(config).float().eval()
        # Larger-than-default init so the logits are far from uniform.
        with torch.no_grad():
            for n, p in model.named_parameters():
                if p.dim() == 2:
                    p.normal_(0.0, 0.08)
                elif n.endswith("bias"):
                    p.normal_(0.0, 0.1)
                else:  # norm weights
                    p.normal_(1.0, 0.1)
        out = os.path.join(out_root, name)
        os.makedirs(out, exist_ok=True)
        config.save_pretrained(out)
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        if config.tie_word_embeddings:
            state.pop("lm_head.weight", None)
        save_file(state, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
        with torch.no_grad():
            logits = model(torch.tensor([PROMPT])).logits[0].float().cpu()
        logits.numpy().astype("<f4").tofile(os.path.join(out, "logits.f32"))
        with open(os.path.join(out, "golden.json"), "w") as f:
            json.dump({"prompt": PROMPT, "vocab": config.vocab_size,
                       "transformers": transformers.__version__, "torch": torch.__version__}, f)
        print(name, "logits", tuple(logits.shape), "max", float(logits.abs().max()))


if __name__ == "__main__":
    main()
