#!/usr/bin/env bash
# The short A/B for kernel work on the quantized few-row products (gemm_qr,
# gemm_q): this build's kernels against each .devbuild/ksrc_NAME folder, in
# about five minutes on an H100. Needs .devbuild/ from tests/gpu/pack.sh.
#   1. op_check gemm on this build (every quantized case against the CPU);
#   2. the tiny Q4_K_M model at 12 sequences (decode graphs through the
#      few-row products) against the CPU, this build and each variant;
#   3. e2e_bench --batch BATCH (default 32) on the 36-layer Qwen3-8B-shaped
#      Q4_K_M model (synthesized; random weights), ROUNDS rounds (default 2)
#      alternating this build and the variants;
#   4. gemm_bench --case for each CASES entry (default the 32-row Q4_K
#      gate_up and down and the Q6_K down), each variant, and this build with
#      FT_GEMM_QR_X=16 (the 16-row tile at 32 rows);
#   5. the 32-row Q4_K kernel's SASS into OUT_DIR.
# VARIANTS picks the ksrc_NAME folders (devbuild.sh).
# Usage: tests/gpu/gemm_qr_ab.sh OUT_DIR [LAYERS]
set -uo pipefail
out="${1:?usage: gemm_qr_ab.sh OUT_DIR [LAYERS]}"
layers="${2:-36}"
source "$(dirname "$0")/devbuild.sh"
export FT_CACHE_DIR="$work/cache"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

model="$work/q4_k_m_${layers}.gguf"
synth_8b_q4 "$layers" "$model" "$work/synth.log" &
synth=$!

# Each variant as NAME and the environment it runs in.
load_variants

step "op_check gemm: this build"
"$bin/op_check" gemm > "$out/op_check_gemm.txt" 2>&1 || status=1
grep -E "FAIL|passed" "$out/op_check_gemm.txt"

step "tiny Q4_K_M model, 12 sequences, GPU against the CPU"
"$bin/ft-model" synth --arch qwen3 --layers 8 --hidden 512 --intermediate 1024 --heads 4 --kv-heads 2 \
  --head-dim 128 --type q4_k_m --quiet --vocab-from "$tok/tokenizer.json" \
  --tokenizer-config "$tok/tokenizer_config.json" -o "$work/tiny_q4.gguf" || status=1
for i in "${!names[@]}"; do
  echo -n "${names[$i]}: "
  env ${envs[$i]} "$bin/e2e_check" "$work/tiny_q4.gguf" 24 cuda:0 12 | tail -1 || status=1
done

wait $synth || { cat "$work/synth.log"; status=1; }
step "e2e_bench --batch ${BATCH:-32}, ${ROUNDS:-2} rounds"
for r in $(seq "${ROUNDS:-2}"); do
  for i in "${!names[@]}"; do
    echo -n "round $r, ${names[$i]}: "
    env ${envs[$i]} "$bin/e2e_bench" --model "$model" --batch "${BATCH:-32}" 2> "$work/e2e.err" \
      | grep -E "^decode_b(1|${BATCH:-32}) " || { status=1; tail -3 "$work/e2e.err"; }
  done
done

step "gemm_bench --case"
for c in ${CASES:-q4_K:gate_up:32 q4_K:down:32 q6_K:down:32}; do
  for i in "${!names[@]}"; do
    echo "${names[$i]}: $(env ${envs[$i]} "$bin/gemm_bench" --case "$c" 2>&1 | tail -1)"
  done
  echo "build, FT_GEMM_QR_X=16: $(FT_GEMM_QR_X=16 "$bin/gemm_bench" --case "$c" 2>&1 | tail -1)"
done
# The 32-row Q4_K kernel's machine code (nvdisasm there), for reading.
"$bin/ft-jit" inspect --arch sm_90 --kernel ft_gemm_qr_q4_k_bf16_x32 --isa > "$out/gemm_qr_q4_k_bf16_x32.sass" 2>&1
exit $status
