#!/usr/bin/env python3
"""Copy the part of the published kernel tables that `budget-match calibrate --from-kernels` reads
into the repository (data/kernels/kernels.json; data/kernels/README.md says where it comes from).

  python3 scripts/kernels_subset.py COLLECTION/kernels.json data/kernels/kernels.json

Keeps the file's "schema", "gpus" and "shared_notes" whole and the rows of the seven GPUs with a
profile (A100_SXM4_80GB, H100_SXM, H200_SXM, B200, GB200, B300, GB300) whose op the builder reads (gemm,
attn_fwd, attn_bwd, attn_fwd_bwd, norm), every field of each row unchanged except "source", which
is replaced by "source_ref", its index in a top-level "sources" list (the same text, stored once;
the builder reads either form); one row a line so the copy diffs line by line. The builder (libbudget/src/time/calibration_published.cpp) selects among
these rows itself: this script decides nothing about them.
"""
import json
import sys

from check_report import read_json_argument

GPUS = {"A100_SXM4_80GB", "H100_SXM", "H200_SXM", "B200", "GB200", "B300", "GB300"}
OPS = {"gemm", "attn_fwd", "attn_bwd", "attn_fwd_bwd", "norm"}


def main(argv):
    data = read_json_argument(argv, __doc__)
    if data is None:
        return 2
    rows = [dict(r) for r in data["rows"] if r.get("gpu") in GPUS and r.get("op") in OPS]
    sources = []
    index = {}
    for r in rows:
        if "source" in r:
            text = r.pop("source")
            if text not in index:
                index[text] = len(sources)
                sources.append(text)
            r["source_ref"] = index[text]
    head = {k: data[k] for k in ("schema", "gpus", "shared_notes") if k in data}
    head["sources"] = sources
    head["subset"] = ("rows of " + ", ".join(sorted(GPUS)) + " with op in " + ", ".join(sorted(OPS)) +
                      f": {len(rows)} of {len(data['rows'])}, copied unchanged by scripts/kernels_subset.py")
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("{\n")
        for key, value in head.items():
            f.write(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},\n")
        f.write('  "rows": [\n')
        for i, r in enumerate(rows):
            f.write("    " + json.dumps(r, ensure_ascii=False) + ("," if i + 1 < len(rows) else "") + "\n")
        f.write("  ]\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
