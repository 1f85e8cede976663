#!/usr/bin/env bash
# shape.sh — the code's shape as issue 34 (one table of parameters) measures
# it, the same way before and after the work:
#
#   bench/shape.sh
#
# Prints:
#   - sites of the literal "qd" in Rust sources outside tests (crates/*/tests,
#     #[cfg(test)] modules): how many places name one parameter by hand;
#   - functions longer than 150, 200 and 400 lines outside tests, and the
#     longest ten with their file;
#   - lines of the binary crate (crates/iorig/src).
# Nothing is built or run; it reads the tree it is started in.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 - <<'PY'
import os, re

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)')

def sources():
    for root, dirs, files in os.walk("crates"):
        dirs[:] = [d for d in dirs if d not in ("tests", "target", "benches")]
        for f in files:
            # A `tests.rs` beside the code is its #[cfg(test)] module.
            if f.endswith(".rs") and f != "tests.rs":
                yield os.path.join(root, f)

def non_test_lines(path):
    """The file's lines up to its first #[cfg(test)] module."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, l in enumerate(lines):
        if l.strip().startswith("#[cfg(test)]"):
            nxt = next((x for x in lines[i + 1:] if x.strip() and not x.strip().startswith("#")), "")
            if re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s", nxt):
                break
        out.append(l)
    return out

qd_sites = []
functions = []
for path in sorted(sources()):
    lines = non_test_lines(path)
    for n, l in enumerate(lines, 1):
        code = l.split("//", 1)[0]
        if '"qd"' in code:
            qd_sites.append(f"{path}:{n}")
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        # The body: from the first '{' after the signature to its match.
        depth, start, j, opened = 0, i, i, False
        while j < len(lines):
            code = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j].split("//", 1)[0])
            code = re.sub(r"'(\\.|[^'\\])'", "''", code)
            if not opened and ";" in code and "{" not in code:
                break  # a declaration without a body
            for ch in code:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if opened and depth <= 0:
                break
            j += 1
        if opened:
            functions.append((j - start + 1, m.group(7), f"{path}:{start + 1}"))
        i = j + 1 if opened else i + 1

bin_lines = sum(len(open(os.path.join(r, f), encoding="utf-8").read().split("\n")) - 1
                for r, _, fs in os.walk("crates/iorig/src") for f in fs if f.endswith(".rs"))

print(f'"qd" literal sites outside tests: {len(qd_sites)}')
for s in qd_sites:
    print(f"  {s}")
for limit in (150, 200, 400):
    print(f"functions over {limit} lines: {sum(1 for f in functions if f[0] > limit)}")
print("longest functions:")
for length, name, where in sorted(functions, reverse=True)[:15]:
    print(f"  {length:5} {name} ({where})")
print(f"binary crate (crates/iorig/src): {bin_lines} lines")
PY
