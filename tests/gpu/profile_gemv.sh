#!/usr/bin/env bash
# Nsight Compute's view of a few decode GEMV kernels (one launch each, from
# gemv_bench): speed of light, memory, occupancy, warp stalls, issue. For
# kernel work: where the quantized GEMVs lose against the copy bandwidth.
# Usage: tests/gpu/profile_gemv.sh BIN_DIR OUT_DIR [TYPE...]   (default q4_K q6_K q8_0)
set -uo pipefail
bin="${1:?usage: profile_gemv.sh BIN_DIR OUT_DIR [TYPE...]}"
out="${2:?usage: profile_gemv.sh BIN_DIR OUT_DIR [TYPE...]}"
shift 2
types=("$@")
[ ${#types[@]} -eq 0 ] && types=(q4_K q6_K q8_0)
mkdir -p "$out"
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
for t in "${types[@]}"; do
  # The m = 1 GEMV at the gate/up shape and at the LM head's, after gemv_bench's warm-up launches.
  for shape in 12288x4096 151936x4096; do
    echo "== $t $shape m = 1"
    timeout 240 "$ncu" --kernel-name "regex:ft_gemv_bf16_${t,,}_k4096_m1" --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      "$bin/gemv_bench" "$t" "$shape" > "$out/ncu_gemv_${t}_$shape.txt" 2>&1
    grep -E "ft_gemv|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Issued Ipc|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|L1/TEX Hit|Mem Busy|Max Bandwidth|Grid Size|Waves Per SM|Stall|Eligible Warps" \
      "$out/ncu_gemv_${t}_$shape.txt" | head -40
  done
done
