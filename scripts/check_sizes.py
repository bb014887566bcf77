#!/usr/bin/env python3
"""Checks issue 16's size rule (issue 40: libbudget, cli, render and python): no file over
MAX_FILE_LINES lines and no function body over MAX_FUNCTION_LINES lines (docs/architecture.md, "Sizes").

A function is a brace block opened at namespace or class scope right after a closing parenthesis
(optionally followed by const, noexcept, override, final, a trailing return type or a
constructor's member-initialiser list): its length counts the lines from its signature's last line
to its closing brace. Comments, string and character literals and raw strings are blanked first,
so braces inside them do not count. Lambdas and blocks inside a function count toward it.

In Python (*.py) a function is a def (or async def, a method included) as the ast module reads it:
its length counts the lines from the def to its last line; a def nested in another counts toward
the outer one and is checked on its own as well.

Usage: check_sizes.py [--max-file N] [--max-function N] ROOT...
  ROOT: folders searched for *.cpp, *.hpp and *.py (e.g. libbudget/src)
Exit 0 when every file and function is within the limits, 1 with one line per violation
(path:line, the name, the length, the limit) otherwise, 2 on bad arguments.
"""
import argparse
import ast
import pathlib
import re
import sys

from check_report import report

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80


def blank_literals(text):
    """`text` with comments, string/char literals and raw strings replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ \n]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator (1'000)
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


SIGNATURE_TAIL = re.compile(
    r"\)\s*(?:const\s*)?(?:noexcept(?:\([^()]*\))?\s*)?(?:override\s*|final\s*)*(?:->\s*[\w:<>,\s*&]+?\s*)?$")


def function_name(header):
    """The name before the parameter list of a signature (best effort, for the report)."""
    depth, k = 0, len(header) - 1
    while k >= 0:  # the '(' matching the last ')' of the parameter list
        if header[k] == ")":
            depth += 1
        elif header[k] == "(":
            depth -= 1
            if depth == 0:
                break
        k -= 1
    m = re.search(r"([~\w:]+(?:operator\s*\S+?)?)\s*$", header[:max(k, 0)])
    return m.group(1) if m else "?"


def long_functions(text, limit):
    """(line, name, lines) of every function longer than `limit` lines in blanked `text`."""
    found = []
    scopes = []  # for each open brace: True when it opened a function
    line = 1
    last_stop = 0  # where the current statement began (after the last ; { or })
    starts = []
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            inside_function = any(scopes)
            header = text[last_stop:i].strip()
            is_function = False
            if not inside_function and header:
                # a member-initialiser list: Foo(...) : a_(x), b_{y} {  — cut at the first ':' after ')'
                candidate = re.sub(r"\)\s*:\s*[\w\s:(),{}<>.&*+\-]*$", ")", header) if ")" in header else header
                is_function = bool(SIGNATURE_TAIL.search(candidate))
                # a control statement or an initialiser (x = f(...) {...}) is not a definition
                if re.match(r"(?:if|for|while|switch|catch|do|else)\b", candidate) or "=" in candidate.split("(")[0]:
                    is_function = False
            scopes.append(is_function)
            if is_function:
                starts.append((line, function_name(header)))
            last_stop = i + 1
        elif c == "}":
            if scopes:
                was_function = scopes.pop()
                if was_function:
                    start_line, name = starts.pop()
                    length = line - start_line + 1
                    if length > limit:
                        found.append((start_line, name, length))
            last_stop = i + 1
        elif c == ";":
            last_stop = i + 1
    return found


def long_python_functions(text, limit, filename):
    """(line, name, lines) of every def longer than `limit` lines in Python source `text`."""
    found = []
    for node in ast.walk(ast.parse(text, filename=filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                found.append((node.lineno, node.name, length))
    return sorted(found)


def long_functions_of(path, text, limit):
    """The long functions of one source file, by its language."""
    if path.suffix == ".py":
        return long_python_functions(text, limit, str(path))
    return long_functions(blank_literals(text), limit)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-file", type=int, default=MAX_FILE_LINES)
    parser.add_argument("--max-function", type=int, default=MAX_FUNCTION_LINES)
    parser.add_argument("roots", nargs="+")
    args = parser.parse_args()
    violations = []
    files = 0
    for root in args.roots:
        path = pathlib.Path(root)
        if not path.is_dir():
            print(f"error: {root} is not a folder", file=sys.stderr)
            return 2
        for f in sorted(p for p in path.rglob("*") if p.suffix in (".cpp", ".hpp", ".py")):
            files += 1
            text = f.read_text(encoding="utf-8")
            lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if lines > args.max_file:
                violations.append(f"{f}: {lines} lines, over the {args.max_file}-line limit for a file")
            for line, name, length in long_functions_of(f, text, args.max_function):
                violations.append(f"{f}:{line}: {name} is {length} lines, over the {args.max_function}-line limit for a function")
    return report(violations, f"{len(violations)} violation(s) in {files} files",
                  f"sizes: {files} files, every file within {args.max_file} lines and every function within "
                  f"{args.max_function}")


if __name__ == "__main__":
    sys.exit(main())
