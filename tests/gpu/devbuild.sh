# Sourced by the GPU-machine scripts (run_e2e.sh, gemm_qr_ab.sh) after they
# set $out: unpacks .devbuild/ (from tests/gpu/pack.sh) into /tmp/ft-e2e and
# sets here, pack, work, bin, tok, status and step().
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
