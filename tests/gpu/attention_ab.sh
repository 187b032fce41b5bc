#!/usr/bin/env bash
# The short A/B for attention kernel work: this build's kernels against each
# .devbuild/ksrc_NAME folder (H100, this build and one folder: about six
# minutes, one and a half with OPS=0). Needs .devbuild/ from tests/gpu/pack.sh.
#   1. attention_bench CASES (default "decode"), ROUNDS rounds (default 2)
#      alternating this build and the variants;
#   2. torch SDPA on the same shapes (bench/attention_torch.py), once;
#   3. op_check attention on this build and each variant (every case against
#      the CPU reference);
#   4. the tiny Q4_K_M model at 1 and 12 sequences against the CPU, each;
#   5. with E2E_LAYERS=N: the Qwen3-8B-shaped Q4_K_M model with N layers
#      (synthesized while 1-4 run), e2e_bench decode batch 1, ROUNDS rounds
#      alternating the variants (a chat's short contexts, where each layer's
#      attention is a short launch).
# OPS=0 skips 3 and 4 (each variant compiles its own kernels for them: most
# of the run). VARIANTS picks the ksrc_NAME folders; AB_ENVS adds this build
# with other environment variables ("FT_DECODE_WAVES=16 FT_DECODE_MIN_SPAN=128"),
# as devbuild.sh's load_variants says.
# Usage: tests/gpu/attention_ab.sh OUT_DIR
set -uo pipefail
out="${1:?usage: attention_ab.sh OUT_DIR}"
source "$(dirname "$0")/devbuild.sh"
export FT_CACHE_DIR="$work/cache"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

load_variants
if [ -n "${E2E_LAYERS:-}" ]; then
  model="$work/q4_k_m_${E2E_LAYERS}.gguf"
  synth_8b_q4 "$E2E_LAYERS" "$model" "$work/synth.log" &
  synth=$!
fi

read -r -a cases <<< "${CASES:-decode}"
step "attention_bench ${cases[*]}, ${ROUNDS:-2} rounds"
for r in $(seq "${ROUNDS:-2}"); do
  for i in "${!names[@]}"; do
    echo "-- round $r, ${names[$i]}"
    env ${envs[$i]} "$bin/attention_bench" "${cases[@]}" 2>&1 | grep -v "^\[" || status=1
  done
done

step "torch SDPA, the same shapes"
python3 "$here/bench/attention_torch.py" || status=1

if [ "${OPS:-1}" != 0 ]; then
  step "op_check attention"
  for i in "${!names[@]}"; do
    echo -n "${names[$i]}: "
    log="$out/op_check_attention_$(variant_file "${names[$i]}").txt"
    env ${envs[$i]} "$bin/op_check" attention > "$log" 2>&1 || status=1
    grep -E "FAIL|passed" "$log"
  done

  step "tiny Q4_K_M model, 1 and 12 sequences, GPU against the CPU"
  "$bin/ft-model" synth --arch qwen3 --layers 8 --hidden 512 --intermediate 1024 --heads 4 --kv-heads 2 \
    --head-dim 128 --type q4_k_m --quiet --vocab-from "$tok/tokenizer.json" \
    --tokenizer-config "$tok/tokenizer_config.json" -o "$work/tiny_q4.gguf" || status=1
  for i in "${!names[@]}"; do
    for n in 1 12; do
      echo -n "${names[$i]}, $n: "
      env ${envs[$i]} "$bin/e2e_check" "$work/tiny_q4.gguf" 24 cuda:0 "$n" | tail -1 || status=1
    done
  done
fi

if [ -n "${E2E_LAYERS:-}" ]; then
  wait "$synth" || { cat "$work/synth.log"; status=1; }
  step "e2e_bench decode b1, ${E2E_LAYERS}-layer Q4_K_M, ${ROUNDS:-2} rounds"
  for r in $(seq "${ROUNDS:-2}"); do
    for i in "${!names[@]}"; do
      echo -n "round $r, ${names[$i]}: "
      env ${envs[$i]} "$bin/e2e_bench" --model "$model" --only-b1 2> "$work/e2e.err" | grep decode_b1 ||
        { tail -3 "$work/e2e.err"; status=1; }
    done
  done
fi
exit $status
