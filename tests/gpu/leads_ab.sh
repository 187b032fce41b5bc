#!/usr/bin/env bash
# The leads landed or written down but not yet timed, each alternated with
# this build in one run on one GPU (about five minutes on an H100). Needs
# .devbuild/ from tests/gpu/pack.sh.
#   1. RoPE lanes per head: attention_bench rope at FT_ROPE_LANES 32 (the
#      default), 16 and 8, three rounds; op_check attention at each (every
#      RoPE case against the CPU reference; the other kernels come from the
#      cache after the first).
#   2. Decode attention with bench/experiments/decode-attn-l2-one-ahead.patch
#      applied to a copy of kernel_src: attention_bench decode, two rounds.
#   3. The quantized GEMV at FT_GEMV_GRID_SHARE 1, 2 and 4: gemv_bench q4_K
#      and bf16 at m = 1, two rounds.
#   4. "dense" (not in the default PARTS): gemv_bench bf16 for this build
#      and each .devbuild/ksrc_NAME folder, two rounds; op_check matmul
#      (bench/experiments/gemv-dense-weights-before-wait.patch: build with
#      it and put its kernel_src with kPre = 0 in .devbuild/ksrc_pre0).
#   5. With PROFILE=1: Nsight Compute on RoPE at 32 and 16 lanes (issue
#      slots against memory throughput).
# PARTS (default "rope decode gemv") picks the parts, for when device time
# is short; they run in the order above, whatever order PARTS names them in.
# ROUNDS (default 3 for RoPE, 2 elsewhere) and CHECK_LANES (the lane counts
# op_check attention runs at, default "32 16 8") shorten it further.
# Usage: [PARTS="rope ..."] [PROFILE=1] tests/gpu/leads_ab.sh OUT_DIR
set -uo pipefail
out="${1:?usage: leads_ab.sh OUT_DIR}"
parts=" ${PARTS:-rope decode gemv} "
want() { [[ "$parts" == *" $1 "* ]]; }
source "$(dirname "$0")/devbuild.sh"
export FT_CACHE_DIR="$work/cache"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

if want rope; then
step "RoPE + q/k norm + KV write, 16384 tokens: lanes per head 32 / 16 / 8"
for r in $(seq "${ROUNDS:-3}"); do
  for lanes in 32 16 8; do
    echo -n "round $r, $lanes lanes: "
    FT_ROPE_LANES=$lanes "$bin/attention_bench" rope 2>&1 | grep -E "^ *rope" || status=1
  done
done
step "op_check attention at each lane count"
for lanes in ${CHECK_LANES:-32 16 8}; do
  echo -n "$lanes lanes: "
  FT_ROPE_LANES=$lanes "$bin/op_check" attention > "$out/op_check_attention_l$lanes.txt" 2>&1 || status=1
  grep -E "FAIL|passed" "$out/op_check_attention_l$lanes.txt"
done
fi

if want decode; then
step "decode attention: this build against decode-attn-l2-one-ahead.patch"
l2="$work/ksrc_l2ahead"
rm -rf "$l2" && cp -r "$here/kernel_src" "$l2" &&
  (cd "$l2" && patch -s -p2 < "$here/bench/experiments/decode-attn-l2-one-ahead.patch") || status=1
for r in $(seq "${ROUNDS:-2}"); do
  for v in build l2ahead; do
    echo "-- round $r, $v"
    if [ "$v" = build ]; then
      "$bin/attention_bench" decode 2>&1 | grep -E "^ *decode" || status=1
    else
      FT_KERNEL_SRC_DIR="$l2" FT_CACHE_DIR="$work/cache_l2" "$bin/attention_bench" decode 2>&1 | grep -E "^ *decode" || status=1
    fi
  done
done
fi

if want gemv; then
step "GEMV at m = 1: FT_GEMV_GRID_SHARE 1 / 2 / 4"
for r in $(seq "${ROUNDS:-2}"); do
  for share in 1 2 4; do
    echo "-- round $r, share $share"
    FT_GEMV_GRID_SHARE=$share "$bin/gemv_bench" q4_K bf16 2>&1 | grep -E "m=1 " || status=1
  done
done
fi

if want dense; then
step "dense GEMV (bf16, m = 1 and 8): this build against .devbuild/ksrc_* folders"
load_variants
echo -n "op_check matmul, this build: "
"$bin/op_check" matmul > "$out/op_check_matmul.txt" 2>&1 || status=1
grep -E "FAIL|passed" "$out/op_check_matmul.txt"
for r in $(seq "${ROUNDS:-2}"); do
  for i in "${!names[@]}"; do
    echo "-- round $r, ${names[$i]}"
    env ${envs[$i]} "$bin/gemv_bench" bf16 2>&1 | grep -E "m=[18] " || status=1
  done
done
fi

if [ "${PROFILE:-0}" = 1 ]; then
  for lanes in 32 16; do
    step "ncu: RoPE at $lanes lanes"
    FT_ROPE_LANES=$lanes PROFILES=rope_16384 bash "$here/tests/gpu/profile_attention.sh" "$bin" "$out/ncu_l$lanes" | head -40
  done
fi
exit $status
