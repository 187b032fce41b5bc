#!/usr/bin/env bash
# The quick GPU check after a host-side change (under a minute on an H100,
# no HF model): tiny synthetic Q4_K_M and bf16 models on the GPU against the
# CPU backend through the executor's decode graphs (e2e_check), op_check's
# device family (queued copies through page-locked memory), then ft-serve on
# the bf16 model: a chat, the same streamed, and a structured output.
# Needs .devbuild/ from tests/gpu/pack.sh. Exits 1 if a check fails.
# Usage: tests/gpu/smoke.sh
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
work=/tmp/ft-e2e
mkdir -p "$work/tok"
tar -C "$work" -xJf "$here/.devbuild/bin.tar.xz"
cp "$here/.devbuild/tok/tokenizer_config.json" "$work/tok/"
xz -dc "$here/.devbuild/tok/tokenizer.json.xz" > "$work/tok/tokenizer.json"
export FT_CACHE_DIR="$work/cache" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
bin="$work/bin"
tok=(--vocab-from "$work/tok/tokenizer.json" --tokenizer-config "$work/tok/tokenizer_config.json")
status=0
"$bin/ft-model" synth --arch qwen3 --layers 8 --hidden 512 --intermediate 1024 --heads 4 --kv-heads 2 \
  --head-dim 128 --type q4_k_m --quiet "${tok[@]}" -o "$work/tiny_q4.gguf" || status=1
for seqs in 3 1; do "$bin/e2e_check" "$work/tiny_q4.gguf" 24 cuda:0 $seqs | tail -1 || status=1; done
"$bin/ft-model" synth --arch qwen3 --layers 2 --hidden 512 --intermediate 1024 --heads 8 --kv-heads 2 \
  --head-dim 128 --type bf16 --seed 3 --quiet "${tok[@]}" -o "$work/tiny.gguf" || status=1
"$bin/e2e_check" "$work/tiny.gguf" 40 cuda:0 | tail -1 || status=1
"$bin/op_check" device | tail -1 || status=1

port=8111
"$bin/ft-serve" --model "$work/tiny.gguf" --device cuda:0 --port $port > "$work/smoke_serve.log" 2>&1 &
pid=$!
for _ in $(seq 120); do curl -sf "localhost:$port/health" > /dev/null && break; sleep 0.5; done
chat() { curl -sf "localhost:$port/v1/chat/completions" -H 'Content-Type: application/json' -d "$1"; }
msg='"messages": [{"role": "user", "content": "hi"}], "max_tokens": 12, "temperature": 0'
chat "{$msg}" | grep -q '"finish_reason"' && echo "chat: ok" || { echo "chat: FAIL"; status=1; }
n=$(chat "{$msg, \"stream\": true}" | grep -c '^data:')
[ "$n" -ge 3 ] && echo "stream: $n events" || { echo "stream: FAIL ($n events)"; status=1; }
schema='{"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["score"]}'
out=$(chat "{\"messages\": [{\"role\": \"user\", \"content\": \"a score\"}], \"max_tokens\": 48, \"temperature\": 0.9, \"seed\": 1,
  \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"s\", \"schema\": $schema}}}")
echo "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["choices"][0]
if r["finish_reason"] != "stop": print("structured output: cut off (max_tokens), not checked"); sys.exit(0)
v = json.loads(r["message"]["content"])["score"]
assert 0 <= v <= 1, v
print("structured output: score", v)' || { echo "structured output: FAIL: $out"; status=1; }
kill $pid; wait $pid
exit $status
