#!/usr/bin/env bash
# Benchmark (not a test): how long `iorig report` takes for a 2 000-step matrix.
# Target: at most 3 s (issue 14). The matrix runs on the null engine with 50 ms steps
# (read 0..90 step 10 x 8 block sizes x qd 1..25 = 2 000 steps, about 3 min),
# into a temporary store; then the report is timed.
#
#   bench/report-2000.sh            # builds iorig (release) first
#   KEEP=dir bench/report-2000.sh   # keep the store and the report in dir
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
(cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet)
IORIG=$TARGET_DIR/release/iorig
WORK=${KEEP:-$(mktemp -d)}
mkdir -p "$WORK"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
cat > matrix2000.toml <<'TOML'
name = "matrix2000"
[defaults]
engine = "null"
time = "50ms"
interval = "50ms"
[[steps]]
read = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]
bs = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k"]
qd = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]
TOML
echo "report-2000: running the 2000-step plan (null engine, 50 ms steps)" >&2
"$IORIG" plan run matrix2000.toml --db "$WORK/bench.db" --quiet > plan.log
steps=$(grep -c '^ *[0-9]* ' plan.log || true)
start=$(date +%s.%N)
"$IORIG" report 1 --db "$WORK/bench.db" --out "$WORK/report" > /dev/null
end=$(date +%s.%N)
python3 - "$start" "$end" "$WORK/report" <<'PY'
import os, sys
s, e, d = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
t = e - s
size = os.path.getsize(os.path.join(d, "index.html"))
charts = len([f for f in os.listdir(d) if f.endswith(".svg")])
print(f"report of a 2000-step run: {t:.2f} s (target <= 3 s) {'PASS' if t <= 3 else 'FAIL'}; "
      f"index.html {size/1e6:.1f} MB, {charts} charts")
PY
