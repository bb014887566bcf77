#!/usr/bin/env python3
"""Checks that docs/architecture.md's domain table matches the domains CMake declares.

Usage: check_architecture_doc.py DOMAINS_JSON ARCHITECTURE_MD

DOMAINS_JSON is the table libbudget/CMakeLists.txt writes (build/generated/budget_domains.json):
{name: {"rank": r, "depends": [...], "public_headers": ["x.hpp", ...]}}. The document must have,
under "## Library", one table row per domain, in rank order:

    | rank | `name/` | dep, dep (or —) | what it holds | `header`, `header_*` |

and say how many domains there are in words ("The library is twelve domains"). Checked: the
count, each row's rank and name, its "may include" list equal to the declared dependencies (as a
set), and its public headers: each declared header matched by one of the row's names (a `*` is a
wildcard) and each of the row's names matching a declared header. Prints every mismatch with the
line number and exits 1 when there is one.
"""
import fnmatch
import re
import sys

from check_report import read_json_argument, report

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                "seventeen", "eighteen", "nineteen", "twenty"]


def table_rows(lines):
    """(line number, cells) of the domain table's body rows: the rows whose second cell is a
    backticked folder name."""
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.startswith("| "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not re.fullmatch(r"`[a-z_]+/`", cells[1]):
            continue
        rows.append((number, [cells[0], cells[1], cells[2], "|".join(cells[3:-1]), cells[-1]]))
    return rows


def backticked(text):
    return re.findall(r"`([^`]+)`", text)


def check_row(number, cells, name, spec, problems):
    if cells[0] != str(spec["rank"]):
        problems.append(f"line {number}: domain {name} is rank {spec['rank']}, the row says {cells[0]}")
    written = set() if cells[2] in ("—", "-", "") else {d.strip() for d in cells[2].split(",")}
    declared = set(spec["depends"])
    if written != declared:
        problems.append(f"line {number}: domain {name} may include {sorted(declared) or 'nothing'}, "
                        f"the row says {sorted(written) or 'nothing'}")
    patterns = backticked(cells[4])
    headers = [h[:-len(".hpp")] for h in spec["public_headers"]]
    for header in headers:
        if not any(fnmatch.fnmatchcase(header, p) for p in patterns):
            problems.append(f"line {number}: public header budget/{header}.hpp of domain {name} is not in the row")
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(h, pattern) for h in headers):
            problems.append(f"line {number}: the row of domain {name} names `{pattern}`, not a public header of it")


def main(argv):
    domains = read_json_argument(argv, __doc__)
    if domains is None:
        return 2
    with open(argv[2], encoding="utf-8") as f:
        lines = f.read().splitlines()
    problems = []
    count = len(domains)
    word = NUMBER_WORDS[count] if count < len(NUMBER_WORDS) else str(count)
    if not any(f"library is {word} domains" in line for line in lines):
        problems.append(f"{argv[2]}: does not say 'The library is {word} domains' ({count} declared)")
    rows = table_rows(lines)
    by_name = {cells[1][1:-2]: (number, cells) for number, cells in rows}
    for name in sorted(set(by_name) - set(domains)):
        problems.append(f"line {by_name[name][0]}: a row for `{name}/`, which CMake does not declare")
    ordered = sorted(domains.items(), key=lambda item: item[1]["rank"])
    for name, spec in ordered:
        if name not in by_name:
            problems.append(f"{argv[2]}: no table row for domain {name}")
            continue
        check_row(*by_name[name], name, spec, problems)
    row_order = [cells[1][1:-2] for _, cells in rows if cells[1][1:-2] in domains]
    if row_order != [name for name, _ in ordered if name in by_name]:
        problems.append(f"{argv[2]}: the table's rows are not in rank order: {row_order}")
    return report(problems, f"{len(problems)} mismatch(es) between {argv[2]} and {argv[1]}",
                  f"{argv[2]}: {count} domains, their dependencies and public headers match CMake")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
