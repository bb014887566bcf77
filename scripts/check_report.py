"""The one way the repository's check scripts end: each problem on a line of its own, then a summary.

report(problems, failure_summary, success_line) prints every problem (one line each); with any, it
prints failure_summary and returns 1, else it prints success_line and returns 0 (the exit status).
read_json_argument(argv, usage) returns the JSON of argv[1] for a script called with two
arguments, else prints `usage` to stderr and returns None (the caller exits 2).
"""
import json
import sys


def report(problems, failure_summary, success_line):
    for problem in problems:
        print(problem)
    if problems:
        print(failure_summary)
        return 1
    print(success_line)
    return 0


def read_json_argument(argv, usage):
    if len(argv) != 3:
        print(usage, file=sys.stderr)
        return None
    with open(argv[1], encoding="utf-8") as f:
        return json.load(f)
