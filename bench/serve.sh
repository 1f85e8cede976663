#!/usr/bin/env bash
# Benchmark (not a test): what `iorig serve` costs (issue 20's targets).
#   - the runs page of a store with 10 000 runs: <= 300 ms server time
#   - the page of a 2 000-step plan: <= 1 s
#   - serving the live view of a 60 s run: <= 0.6 CPU-seconds in the serve process
#   - requests/s of the API on loopback (bounded: 2 000 requests or 20 s)
# Server time is the `Server-Timing: app;dur=MS` the server sends (its own clock from
# request to response), the median of 5 requests; the CPU is the serve process's
# utime + stime from /proc. Everything runs on 127.0.0.1; every process started
# here is stopped at the end.
#
#   bench/serve.sh            # builds iorig (release) first
#   KEEP=dir bench/serve.sh   # keep the stores in dir (a second run reuses them)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
(cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet)
IORIG=$TARGET_DIR/release/iorig
WORK=${KEEP:-$(mktemp -d)}
mkdir -p "$WORK"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$WORK"' EXIT

# 1. 10 000 runs: one real run, cloned with its labels, facts and steps.
if [[ ! -f runs10k.db ]]; then
    "$IORIG" run --engine null --size 16m --time 1s --interval 250ms --db runs10k.db -q \
        --label array=a1 --label fw=1.2 > /dev/null
    python3 - runs10k.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run_cols = "kind, plan_json, status, started, ended, host, tool_version, command_line"
step_cols = "step_index, name, role, status, params_json, bs, bs_bytes, read_pct, random_pct, qd, threads, rate_iops, started, ended, summary_json"
with c:
    for i in range(2, 10001):
        c.execute(f"INSERT INTO runs (id, {run_cols}, uid) SELECT ?, {run_cols}, lower(hex(randomblob(16))) FROM runs WHERE id = 1", (i,))
        c.execute("INSERT INTO run_labels (run_id, key, value) SELECT ?, key, CASE key WHEN 'fw' THEN ? ELSE value END FROM run_labels WHERE run_id = 1", (i, f"1.{i % 7}"))
        c.execute("INSERT INTO target_facts (run_id, path, kind, size_bytes, json) SELECT ?, path, kind, size_bytes, json FROM target_facts WHERE run_id = 1", (i,))
        c.execute("INSERT INTO system_facts (run_id, json) SELECT ?, json FROM system_facts WHERE run_id = 1", (i,))
        c.execute(f"INSERT INTO steps (run_id, {step_cols}) SELECT ?, {step_cols} FROM steps WHERE run_id = 1", (i,))
print("runs:", c.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
PY
fi

# 2. A 2 000-step plan (as bench/report-2000.sh: null engine, 50 ms steps).
if [[ ! -f plan2000.db ]]; then
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
    echo "serve: running the 2000-step plan (null engine, 50 ms steps, about 3 min)" >&2
    "$IORIG" plan run matrix2000.toml --db plan2000.db --quiet > /dev/null
fi

# Starts `iorig serve` on a store; sets ADDR and SERVE_PID.
start_serve() {
    "$IORIG" serve --db "$1" --listen 127.0.0.1:0 > "serve-$2.log" 2>&1 &
    SERVE_PID=$!
    pids+=("$SERVE_PID")
    for _ in $(seq 200); do
        ADDR=$(sed -n 's/.* at http:\/\/\([^/]*\)\/.*/\1/p' "serve-$2.log" | head -1)
        [[ -n $ADDR ]] && return 0
        sleep 0.05
    done
    echo "serve did not start: $(cat "serve-$2.log")" >&2
    exit 1
}

# The median Server-Timing (ms) of 5 requests for a path, and the page's size.
timed() {
    python3 - "$ADDR" "$1" <<'PY'
import http.client, sys, statistics, time
addr, path = sys.argv[1], sys.argv[2]
host, port = addr.rsplit(":", 1)
ms, wall, size = [], [], 0
for _ in range(5):
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    t = time.monotonic()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    wall.append((time.monotonic() - t) * 1e3)
    assert r.status == 200, (r.status, body[:200])
    st = r.getheader("Server-Timing") or ""
    ms.append(float(st.split("dur=")[1]))
    size = len(body)
print(f"{statistics.median(ms):.1f} {statistics.median(wall):.1f} {size}")
PY
}

start_serve runs10k.db runs
read -r runs_ms runs_wall runs_size < <(timed "/")
read -r api_ms api_wall _ < <(timed "/api/runs?label=fw=1.3&limit=50")
rps=$(python3 - "$ADDR" <<'PY'
import http.client, sys, time
host, port = sys.argv[1].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port), timeout=30)
n, start = 0, time.monotonic()
while n < 2000 and time.monotonic() - start < 20:
    c.request("GET", "/api/runs/1")
    r = c.getresponse(); r.read()
    assert r.status == 200
    n += 1
print(f"{n / (time.monotonic() - start):.0f}")
PY
)
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true

start_serve plan2000.db plan
read -r plan_ms plan_wall plan_size < <(timed "/runs/1")

# 3. The live view of a 60 s run: the serve process's CPU while one client
# follows the run's event stream from start to end.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)
before=$(cpu "$SERVE_PID")
"$IORIG" run --engine null --size 16m --time 60s --interval 1s --db plan2000.db -q > /dev/null &
run_pid=$!
pids+=("$run_pid")
python3 - "$ADDR" <<'PY'
import http.client, json, sys, time
host, port = sys.argv[1].rsplit(":", 1)
# Wait for run 2 to be in the store, then follow it to its end.
for _ in range(200):
    c = http.client.HTTPConnection(host, int(port), timeout=10)
    c.request("GET", "/api/runs?status=running"); r = json.loads(c.getresponse().read())
    if r["total"]: break
    time.sleep(0.05)
c = http.client.HTTPConnection(host, int(port), timeout=120)
c.request("GET", "/api/runs/2/events"); r = c.getresponse()
n = 0
for line in r:
    if line.startswith(b"event: interval"): n += 1
    if line.startswith(b"event: end"): break
print(f"live view: {n} intervals followed", file=sys.stderr)
PY
wait "$run_pid" || true
after=$(cpu "$SERVE_PID")
live_cpu=$(python3 -c "print(f'{($after - $before) / $tick:.2f}')")
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true

verdict() { python3 -c "print('PASS' if $1 <= $2 else 'FAIL')"; }
echo "serve: runs page, 10 000 runs:        ${runs_ms} ms server (${runs_wall} ms at the client, $((runs_size / 1024)) KiB) target <= 300 ms $(verdict "$runs_ms" 300)"
echo "serve: run page, 2 000-step plan:     ${plan_ms} ms server (${plan_wall} ms at the client, $((plan_size / 1024)) KiB) target <= 1000 ms $(verdict "$plan_ms" 1000)"
echo "serve: live view of a 60 s run:        ${live_cpu} CPU-s in the serve process, target <= 0.6 $(verdict "$live_cpu" 0.6)"
echo "serve: /api/runs filtered, 10 000 runs: ${api_ms} ms server"
echo "serve: GET /api/runs/1 on one connection: ${rps} requests/s"
