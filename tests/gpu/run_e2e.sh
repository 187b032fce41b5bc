#!/usr/bin/env bash
# The GPU end-to-end checks and benchmark on a Qwen3-8B-shaped model with
# random bf16 weights (built with HF transformers there: nothing is
# downloaded), on a machine with an NVIDIA GPU, PyTorch and transformers.
# Needs .devbuild/ from tests/gpu/pack.sh (binaries, tokenizer, node + the
# openai client). Writes its log and results under OUT_DIR.
#
# Usage: tests/gpu/run_e2e.sh bf16|gguf|perf|quant|ab|batch|targets|trace|skip|smoke|start|all OUT_DIR [LAYERS]
#   bf16: tiny-model graph check against the CPU; HF teacher-forced logits
#         and greedy tokens against ft (dump and ft-serve); the openai client
#         against ft-serve (chat, stream, 32 concurrent); cold and warm start;
#         e2e_bench with HF's speed measured in the same run.
#   gguf: the same model converted by ft-model to Q8_0 and Q4_K_M: GPU logits
#         against the CPU backend on the same file (dequantized weights) and
#         against HF bf16 (the quantization error); e2e_bench decode batch 1.
#   perf: the model; e2e_bench bf16; its logits against HF; gemv_bench;
#         Q4_K_M decode at batch 1, its GPU logits against the CPU backend,
#         and its per-kernel step times (ncu).
#   targets: every benchmark figure of the issue targets in one call (about
#         5 minutes on an H100): while Q4_K_M converts, the kernel benchmarks
#         and their torch peers (run_on_gpu.sh --bench-only), e2e_bench bf16
#         (b1, b32, prefill 2048); then Q4_K_M decode
#         at batch 1, twice, and at batch 32 and prefill 2048. No HF speed run (the peers of e2e_bench are in
#         bench/RESULTS.md) and no profiler.
#   ab:   the short quant: the tiny Q4_K_M model at batch 4 and 1 (and at 1
#         on every .devbuild/ksrc_NAME variant and AB_ENVS setting), Q4_K_M
#         decode at batch 1 against e2e_bench_base and the variants, AB_ROUNDS
#         rounds (default 3), then op_check AB_OP_CHECK (default matmul
#         attention; "none" skips it) on the changed build and each kernel
#         and environment variant (minutes, so it comes last). AB_ENVS: space-separated
#         environment settings, each a variant of this build, several
#         variables joined by commas ("FT_PDL=0 FT_DECODE_MIN_SPAN=128,FT_PDL=0").
#         AB_MODEL=synth (ab and skip): the Q4_K_M model synthesized by
#         ft-model at the same shapes, with no HF run (faster on a fresh
#         machine; compare figures only within one run).
#   batch: quantized batches and prefill for this build and each kernel
#         variant (.devbuild/ksrc_NAME) and AB_ENVS setting: the tiny Q4_K_M
#         model at 12 and 1 sequences, gemm_bench --quantized, e2e_bench
#         --batch BATCH (default 32) --step-times on the AB_MODEL Q4_K_M
#         model, then op_check gemm matmul on this build and each variant.
#   smoke: the quick check after a host-side change (under a minute on an H100,
#         no HF model): tiny Q4_K_M and bf16 models on the GPU against the
#         CPU, op_check device, ft-serve answering a chat, a stream and a
#         structured output.
#   start: ft-serve's start, cold and warm, on the Qwen3-8B-shaped model
#         synthesized into Q4_K_M (no HF model).
#   skip: what each per-layer op costs a Q4_K_M batch-1 decode step at most:
#         e2e_bench --skip-ops OP for each op, beside the full step.
#   trace: where bf16 loses precision (use few LAYERS, e.g. 2): the first
#         layer's ops, each against f64 from ft's own inputs to it
#         (trace_check.py); the residual stream and logits against HF.
#   quant: the quantized decode loop: while Q4_K_M converts, op_check of the
#         quantized paths and attention, a tiny synthetic Q4_K_M model on the
#         GPU against the CPU (the executor's decode graphs), gemv_bench; then
#         Q4_K_M decode at batch 1 (alternated with e2e_bench_base when
#         pack.sh packed one, and with this build on every .devbuild/ksrc_NAME
#         folder of kernel sources) and every kernel's time in its step (ncu).
set -uo pipefail
phase="${1:?usage: run_e2e.sh bf16|gguf|perf|quant|ab|batch|targets|trace|skip|smoke|start|all OUT_DIR [LAYERS]}"
out="${2:?usage: run_e2e.sh bf16|gguf|perf|quant|ab|batch|targets|trace|skip|smoke|start|all OUT_DIR [LAYERS]}"
layers="${3:-36}"
source "$(dirname "$0")/devbuild.sh"
model="$work/qwen3-8b"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# The model and HF's reference files (unless there; no HF speed run).
hf_model() {
  if [ ! -f "$model/hf_hidden_fp32.f32" ]; then
    step "HF transformers: build and save the model ($layers layers), teacher-forced logits"
    python3 "$here/bench/hf_reference.py" --tokenizer "$tok" --out "$model" --layers "$layers" --no-bench || exit 1
  fi
}

