#!/usr/bin/env bash
# Nsight Compute's view of kernels inside the real batch-1 decode step (the
# graph e2e_bench replays), not of a lone launch: caches are left as the step
# before left them and clocks are not locked, so a kernel meets the L2 state
# it meets in serving (ncu still runs kernels one at a time: no overlap with
# its neighbours). For each REGEX, one launch after SKIP matching launches
# (by default past the warm-up request, mid-way through the timed one).
# Prints speed of light, occupancy, warp stalls and the SASS lines with the
# most stall samples; keeps the reports (OUT/step_N.ncu-rep) and the per-line
# samples (OUT/step_N_source.csv).
# Usage: tests/gpu/profile_step.sh BIN_DIR MODEL.gguf OUT_DIR REGEX [SKIP] [REGEX [SKIP]]...
set -uo pipefail
bin="${1:?usage: profile_step.sh BIN_DIR MODEL OUT_DIR REGEX [SKIP]...}"
model="${2:?usage: profile_step.sh BIN_DIR MODEL OUT_DIR REGEX [SKIP]...}"
out="${3:?usage: profile_step.sh BIN_DIR MODEL OUT_DIR REGEX [SKIP]...}"
shift 3
mkdir -p "$out"
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
n=0
while [ $# -gt 0 ]; do
  regex="$1"; skip=3000; shift
  if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then skip="$1"; shift; fi
  n=$((n + 1))
  echo "== $regex (launch $skip + 1)"
  timeout 300 "$ncu" --kernel-name "regex:$regex" --launch-skip "$skip" --launch-count 1 \
    --cache-control none --clock-control none --import-source yes \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters \
    -f -o "$out/step_$n" "$bin/e2e_bench" --model "$model" --only-b1 > "$out/step_${n}_run.txt" 2>&1
  "$ncu" --import "$out/step_$n.ncu-rep" --page details > "$out/step_$n.txt" 2>&1
  grep -E "ft_|Duration|Elapsed Cycles|SM Frequency|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|L2 Hit|Stall" \
    "$out/step_$n.txt" | head -40
  "$ncu" --import "$out/step_$n.ncu-rep" --page source --csv --print-source sass > "$out/step_${n}_source.csv" 2>/dev/null
  python3 - "$out/step_${n}_source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if "Source" in r and any("Sampling" in c for c in r)), None)
if head is None:
    print("(no per-line samples)"); sys.exit()
cols = rows[head]
src = cols.index("Source")
samp = next(i for i, c in enumerate(cols) if c.startswith("Warp Stall Sampling (All"))
lines = [(float(r[samp] or 0), r[src]) for r in rows[head + 1:] if len(r) > samp]
total = sum(s for s, _ in lines) or 1
print(f"{len(lines)} SASS lines, {total:.0f} stall samples; the top 25:")
for s, text in sorted(lines, reverse=True)[:25]:
    print(f"{100 * s / total:5.1f}%  {text.strip()}")
PY
done
