#!/usr/bin/env bash
# Runs every GPU check and benchmark in one go on a machine with an NVIDIA GPU.
# Usage: tests/gpu/run_on_gpu.sh BIN_DIR [--bench-only]
#   --bench-only: the benchmarks and their torch peers, without op_check
#   (run_e2e.sh targets).
# BIN_DIR holds op_check, ops_bench, gemm_bench, gemv_bench, ft-compile-worker (built on the CPU
# machine; they dlopen libcuda and libnvrtc, so no CUDA toolkit is needed here).
set -uo pipefail
bin="${1:?usage: run_on_gpu.sh BIN_DIR [--bench-only]}"
bench_only="${2:-}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
export FT_CACHE_DIR="${FT_CACHE_DIR:-/tmp/ft-gpu-cache}"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
status=0
if [ "$bench_only" != --bench-only ]; then
  echo "== op_check (kernels vs CPU reference)"
  "$bin/op_check" || status=1
fi
echo "== ops_bench (ft kernels vs device copy)"
"$bin/ops_bench" || status=1
echo "== ops_torch (torch peer, same shapes)"
python3 "$here/bench/ops_torch.py" || status=1
echo "== gemm (prefill GEMM vs torch.matmul / cuBLAS, same run)"
python3 "$here/bench/gemm_torch.py" --out /tmp/ft_gemm_torch.txt || status=1
"$bin/gemm_bench" --torch /tmp/ft_gemm_torch.txt || status=1
echo "== attention (paged decode / prefill and RoPE vs device copy; SDPA peer in the same run)"
"$bin/attention_bench" || status=1
python3 "$here/bench/attention_torch.py" || status=1
echo "== gemv (decode matmul vs device copy; torch bf16 F.linear peer in the same run)"
"$bin/gemv_bench" || status=1
python3 "$here/bench/gemv_torch.py" || status=1
exit $status
