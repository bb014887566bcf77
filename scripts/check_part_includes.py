#!/usr/bin/env python3
"""Checks what the parts outside libbudget include: render/, python/ and cli/ (issue 40).

The parts and what each may include (docs/architecture.md, "Includes outside the library"):
  render  libbudget's public headers ("budget/<h>.hpp") and its own ("budget_render/<h>.hpp");
  python  libbudget's public headers, render's and its own (python/<h>.hpp);
  cli     libbudget's public headers, render's and its own (cli/<h>.hpp, cli/commands/<h>.hpp).
No part includes a private header of libbudget ("<domain>/<file>.hpp" under libbudget/src), and no
part includes another part's own headers but render's. An own header is found as the compiler finds
it: beside the including file, else at the part's root (its include directory).

Two more rules keep each part's files in an order:
  * a part's own headers include each other in no circle;
  * a .cpp file declares no function at namespace scope that it does not define: a function
    another file defines is declared in that file's header, so that no two files declare each
    other's functions (the circle python/budget_module.cpp and cluster_bindings.cpp had).

Usage: check_part_includes.py --root REPO_ROOT
Exit 0 when every rule holds, 1 with one line per violation (path:line) otherwise, 2 on bad arguments.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# A namespace-scope declaration at the start of a line: a return type, a name, a parameter list
# on one line, then ';' (a definition has a body instead).
DECLARATION = re.compile(r'^(?!return\b|using\b|typedef\b|static_assert\b|friend\b)'
                         r'[A-Za-z_][\w:<>,\s*&]*?[\s*&]([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^()]*\)[^;{}()]*)*\)'
                         r'\s*(?:const\s*)?(?:noexcept\s*)?;\s*(?://.*)?$')

PARTS = {
    "render": {"dirs": ["render/src", "render/include/budget_render"], "root": "render/include",
               "own_prefix": "budget_render/", "render": True},
    "python": {"dirs": ["python"], "root": "python", "own_prefix": None, "render": True},
    "cli": {"dirs": ["cli"], "root": "cli", "own_prefix": None, "render": True},
}
SOURCE_SUFFIXES = (".cpp", ".hpp")


def part_files(repo, part):
    """The part's C++ files (python/'s package folder holds no C++)."""
    files = []
    for folder in PARTS[part]["dirs"]:
        files += [p for p in sorted((repo / folder).rglob("*")) if p.is_file() and p.suffix in SOURCE_SUFFIXES]
    return files


def resolve_own(repo, part, including, target):
    """The own header `target` of `part` names (beside the including file, else at the part's root), or None."""
    spec = PARTS[part]
    if spec["own_prefix"] is not None:
        if not target.startswith(spec["own_prefix"]):
            return None
        candidate = repo / spec["root"] / target
        return candidate if candidate.is_file() else None
    for base in (including.parent, repo / spec["root"]):
        candidate = (base / target).resolve()
        if candidate.is_file() and (repo / spec["root"]).resolve() in candidate.parents:
            return candidate
    return None


def include_error(repo, part, path, target, public, render_headers, private_domains):
    """Why `path` (of `part`) may not include "target", or None."""
    parts = target.split("/")
    if parts[0] == "budget" and len(parts) == 2:
        if parts[1] in public or parts[1] == "version.hpp":  # version.hpp: generated into the build tree
            return None
        return f'"{target}" is not a public header of libbudget (libbudget/include/budget/)'
    if parts[0] == "budget_render" and len(parts) == 2:
        if parts[1] in render_headers:
            return None
        return f'"{target}" is not a header of render/include/budget_render/'
    if resolve_own(repo, part, path, target) is not None:
        return None
    if len(parts) >= 2 and parts[0] in private_domains:
        return f'"{target}" is a private header of libbudget (domain {parts[0]}); include only "budget/<header>.hpp"'
    for other in PARTS:
        if other != part and resolve_own(repo, other, repo / PARTS[other]["root"] / "x", target) is not None:
            return f'"{target}" is a header of {other}/, which {part}/ may not include'
    return f'"{target}" is no header {part}/ may include (libbudget\'s public ones, render\'s, its own)'


def own_includes(repo, part, path):
    """The own headers `path` includes: [(line, header path)]."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        match = INCLUDE.match(line)
        if match and match.group(1) == '"':
            own = resolve_own(repo, part, path, match.group(2))
            if own is not None:
                found.append((number, own))
    return found


def circles(repo, part, files):
    """Each include circle among the part's own headers, once: [(file, line, text)]."""
    graph = {f.resolve(): own_includes(repo, part, f) for f in files if f.suffix == ".hpp"}
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for line, target in graph.get(node, []):
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                names = " -> ".join(str(p.relative_to(repo.resolve())) for p in cycle)
                found.append((node, line, f"an include circle: {names}"))
            elif target not in state:
                visit(target, stack + [target])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def foreign_declarations(path):
    """(line, name) of each namespace-scope function a .cpp declares without defining it."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = DECLARATION.match(line)
        if not match:
            continue
        name = match.group(1)
        definition = re.compile(r"\b" + re.escape(name) + r"\s*\([^;]*?\)[^;{]*\{", re.S)
        if not definition.search(text):
            found.append((number, name))
    return found


def check(repo):
    errors = []
    public = {p.name for p in (repo / "libbudget/include/budget").glob("*.hpp")}
    render_headers = {p.name for p in (repo / "render/include/budget_render").glob("*.hpp")}
    src = repo / "libbudget/src"
    private_domains = {p.name for p in src.iterdir() if p.is_dir()} if src.is_dir() else set()
    for part in PARTS:
        files = part_files(repo, part)
        for path in files:
            shown = path.relative_to(repo)
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                quote, target = match.groups()
                if quote == "<":
                    if target.split("/")[0] in ("budget", "budget_render"):
                        errors.append(f'{shown}:{number}: <{target}>: include the project\'s headers with quotes')
                    continue
                why = include_error(repo, part, path, target, public, render_headers, private_domains)
                if why:
                    errors.append(f"{shown}:{number}: {why}")
            if path.suffix == ".cpp":
                for number, name in foreign_declarations(path):
                    errors.append(f"{shown}:{number}: declares {name}(), which another file defines: include "
                                  "that file's header instead")
        for node, line, text in circles(repo, part, files):
            errors.append(f"{node.relative_to(repo.resolve())}:{line}: {text}")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the repository (holds libbudget/, render/, python/, cli/)")
    args = parser.parse_args()
    repo = pathlib.Path(args.root)
    if not (repo / "libbudget/include/budget").is_dir():
        print(f"check_part_includes: {args.root} holds no libbudget/include/budget/", file=sys.stderr)
        return 2
    errors = check(repo)
    for error in errors:
        print(f"part includes: {error}", file=sys.stderr)
    if errors:
        print(f"part includes: {len(errors)} violation(s); what each part may include: scripts/check_part_includes.py",
              file=sys.stderr)
        return 1
    print(f"part includes: {', '.join(PARTS)} include only what they may, with no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
