#!/usr/bin/env bash
# Benchmark (not a test): what reading a week-long soak costs (issue 38).
# Builds a store with two runs of one step of INTERVALS one-second intervals each
# (default 604 800, a week; read, write and total rows, each with its histogram)
# through the store's own API (crates/iorig-store/examples/soak_store.rs: about a
# minute), then times every reader of run 1 and prints its wall time and peak RSS:
#   - iorig report, iorig export --format csv|json|xlsx, iorig runs show,
#     iorig compare 1 2;
#   - iorig serve's run page (/runs/1) and step page (/runs/1/steps/1), each on a
#     fresh server (random loopback port), its peak RSS read from /proc (VmHWM).
# Targets: exports in <= 64 MiB RSS at any length; the report and the run page
# <= 5 s. A reader that fails is reported as FAILED with its exit code (XLSX
# refuses more intervals than a sheet holds).
#
#   bench/soak.sh                        # builds iorig and the store tool (release)
#   INTERVALS=100000 bench/soak.sh       # a shorter soak
#   KEEP=dir bench/soak.sh               # keep the store and the outputs in dir
#                                        # (a second run reuses the store)
#   IORIG=path SOAK_STORE=path bench/soak.sh   # use these binaries, build nothing
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
INTERVALS=${INTERVALS:-604800}
if [[ -z ${IORIG:-} ]]; then
    (cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet -p iorig)
    IORIG=$TARGET_DIR/release/iorig
fi
if [[ -z ${SOAK_STORE:-} ]]; then
    (cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet \
        -p iorig-store --example soak_store)
    SOAK_STORE=$TARGET_DIR/release/examples/soak_store
fi
WORK=${KEEP:-$(mktemp -d)}
mkdir -p "$WORK"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$WORK"' EXIT
cd "$WORK"
DB=$WORK/soak-$INTERVALS.db

if [[ ! -f $DB ]]; then
    echo "soak: building a store of 2 runs x $INTERVALS intervals" >&2
    start=$(date +%s.%N)
    "$SOAK_STORE" "$DB" "$INTERVALS" 2
    end=$(date +%s.%N)
    python3 -c "import os,sys; print(f'store built in {float(sys.argv[2])-float(sys.argv[1]):.1f} s, {os.path.getsize(sys.argv[3])/2**20:.0f} MiB')" \
        "$start" "$end" "$DB" >&2
fi

printf '%-28s %10s %12s  %s\n' reader "wall (s)" "peak RSS" output
# Runs a reader under /usr/bin/time; prints its wall time, peak RSS and what it
# wrote (the size of OUT, a file or a directory).
measure() {
    local name=$1 out=$2
    shift 2
    rm -rf "$out" "${out%%.*}".* 2>/dev/null || true
    local rc=0
    /usr/bin/time -f '%e %M' -o time.txt "$@" > reader.log 2>&1 || rc=$?
    read -r wall kib < <(tail -1 time.txt)
    local size=""
    [[ -e $out ]] && size=$(du -sh "$out" | cut -f1)
    if [[ $rc -ne 0 ]]; then
        size="FAILED (exit $rc): $(grep -v 'Command exited' reader.log | head -1)"
    fi
    printf '%-28s %10s %9d MiB  %s\n' "$name" "$wall" $((kib / 1024)) "$size"
}

measure "report" report "$IORIG" report 1 --db "$DB" --out report
measure "export csv" soak.intervals.csv "$IORIG" export 1 --format csv --db "$DB" --out soak.csv
measure "export json" soak.json "$IORIG" export 1 --format json --db "$DB" --out soak.json
measure "export xlsx" soak.xlsx "$IORIG" export 1 --format xlsx --db "$DB" --out soak.xlsx
measure "runs show" show.txt sh -c "'$IORIG' runs show 1 --db '$DB' > show.txt"
measure "compare 1 2" compare "$IORIG" compare 1 2 --db "$DB" --out compare

# Serve: one fresh server per page, so each page's peak RSS is its own.
start_serve() {
    "$IORIG" serve --db "$DB" --listen 127.0.0.1:0 > serve.log 2>&1 &
    SERVE_PID=$!
    pids+=("$SERVE_PID")
    for _ in $(seq 200); do
        ADDR=$(sed -n 's/.* at http:\/\/\([^/]*\)\/.*/\1/p' serve.log | head -1)
        [[ -n $ADDR ]] && return 0
        sleep 0.05
    done
    echo "serve did not start: $(cat serve.log)" >&2
    exit 1
}
serve_page() {
    local name=$1 path=$2
    start_serve
    local res code wall bytes
    res=$(curl -s -o page.html -w '%{http_code} %{time_total} %{size_download}' \
        --max-time 600 "http://$ADDR$path" || echo "000 0 0")
    read -r code wall bytes <<< "$res"
    local kib
    kib=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_PID/status")
    kill "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null || true
    printf '%-28s %10.2f %9d MiB  HTTP %s, %s bytes\n' "$name" "$wall" $((kib / 1024)) "$code" "$bytes"
}
serve_page "serve /runs/1" /runs/1
serve_page "serve /runs/1/steps/1" /runs/1/steps/1
serve_page "serve .../steps/1?page=150" "/runs/1/steps/1?page=150"