# The model (unless there), then its Q4_K_M conversion started on the CPU
# (niced) in the background; sets $convert to wait for.
model_then_convert() {
  hf_model
  if [ -f "$work/q4_k_m.gguf" ]; then  # an earlier phase on this machine converted it
    true &
  else
    nice -n 19 "$bin/ft-model" convert "$model" --type q4_k_m -o "$work/q4_k_m.gguf.part" --quiet > "$work/convert.log" 2>&1 \
      && mv "$work/q4_k_m.gguf.part" "$work/q4_k_m.gguf" &
  fi
  convert=$!
}

# The Q4_K_M model of the timing-only phases (ab, skip): converted from the
# HF checkpoint as above, or with AB_MODEL=synth synthesized by ft-model
# straight into Q4_K_M at the same shapes (no HF run and no bf16 checkpoint,
# minutes less on a fresh machine; other random weights, so compare figures
# only within one run). Sets $convert to wait for.
timing_model() {
  if [ "${AB_MODEL:-}" != synth ]; then model_then_convert; return; fi
  if [ -f "$work/q4_k_m.gguf" ]; then
    true &
  else
    step "ft-model synth: the Qwen3-8B shapes ($layers layers) straight into Q4_K_M, random weights"
    synth_8b_q4 "$layers" "$work/q4_k_m.gguf" "$work/convert.log" &
  fi
  convert=$!
}

# ft's bf16 dump ($work/ft_bf16.f32, $work/ft_hidden.f32) against HF's
# reference files: the logits against HF bf16 (the 2e-2 bar) and f32, HF
# bf16 against f32, and the residual stream per layer.
compare_with_hf() {
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits.f32" --got "$work/ft_bf16.f32" \
    --label "bf16 ft vs HF bf16" || status=1
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits_fp32.f32" --got "$work/ft_bf16.f32" \
    --max 1 --label "bf16 ft vs HF f32"
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits_fp32.f32" --got "$model/hf_logits.f32" \
    --max 1 --label "HF bf16 vs HF f32"
  if [ -f "$model/hf_logits_eager.f32" ]; then
    python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits.f32" --got "$model/hf_logits_eager.f32" \
      --max 1 --label "HF bf16 eager attention vs HF bf16 SDPA"
  fi
  echo "residual stream per layer against HF f32: got = ft bf16, other = HF bf16"
  python3 "$here/tests/gpu/hf_compare.py" hidden --ref "$model/hf_hidden_fp32.f32" --got "$work/ft_hidden.f32" \
    --other "$model/hf_hidden.f32"
}

wait_ready() {  # PID PORT LOG: waits for /health (fails at once if the server exits), prints the seconds it took
  python3 - "$@" <<'PY'
import sys, time, os, urllib.request
pid, port, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
t0 = time.time()
while time.time() - t0 < 240:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
        print(f"ready after {time.time() - t0:.2f} s (from the start of polling)")
        sys.exit(0)
    except Exception:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        break
    time.sleep(0.05)
print("ft-serve did not become ready:")
print("".join(open(log).readlines()[-15:]))
sys.exit(1)
PY
}

# ft-serve on MODEL with an empty kernel cache, then a warm one: the seconds to
# ready and the startup report of each. The warm server stays up as $pid
# (port 8111).
serve_starts() {
  rm -rf "$FT_CACHE_DIR"
  for start in cold warm; do
    "$bin/ft-serve" --model "$1" --device cuda:0 --port 8111 --max-batch 32 > "$work/serve_$start.log" 2>&1 &
    pid=$!
    echo -n "$start: "; wait_ready $pid 8111 "$work/serve_$start.log" || { status=1; break; }
    grep -E "kernels ready|decode graphs|KV cache|weights" "$work/serve_$start.log" | sed 's/^\[[^]]*\] \[info\] /  /'
    [ "$start" = cold ] && { kill $pid; wait $pid 2>/dev/null; }
  done
}

