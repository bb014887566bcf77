#!/usr/bin/env python3
"""budget-match rows are shown best-first (docs/matching.md, "Objective and ranking").

Usage: rows_best_first.py EXE SOURCE_DIR [match arguments...]. Runs the match as JSON and as a
table and checks, independently of the library: with summary.order "shown_deviation", the largest
|deviation| in hundredths of a percent (what the table prints) never decreases down the rows,
ties by the second and third largest, then by the proportion distance; summary.best_max_deviation
is row #1's largest |deviation|; the table's footer says how the rows are ordered.
"""
import json
import subprocess
import sys


def shown(c):
    d = c["deviation"]
    return sorted((round(1e4 * abs(d[k])) for k in ("flops", "params", "kv")), reverse=True)


def main():
    exe, source, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = subprocess.run([exe, *args, "--format", "json"], cwd=source, check=True, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    rows = doc["candidates"]
    summary = doc["summary"]
    assert len(rows) >= 2, f"need at least two rows, got {len(rows)}"
    assert summary["order"] == "shown_deviation", summary["order"]
    keys = [(shown(c), c["proportion_distance"]) for c in rows]
    for i in range(1, len(keys)):
        assert keys[i - 1] <= keys[i], f"row #{i} {keys[i - 1]} is shown above row #{i + 1} {keys[i]}"
    assert summary["best_max_deviation"] == rows[0]["deviation"]["max"], summary
    table = subprocess.run([exe, *args], cwd=source, check=True, capture_output=True, text=True).stdout
    assert "by the largest |deviation| shown" in table, table
    expected = "matched: #1 max deviation {:.3f}%".format(100 * rows[0]["deviation"]["max"])
    assert expected in table, (expected, table)
    print("rows best-first:", [k[0][0] for k in keys])


if __name__ == "__main__":
    main()
