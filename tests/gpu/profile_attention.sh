#!/usr/bin/env bash
# Nsight Compute's view of the attention kernels that miss their targets
# (one launch each, from attention_bench, after its warm-up launches): causal
# prefill at 2048 tokens, decode at batch 32 x 4096 and at batch 1 x 128 and
# 4096 (a chat's short launch, and a long context's), RoPE over 16384 tokens.
# PROFILES="decode_b1_ctx128 ..." picks some by name.
# Speed of light, memory, occupancy, warp stalls (also per SASS line: the
# SourceCounters section), issue; then the kernels' SASS through ft-jit inspect
# (from the kernel cache attention_bench filled: FT_CACHE_DIR as set).
# Usage: tests/gpu/profile_attention.sh BIN_DIR OUT_DIR
set -uo pipefail
bin="${1:?usage: profile_attention.sh BIN_DIR OUT_DIR}"
out="${2:?usage: profile_attention.sh BIN_DIR OUT_DIR}"
mkdir -p "$out"
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
profile() {  # NAME KERNEL_REGEX BENCH_CASE
  if [ -n "${PROFILES:-}" ] && [[ " $PROFILES " != *" $1 "* ]]; then return; fi
  echo "== $1"
  timeout 240 "$ncu" --kernel-name "regex:$2" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section SourceCounters \
    "$bin/attention_bench" "$3" > "$out/ncu_$1.txt" 2>&1
  grep -E "ft_|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Issued Ipc|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Mem Busy|Grid Size|Waves Per SM|Stall|Eligible Warps|Pipe" \
    "$out/ncu_$1.txt" | head -50
}
profile prefill_causal_2048 "ft_attn_prefill" "prefill bf16 causal 2048"
profile decode_b32 "ft_attn_decode" "decode bf16 b32"
profile decode_b1_ctx128 "ft_attn_decode" "decode bf16 b1 ctx128"
profile decode_b1_ctx4096 "ft_attn_decode" "decode bf16 b1 ctx4096"
profile rope_16384 "ft_rope" "rope+qknorm+kv bf16 16384"
echo "== SASS"
for k in ft_attn_prefill_bf16_d128_g4_b16 ft_attn_decode_bf16_d128_g4_b16 ft_attn_decode_bf16_d128_g4_b16_w8 \
  ft_rope_neox_bf16_d128_qknorm; do
  "$bin/ft-jit" inspect --arch sm_90 --kernel "$k" --isa > "$out/sass_$k.txt" 2>&1
  echo "$k: $(grep -c . "$out/sass_$k.txt") lines -> sass_$k.txt"
done