# A tiny synthetic Q4_K_M model on the GPU against the CPU, three sequences
# (the batch-4 decode graph) and one (the batch-1 graph).
tiny_q4_check() {
  step "tiny Q4_K_M model: GPU (decode graphs at batch 16, 4 and 1) against the CPU"
  "$bin/ft-model" synth --arch qwen3 --layers 8 --hidden 512 --intermediate 1024 --heads 4 --kv-heads 2 \
    --head-dim 128 --type q4_k_m --quiet --vocab-from "$tok/tokenizer.json" \
    --tokenizer-config "$tok/tokenizer_config.json" -o "$work/tiny_q4.gguf" || status=1
  # 12 sequences: the batch-16 graph, whose projections decode W into the
  # GEMM's tile (gemm_q) where 3 and 1 take the GEMV.
  for seqs in 12 3 1; do "$bin/e2e_check" "$work/tiny_q4.gguf" 24 cuda:0 $seqs | tail -1 || status=1; done
  for_each_variant tiny_q4_variant
}
# A tiny synthetic bf16 model on the GPU against the CPU: three sequences
# (decode graphs, a padded bucket); the last LINES lines of its table (default 8).
tiny_bf16_check() {
  step "tiny bf16 model: three sequences on the GPU (decode graphs, padded bucket) against the CPU"
  "$bin/ft-model" synth --arch qwen3 --layers 2 --hidden 512 --intermediate 1024 --heads 8 --kv-heads 2 \
    --head-dim 128 --type bf16 --seed 3 --quiet --vocab-from "$tok/tokenizer.json" \
    --tokenizer-config "$tok/tokenizer_config.json" -o "$work/tiny.gguf" || status=1
  "$bin/e2e_check" "$work/tiny.gguf" 40 cuda:0 | tail -"${1:-8}" || status=1
}
tiny_q4_variant() {  # NAME ENV...: the tiny check on a variant, at TINY_SEQS sequences (default 1)
  local name="$1" seqs; shift
  for seqs in ${TINY_SEQS:-1}; do
    echo -n "$name, $seqs: "
    "$@" "$bin/e2e_check" "$work/tiny_q4.gguf" 24 cuda:0 "$seqs" | tail -1 || status=1
  done
}

# Calls FN NAME env SETTINGS... for every variant of devbuild.sh's
# load_variants but this build: each .devbuild/ksrc_NAME folder of kernel
# sources (those VARIANTS lists, when set), then each AB_ENVS setting.
for_each_variant() {
  local i
  load_variants
  for i in "${!names[@]}"; do
    [ "$i" = 0 ] && continue  # names[0]: this build
    "$1" "${names[$i]}" env ${envs[$i]}
  done
}

# One Q4_K_M batch-1 decode figure: LABEL, then the e2e_bench command (with
# env for a variant); its log's tail where it fails.
decode_b1() {
  local label="$1"; shift
  "$@" --model "$work/q4_k_m.gguf" --only-b1 2> "$work/decode_b1.err" | tail -1 | sed "s/^/$label: /" \
    || { status=1; tail -3 "$work/decode_b1.err"; }
}

decode_b1_variant() { decode_b1 "$@" "$bin/e2e_bench"; }

# Q4_K_M decode at batch 1, ROUNDS times: this build, e2e_bench_base when
# pack.sh packed one, and this build on every .devbuild/ksrc_NAME folder of
# kernel sources (kernel-only variants), alternated.
decode_ab() {
  local round
  step "e2e_bench q4_k_m decode b1: this build and the others, alternated"
  for round in $(seq "$1"); do
    decode_b1 "this build" "$bin/e2e_bench"
    [ -x "$bin/e2e_bench_base" ] && decode_b1 "base build" "$bin/e2e_bench_base"
    for_each_variant decode_b1_variant
  done
}

