"""grid --plot: the 16 x labels of the paper's grid are readable (issue 44 §5). Draws the plot as SVG
and reads gnuplot's tick labels back: each is short (what every label shares is said once, in the x
label), reads across or upwards (not slanted), and no two of them overlap, with each label's box
taken as 0.6 em a character by 1.3 em (sans, the terminal's font) at gnuplot's own positions.
Usage: plot_labels.py BUDGET_MATCH OUT_DIR"""

import math
import os
import re
import subprocess
import sys

exe, out_dir = sys.argv[1], sys.argv[2]
svg = os.path.join(out_dir, "grid_labels.svg")
run = subprocess.run([exe, "grid", "--plot", svg, "--format", "csv"], capture_output=True, text=True)
assert run.returncode == 0, run.stderr
text = open(svg, encoding="utf-8").read()
ticks = re.findall(r'<g transform="translate\(([-0-9.]+),([-0-9.]+)\)(?: rotate\(([-0-9.]+)\))?"[^>]*'
                   r'font-size="([0-9.]+)"[^>]*>\s*<text>([^<]*)</text>', text)
# The x tick labels: the 16 texts on the row under the plot that name the cells.
rows = {}
for x, y, angle, size, label in ticks:
    if re.search(r"\d+(\.\d+)?[MB]", label):
        rows.setdefault(y, []).append((float(x), float(angle or 0), float(size), label))
assert rows, "no tick labels found"
labels = max(rows.values(), key=len)
assert len(labels) == 16, labels
for _, angle, _, label in labels:
    assert len(label) <= 10, f"label {label!r} is long: what all labels share should be said once"
    assert angle % 90 == 0, f"label {label!r} is slanted by {angle} degrees"
assert "each label L stands for paper-L-baseline" in text, "the x label does not say what was left out"


def extent(x, angle, size, label):
    """The label's extent along the x axis: its width across (centred on its tick), its height upwards."""
    half = 0.6 * size * len(label) / 2 if angle % 180 == 0 else 1.3 * size / 2
    return x - half, x + half


labels.sort()
for a, b in zip(labels, labels[1:]):
    lo_a, hi_a = extent(*a)
    lo_b, hi_b = extent(*b)
    assert hi_a <= lo_b, f"labels {a[3]!r} and {b[3]!r} overlap ({hi_a:.1f} > {lo_b:.1f})"
print(f"{len(labels)} labels: {', '.join(l[3] for l in labels)}")
