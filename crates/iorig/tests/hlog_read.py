"""Reads an `iorig export --format hlog` log back with HdrHistogram's Python
package (PyPI `hdrhistogram`, module `hdrh`), an implementation iorig shares
no code with, and checks it against the run's JSON export: every measured
interval's count and percentiles, every step's merge, and the percentile CSV.

Usage: python3 hlog_read.py RUN.hlog RUN.percentiles.csv RUN.json
Prints one line of totals and exits 0, or names the first mismatch and exits 1.
"""

import bisect
import csv
import json
import math
import re
import sys

from hdrh.histogram import HdrHistogram

# The quantiles iorig asks its histograms for, as the same binary doubles:
# 99.9 / 100 is 0.9990000000000001, not 0.999, and the rank ceil(q * n)
# then differs by one whenever 0.999 * n is a whole number (n = 1000, 2000,
# ...), which made this check fail on such counts.
PERCENTILES = [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99_9", 0.999), ("p99_99", 0.9999)]


def fail(msg):
    print("hlog check: " + msg)
    sys.exit(1)


def cumulative(h):
    """The recorded values of a decoded histogram in order, and how many
    values lie at or below each: one walk of hdrh's recorded-value iterator
    (a walk takes a good part of a second in Python), which every count and
    percentile below is then read from."""
    values, at_or_below = [], []
    seen = 0
    for item in h.get_recorded_iterator():
        seen += item.count_at_value_iterated_to
        values.append(item.value_iterated_to)
        at_or_below.append(seen)
    return values, at_or_below


def nearest_rank(h, walk, q):
    """The value at a percentile as iorig defines it (nearest rank: the
    smallest recorded value with at least ceil(q * count) values at or below
    it, reported as the highest value of its bucket), computed from the
    decoded bucket counts alone."""
    values, at_or_below = walk
    k = bisect.bisect_left(at_or_below, max(1, math.ceil(q * h.get_total_count())))
    if k == len(values):
        fail("quantile %s beyond the recorded values" % q)
    return h.get_highest_equivalent_value(values[k])


def check_op(h, op, where):
    if h.get_total_count() != op["ops"]:
        fail("%s: %d values decoded, the run counted %d" % (where, h.get_total_count(), op["ops"]))
    if op["ops"] == 0:
        return
    lat = op["lat_ns"]
    walk = cumulative(h)
    for key, q in PERCENTILES:
        got = nearest_rank(h, walk, q)
        if got != lat[key]:
            fail("%s: %s is %d decoded, %d in the run" % (where, key, got, lat[key]))
    if not h.values_are_equivalent(h.get_max_value(), lat["max"]):
        fail("%s: max %d decoded, %d in the run" % (where, h.get_max_value(), lat["max"]))
    if abs(h.get_mean_value() - lat["mean"]) > 1.0:
        fail("%s: mean %.1f decoded, %d in the run" % (where, h.get_mean_value(), lat["mean"]))


def main():
    hlog_path, csv_path, json_path = sys.argv[1:4]
    run = json.load(open(json_path, encoding="utf-8"))
    lines = {None: [], "read": [], "write": [], "trim": []}
    start_time = None
    for line in open(hlog_path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = re.match(r"#\[StartTime: ([\d.]+) ", line)
        if m:
            start_time = float(m.group(1))
        if line.startswith("#") or line.startswith('"StartTimestamp"'):
            continue
        tag = None
        if line.startswith("Tag="):
            tag, line = line[4:].split(",", 1)
        start, length, _max, payload = line.split(",")
        lines[tag].append((float(start), float(length), HdrHistogram.decode(payload), payload))
    if start_time is None:
        fail("no #[StartTime: ...] line")

    cursor = {None: 0, "read": 0, "write": 0, "trim": 0}
    intervals = 0
    steps = 0
    merged = {}
    for step in run["steps"]:
        measured = [i for i in step.get("intervals") or [] if not i["warmup"]]
        if not measured:
            continue
        steps += 1
        total = None
        for i in measured:
            for tag, key in [(None, "total"), ("read", "read"), ("write", "write"), ("trim", "trim")]:
                if tag is not None and (key not in i or i[key]["ops"] == 0):
                    continue
                if cursor[tag] >= len(lines[tag]):
                    fail("step %d interval %d %s: missing from the log" % (step["index"], i["seq"], key))
                start, length, h, payload = lines[tag][cursor[tag]]
                cursor[tag] += 1
                where = "step %d interval %d %s" % (step["index"], i["seq"], key)
                if abs(length - i["duration_s"]) > 0.0011:
                    fail("%s: length %.3f s, the run says %.3f s" % (where, length, i["duration_s"]))
                check_op(h, i[key], where)
                if tag is None:
                    intervals += 1
                    if total is None:
                        # Each interval's histogram covers only its own range
                        # (iorig's grow as needed); the merge covers 1 ns to 1 h.
                        total = HdrHistogram(1, 3600 * 10**9, h.significant_figures)
                    total.add(h)
        # The intervals merge to the step's summary, exactly.
        check_op(total, step["summary"]["total"], "step %d merged" % step["index"])
        merged[step["index"]] = total
    for tag, n in cursor.items():
        if n != len(lines[tag]):
            fail("%d more %s lines in the log than measured intervals" % (len(lines[tag]) - n, tag or "untagged"))

    # The percentile CSV: each step's total spectrum ends at its count and max.
    rows = {}
    for r in csv.DictReader(open(csv_path, encoding="utf-8")):
        if r["op"] == "total":
            rows.setdefault(int(r["step_index"]), []).append(r)
    for index, h in merged.items():
        spectrum = rows.get(index)
        if not spectrum:
            fail("step %d: no total rows in the percentile CSV" % index)
        last = spectrum[-1]
        if int(last["total_count"]) != h.get_total_count():
            fail("step %d: the spectrum ends at %s values, the log has %d" % (index, last["total_count"], h.get_total_count()))
        if not h.values_are_equivalent(int(last["value_ns"]), h.get_max_value()):
            fail("step %d: the spectrum ends at %s ns, the log's max is %d" % (index, last["value_ns"], h.get_max_value()))
        values, at_or_below = cumulative(h)
        for r in spectrum:
            pct = float(r["percentile"])
            # Each row's count is the values at or below its value.
            k = bisect.bisect_right(values, int(r["value_ns"]))
            below = at_or_below[k - 1] if k else 0
            if below != int(r["total_count"]):
                fail("step %d: %s values at or below %s ns in the CSV, %d in the log" % (index, r["total_count"], r["value_ns"], below))
            if pct < 100.0 and below < pct / 100.0 * h.get_total_count() - 1e-6:
                fail("step %d: the %s %% row has only %d of %d values" % (index, r["percentile"], below, h.get_total_count()))
    print("hlog check: %d intervals of %d steps read back by hdrh: counts, percentiles, max and mean agree" % (intervals, steps))


main()