if [ "$phase" = bf16 ] || [ "$phase" = all ]; then
  export FT_CACHE_DIR="$work/cache"
  if [ "$phase" = bf16 ]; then tiny_bf16_check 8; fi
  step "HF transformers: build, save, teacher-forced logits, greedy tokens, speed"
  python3 "$here/bench/hf_reference.py" --tokenizer "$tok" --out "$model" --layers "$layers" || exit 1

  step "ft on cuda:0: the 128-token prompt in one step, every position's logits (cold kernel cache)"
  rm -rf "$FT_CACHE_DIR"
  "$bin/e2e_check" --dump "$model" "$model/ids.bin" "$work/ft_bf16.f32" cuda:0 "$work/ft_hidden.f32" || status=1
  python3 -c "import json,sys; c=json.load(open(sys.argv[1])); print({k: c.get(k) for k in ('rope_theta','rope_parameters','rope_scaling','rms_norm_eps','tie_word_embeddings','transformers_version')})" "$model/config.json"
  compare_with_hf

  step "ft-serve: cold start (empty kernel cache), then warm"
  serve_starts "$model"
  python3 "$here/tests/gpu/hf_compare.py" greedy --url http://127.0.0.1:8111 --ref "$model" || status=1
  xz -dc "$pack/node.xz" > "$work/node" && chmod +x "$work/node"
  "$work/node" "$pack/openai_check.bundle.mjs" http://127.0.0.1:8111 32 || status=1
  kill $pid; wait $pid 2>/dev/null
  cp "$work"/serve_*.log "$out/" 2>/dev/null

  step "e2e_bench: bf16, HF measured above as the peer"
  "$bin/e2e_bench" --model "$model" --peer "$model/peer.txt" --batch 32 || status=1

  step "where a batch-1 decode step's time goes: every kernel's duration (ncu), last 8 steps"
  ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
  timeout 150 "$ncu" --metrics gpu__time_duration.sum --csv "$bin/e2e_bench" --model "$model" --only-b1 --batch 1 \
    --decode-tokens 8 > "$work/ncu_b1.csv" 2> "$work/ncu_b1.err" || tail -5 "$work/ncu_b1.err"
  python3 "$here/tests/gpu/kernel_times.py" "$work/ncu_b1.csv" --steps 8 || status=1
  xz -c "$work/ncu_b1.csv" > "$out/ncu_b1.csv.xz"
