# Sourced by the GPU-machine scripts (run_e2e.sh, gemm_qr_ab.sh) after they
# set $out: unpacks .devbuild/ (from tests/gpu/pack.sh) into /tmp/ft-e2e and
# sets here, pack, work, bin, tok, status, step() and load_variants().
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pack="$here/.devbuild"
work=/tmp/ft-e2e
mkdir -p "$work" "$out"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
export PYTHONUNBUFFERED=1
tar -C "$work" -xJf "$pack/bin.tar.xz"
bin="$work/bin"
tok="$work/tok"
mkdir -p "$tok"
cp "$pack/tok/tokenizer_config.json" "$tok/"
xz -dc "$pack/tok/tokenizer.json.xz" > "$tok/tokenizer.json"
status=0
step() { echo; echo "== $*"; }
# The Qwen3-8B shapes with LAYERS layers synthesized straight into Q4_K_M
# (random weights) at PATH, written as PATH.part and renamed when whole; the
# log in LOG. A PATH already there is kept.
synth_8b_q4() {  # LAYERS PATH LOG
  [ -f "$2" ] && return 0
  "$bin/ft-model" synth --arch qwen3 --layers "$1" --hidden 4096 --intermediate 12288 --heads 32 \
    --kv-heads 8 --head-dim 128 --type q4_k_m --quiet --vocab-from "$tok/tokenizer.json" \
    --tokenizer-config "$tok/tokenizer_config.json" -o "$2.part" > "$3" 2>&1 && mv "$2.part" "$2"
}
# The A/B scripts' variants: names=(build ksrc_NAME... SETTING...) and
# envs=("" and the environment each runs in): each .devbuild/ksrc_NAME
# folder of kernel sources (only those VARIANTS, space-separated ksrc_NAME
# names, lists when set), then each AB_ENVS setting, this build with other
# environment variables (space-separated settings, several variables of one
# joined by commas: "FT_DECODE_WAVES=16 FT_DECODE_MIN_SPAN=128,FT_PDL=0").
# variant_file NAME gives a name fit for a file that comes back from the GPU.
load_variants() {
  names=("build")
  envs=("")
  local k n e
  for k in "$pack"/ksrc_*; do
    [ -d "$k" ] || continue
    n="$(basename "$k")"
    if [ -n "${VARIANTS:-}" ] && [[ " $VARIANTS " != *" $n "* ]]; then continue; fi
    names+=("$n")
    envs+=("FT_KERNEL_SRC_DIR=$k FT_CACHE_DIR=$work/cache_$n")
  done
  for e in ${AB_ENVS:-}; do
    names+=("$e")
    envs+=("${e//,/ }")
  done
}
variant_file() { echo "${1//[^A-Za-z0-9_.-]/_}"; }
