#!/usr/bin/env bash
# Nsight Compute's view of the few-row quantized products (gemm_q, gemm_qr;
# one launch each, from gemm_bench --case): speed of light, memory (L1 and
# L2 hit rates, L2 throughput), occupancy, warp stalls by reason, issue. For kernel
# work: whether a case waits on W from memory, on x from L2, or on issue.
# Usage: tests/gpu/profile_gemm_q.sh BIN_DIR OUT_DIR [CASE...]
#   CASE: gemm_bench --case's TYPE:SHAPE:M (default q4_K:down:16 q4_K:down:32);
#   the environment (FT_GEMM_QR, FT_KERNEL_SRC_DIR...) passes through.
set -uo pipefail
bin="${1:?usage: profile_gemm_q.sh BIN_DIR OUT_DIR [CASE...]}"
out="${2:?usage: profile_gemm_q.sh BIN_DIR OUT_DIR [CASE...]}"
shift 2
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(q4_K:down:16 q4_K:down:32)
mkdir -p "$out"
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
for c in "${cases[@]}"; do
  echo "== $c (FT_GEMM_QR=${FT_GEMM_QR:-} FT_GEMM_QR_X=${FT_GEMM_QR_X:-})"
  log="$out/ncu_gemm_q_${c//[^A-Za-z0-9_]/_}${FT_GEMM_QR:+_qr$FT_GEMM_QR}${FT_GEMM_QR_X:+_x$FT_GEMM_QR_X}.txt"
  # The product kernel only (not the split reduction), after warm-up launches.
  timeout 240 "$ncu" --kernel-name "regex:ft_gemm_qr?_q" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    "$bin/gemm_bench" --case "$c" > "$log" 2>&1
  grep -E "ft_gemm_q|Duration|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|Grid Size|Block Size|Stall|Eligible Warps" \
    "$log" | head -40
  # Where a warp waits, in cycles per issued instruction, the largest first.
  grep -E "issue_stalled_.*_per_issue_active" "$log" | awk '{print $NF, $1}' | sort -rg | head -8
done