fi
if [ "$phase" = perf ]; then
  # The loop for kernel work: the model; bf16 decode and prefill on an idle
  # host; then, while Q4_K_M converts on the CPU (niced), the bf16 logits
  # against HF and gemv_bench; then Q4_K_M decode at batch 1 on an idle host,
  # its logits on the GPU against the CPU backend on the same file, and where
  # its decode step's time goes (ncu).
  export FT_CACHE_DIR="$work/cache"
  hf_model
  step "e2e_bench bf16"
  "$bin/e2e_bench" --model "$model" --batch 32 | tail -4 || status=1
  nice -n 19 "$bin/ft-model" convert "$model" --type q4_k_m -o "$work/q4_k_m.gguf" --quiet > "$work/convert.log" 2>&1 &
  convert=$!
  step "bf16 logits against HF"
  "$bin/e2e_check" --dump "$model" "$model/ids.bin" "$work/ft_bf16.f32" cuda:0 > "$work/dump.log" 2>&1 || { tail -5 "$work/dump.log"; status=1; }
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits_fp32.f32" --got "$work/ft_bf16.f32" \
    --max 1 --label "bf16 ft vs HF f32"
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits.f32" --got "$work/ft_bf16.f32" \
    --max 1 --label "bf16 ft vs HF bf16"
  step "gemv_bench"
  "$bin/gemv_bench" | tee "$out/gemv_bench.txt" | grep -v "m=8" || status=1
  wait $convert || { cat "$work/convert.log"; status=1; }
  step "e2e_bench q4_k_m"
  "$bin/e2e_bench" --model "$work/q4_k_m.gguf" --only-b1 | tail -2 || status=1
  step "q4_k_m: GPU logits against the CPU backend on the same file (first 32 positions)"
  head -c 128 "$model/ids.bin" > "$work/ids32.bin"
  "$bin/e2e_check" --dump "$work/q4_k_m.gguf" "$work/ids32.bin" "$work/gpu_q4.f32" cuda:0 > /dev/null 2>&1 || status=1
  t0=$SECONDS
  timeout 200 "$bin/e2e_check" --dump "$work/q4_k_m.gguf" "$work/ids32.bin" "$work/cpu_q4.f32" cpu > /dev/null 2>&1 || status=1
  echo "CPU reference in $((SECONDS - t0)) s"
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$work/cpu_q4.f32" --got "$work/gpu_q4.f32" \
    --max 1 --label "q4_k_m GPU (bf16, int8 x) vs CPU (f32, dequantized weights)" || status=1
  python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits_fp32.f32" --got "$work/cpu_q4.f32" \
    --rows 32 --max 1 --label "q4_k_m CPU vs HF f32 (the quantization's own error)"
  step "where a Q4_K_M batch-1 decode step's time goes (ncu), last 8 steps"
  ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
  timeout 150 "$ncu" --metrics gpu__time_duration.sum --csv "$bin/e2e_bench" --model "$work/q4_k_m.gguf" --only-b1 \
    --batch 1 --decode-tokens 8 > "$work/ncu_q4.csv" 2> "$work/ncu_q4.err" || tail -5 "$work/ncu_q4.err"
  python3 "$here/tests/gpu/kernel_times.py" "$work/ncu_q4.csv" --steps 8 | head -16 || status=1
fi
if [ "$phase" = targets ]; then
  export FT_CACHE_DIR="$work/cache"
  model_then_convert
  step "kernel benchmarks with their torch peers (run_on_gpu.sh --bench-only)"
  "$here/tests/gpu/run_on_gpu.sh" "$bin" --bench-only | tee "$out/benches.txt" || status=1
  step "e2e_bench bf16 (decode b1 and b32, prefill 2048)"
  "$bin/e2e_bench" --model "$model" --batch 32 | tail -4 | tee "$out/e2e_bf16.txt" || status=1
  wait $convert || { cat "$work/convert.log"; status=1; }
  step "e2e_bench q4_k_m decode b1, twice; then b32 and prefill 2048"
  for round in 1 2; do "$bin/e2e_bench" --model "$work/q4_k_m.gguf" --only-b1 | tail -1 || status=1; done | tee "$out/e2e_q4.txt"
  "$bin/e2e_bench" --model "$work/q4_k_m.gguf" --batch 32 | tail -3 | tee -a "$out/e2e_q4.txt" || status=1
fi
op_check_ab() {  # NAME ENV...
  local name="$1" log="$out/op_check_$(variant_file "$1").txt"; shift  # a plain file name comes back
  step "op_check ${AB_OP_CHECK:-matmul attention}: $name"
  "$@" "$bin/op_check" ${AB_OP_CHECK:-matmul attention} > "$log" 2>&1 || status=1
  grep -E "FAIL|passed" "$log"
}
if [ "$phase" = ab ]; then
  # The short form of quant for one A/B of the decode loop: while Q4_K_M
  # converts, the tiny Q4_K_M model at batch 4 and 1 against the CPU; then
  # Q4_K_M decode at batch 1 alternated with e2e_bench_base (pack.sh BUILD
  # BASE_BUILD) and the kernel-source variants; op_check of the changed
  # families last (minutes: it compiles hundreds of kernels).
  export FT_CACHE_DIR="$work/cache"
  timing_model
  tiny_q4_check
  wait $convert || { cat "$work/convert.log"; status=1; }
  decode_ab "${AB_ROUNDS:-3}"
  # The build's own kernels where it is the changed one (a base was packed),
  # and every kernel-source variant.
  if [ "${AB_OP_CHECK:-}" != none ]; then
    [ -x "$bin/e2e_bench_base" ] && op_check_ab "this build" env
    for_each_variant op_check_ab
  fi
fi
# gemm_bench's quantized table and Q4_K_M decode at batch 1 and BATCH (default
# 32) and prefill 2,048 (e2e_bench) for one variant: NAME ENV...
batch_variant() {
  local name="$1"; shift
  step "gemm_bench --quantized: $name"
  "$@" "$bin/gemm_bench" --quantized | tee "$out/gemm_bench_$(variant_file "$name").txt" | tail -n +2 || status=1
  step "e2e_bench q4_k_m --batch ${BATCH:-32} --step-times: $name"
  "$@" "$bin/e2e_bench" --model "$work/q4_k_m.gguf" --batch "${BATCH:-32}" --step-times 2> "$work/batch.err" \
    | grep -E "between steps|^decode|^prefill" || { status=1; tail -3 "$work/batch.err"; }
}
if [ "$phase" = batch ]; then
  # Quantized batches and prefill (gemm_q / gemm_qr and the expanding pass)
  # for this build and every kernel-source and AB_ENVS variant: the tiny
  # Q4_K_M model against the CPU at 12 and 1 sequences; gemm_bench
  # --quantized and e2e_bench; then op_check gemm matmul on this build and
  # each variant (AB_OP_CHECK names other families).
  export FT_CACHE_DIR="$work/cache"
  timing_model
  TINY_SEQS="12 1" tiny_q4_check
  wait $convert || { cat "$work/convert.log"; status=1; }
  batch_variant "this build" env
  for_each_variant batch_variant
  if [ "${AB_OP_CHECK:-}" != none ]; then
    AB_OP_CHECK="${AB_OP_CHECK:-gemm matmul}"
    op_check_ab "this build" env
    for_each_variant op_check_ab
  fi
fi
if [ "$phase" = skip ]; then
  # What each per-layer op costs a Q4_K_M batch-1 step, bounded from above:
  # e2e_bench with that op left out of every layer (timing only, the output
  # is wrong), alternated with the full step, SKIP_ROUNDS rounds (default 2).
  export FT_CACHE_DIR="$work/cache"
  timing_model
  wait $convert || { cat "$work/convert.log"; status=1; }
  step "e2e_bench q4_k_m decode b1 with one op left out of every layer"
  for round in $(seq "${SKIP_ROUNDS:-2}"); do
    decode_b1 "all ops" "$bin/e2e_bench"
    for op in attn_norm qkv rope attn o ffn_norm gate_up down; do
      decode_b1 "without $op" "$bin/e2e_bench" --skip-ops "$op"
    done
  done
fi
if [ "$phase" = trace ]; then
  # Where bf16 precision goes: ft's first layer op by op against f64 from
  # ft's own inputs (tests/gpu/trace_check.py), then the logits against HF.
  export FT_CACHE_DIR="$work/cache"
  hf_model
  step "ft on cuda:0: the first layer traced op by op, against f64"
  rm -rf "$work/trace" && mkdir -p "$work/trace"
  "$bin/e2e_check" --dump "$model" "$model/ids.bin" "$work/ft_bf16.f32" cuda:0 "$work/ft_hidden.f32" "$work/trace" \
    > "$work/dump.log" 2>&1 || { tail -5 "$work/dump.log"; status=1; }
  python3 "$here/tests/gpu/trace_check.py" --model "$model" --ids "$model/ids.bin" --trace "$work/trace" \
    --hf-hidden "$model/hf_hidden.f32" --hf-hidden-f32 "$model/hf_hidden_fp32.f32" \
    $([ "$layers" -le 4 ] && echo --hf-runs) | tee "$out/trace.txt" || status=1
  compare_with_hf
fi
if [ "$phase" = quant ]; then
  export FT_CACHE_DIR="$work/cache"
  model_then_convert
  step "op_check: the quantized paths and attention"
  "$bin/op_check" matmul gemm embedding norm_act attention > "$out/op_check.txt" 2>&1 || status=1
  grep -E "FAIL|passed" "$out/op_check.txt"
  tiny_q4_check
  step "gemv_bench (quantized, m = 1)"
  "$bin/gemv_bench" q4_K q6_K q8_0 | tee "$out/gemv_bench.txt" | grep -v "m=8" || status=1
  wait $convert || { cat "$work/convert.log"; status=1; }
  decode_ab 3
  step "where a Q4_K_M batch-1 decode step's time goes (ncu), last 8 steps"
  ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
  timeout 150 "$ncu" --metrics gpu__time_duration.sum --csv "$bin/e2e_bench" --model "$work/q4_k_m.gguf" --only-b1 \
    --batch 1 --decode-tokens 8 > "$work/ncu_q4.csv" 2> "$work/ncu_q4.err" || tail -5 "$work/ncu_q4.err"
  python3 "$here/tests/gpu/kernel_times.py" "$work/ncu_q4.csv" --steps 8 || status=1
fi
if [ "$phase" = gguf ] || [ "$phase" = all ]; then
  export FT_CACHE_DIR="$work/cache"
  hf_model
  # The CPU reference runs 8B in f32 on the host: the first 32 positions only.
  head -c 128 "$model/ids.bin" > "$work/ids32.bin"
  for q in q4_k_m q8_0; do
    step "$q: convert, GPU logits against the CPU on the same file and against HF bf16"
    t0=$SECONDS
    "$bin/ft-model" convert "$model" --type "$q" -o "$work/$q.gguf" --quiet || status=1
    echo "converted in $((SECONDS - t0)) s ($(du -h "$work/$q.gguf" | cut -f1))"
    "$bin/e2e_bench" --model "$work/$q.gguf" --only-b1 | tail -3 || status=1
    "$bin/e2e_check" --dump "$work/$q.gguf" "$work/ids32.bin" "$work/gpu_$q.f32" cuda:0 || status=1
    t0=$SECONDS
    "$bin/e2e_check" --dump "$work/$q.gguf" "$work/ids32.bin" "$work/cpu_$q.f32" cpu || status=1
    echo "CPU reference in $((SECONDS - t0)) s"
    python3 "$here/tests/gpu/hf_compare.py" logits --ref "$work/cpu_$q.f32" --got "$work/gpu_$q.f32" \
      --label "$q GPU vs CPU (dequantized weights)" || status=1
    python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits.f32" --got "$work/cpu_$q.f32" \
      --rows 32 --max 1 --label "$q CPU vs HF bf16 (the quantization's own error)"
    python3 "$here/tests/gpu/hf_compare.py" logits --ref "$model/hf_logits_fp32.f32" --got "$work/cpu_$q.f32" \
      --rows 32 --max 1 --label "$q CPU vs HF f32"
  done
fi
if [ "$phase" = start ]; then
  # ft-serve's start on the Qwen3-8B-shaped Q4_K_M model (LAYERS layers;
  # synthesized, as ab's AB_MODEL=synth, unless one is there): cold, then warm.
  export FT_CACHE_DIR="$work/cache"
  AB_MODEL=synth timing_model
  wait $convert || { cat "$work/convert.log"; status=1; }
  step "ft-serve on it: cold start (empty kernel cache), then warm"
  serve_starts "$work/q4_k_m.gguf"
  kill $pid; wait $pid 2>/dev/null
fi
if [ "$phase" = smoke ]; then
  # The quick check after a host-side change (under a minute on an H100, no HF
  # model): the tiny models against the CPU, op_check's device family
  # (queued copies through page-locked memory), then ft-serve on the tiny
  # bf16 model answering a chat, the same streamed, and a structured output.
  export FT_CACHE_DIR="$work/cache"
  tiny_q4_check
  tiny_bf16_check 1
  step "op_check device: queued copies through page-locked host memory"
  "$bin/op_check" device | tail -1 || status=1
  step "ft-serve on the tiny bf16 model: chat, stream, structured output"
  "$bin/ft-serve" --model "$work/tiny.gguf" --device cuda:0 --port 8112 > "$work/smoke_serve.log" 2>&1 &
  pid=$!
  if wait_ready $pid 8112 "$work/smoke_serve.log"; then
    chat() { curl -sf localhost:8112/v1/chat/completions -H 'Content-Type: application/json' -d "$1"; }
    msg='"messages": [{"role": "user", "content": "hi"}], "max_tokens": 12, "temperature": 0'
    chat "{$msg}" | grep -q '"finish_reason"' && echo "chat: ok" || { echo "chat: FAIL"; status=1; }
    n=$(chat "{$msg, \"stream\": true}" | grep -c '^data:')
    [ "$n" -ge 3 ] && echo "stream: $n events" || { echo "stream: FAIL ($n events)"; status=1; }
    schema='{"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["score"]}'
    answer=$(chat "{\"messages\": [{\"role\": \"user\", \"content\": \"a score\"}], \"max_tokens\": 48, \"temperature\": 0.9,
      \"seed\": 1, \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"s\", \"schema\": $schema}}}")
    echo "$answer" | python3 -c '
import json, sys
r = json.load(sys.stdin)["choices"][0]
if r["finish_reason"] != "stop": print("structured output: cut off (max_tokens), not checked"); sys.exit(0)
v = json.loads(r["message"]["content"])["score"]
assert 0 <= v <= 1, v
print("structured output: score", v)' || { echo "structured output: FAIL: $answer"; status=1; }
  else
    status=1
  fi
  kill $pid 2>/dev/null; wait $pid
fi
step "sampling kernels against the CPU reference"
"$bin/op_check" sampling || status=1
exit $status
