# Sourced on the GPU machine from the repo root after tests/gpu/pack_ab.sh:
# unpacks every bin_NAME.tar.xz of .devbuild-ab/ into /tmp/ft-ab and the
# tokenizer into /tmp/ft-ab/tok, and defines
#   v NAME BINARY ARGS...   run NAME's BINARY with NAME's own kernel cache;
#                           NAME_X runs NAME's binaries on the kernel sources
#                           in .devbuild-ab/ksrc_NAME_X (FT_KERNEL_SRC_DIR),
#                           for variants that differ only in kernel code.
here="$(pwd)"; ab="$here/.devbuild-ab"; work=/tmp/ft-ab; tok="$work/tok"
mkdir -p "$tok"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64" PYTHONUNBUFFERED=1
for t in "$ab"/bin_*.tar.xz; do
  n="$(basename "$t" .tar.xz)"; rm -rf "${work:?}/$n"; tar -C "$work" -xJf "$t"
done
cp "$ab/tok/tokenizer_config.json" "$tok/"
[ -f "$tok/tokenizer.json" ] || xz -dc "$ab/tok/tokenizer.json.xz" > "$tok/tokenizer.json"
v() {
  local name="$1" cmd="$2"; shift 2
  local bin="$work/bin_${name%%_*}"
  if [[ "$name" == *_* ]]; then
    FT_KERNEL_SRC_DIR="$ab/ksrc_$name" FT_CACHE_DIR="$work/cache_$name" "$bin/$cmd" "$@"
  else
    FT_CACHE_DIR="$work/cache_$name" "$bin/$cmd" "$@"
  fi
}
