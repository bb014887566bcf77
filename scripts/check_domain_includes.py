#!/usr/bin/env python3
"""Checks the include direction between libbudget's domains.

libbudget/CMakeLists.txt declares the domains lowest first, each with the domains it may include
(DEPENDS) and the public headers (include/budget/*.hpp) that belong to it, and writes that table
as JSON: {"base": {"rank": 1, "depends": [], "public_headers": ["error.hpp", ...]}, ...}.

The rules, each reported with file:line:
  * every file under src/ lies in a domain folder (src/<domain>/), none at the top level;
  * every public header belongs to exactly one domain;
  * a quoted include is "budget/<header>.hpp" (public) or "<domain>/<file>.hpp" (private) and names
    a file that exists;
  * a file of domain D includes only headers of D and of the domains D depends on, transitively;
  * a public header includes no private header (users cannot see src/);
  * a domain depends only on domains declared before it.

Usage: check_domain_includes.py --domains TABLE.json --root LIBBUDGET_DIR
Exit 0 when every rule holds, 1 with one line per violation otherwise, 2 on bad arguments.
"""
import argparse
import json
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def closure(table, name, seen=None):
    """The domains `name` may include: itself and its dependencies, transitively."""
    seen = set() if seen is None else seen
    if name in seen:
        return seen
    seen.add(name)
    for dep in table[name]["depends"]:
        closure(table, dep, seen)
    return seen


def check(table, root):
    errors = []
    src = root / "src"
    public_dir = root / "include" / "budget"
    owner = {}
    for name, entry in table.items():
        for dep in entry["depends"]:
            if dep not in table:
                errors.append(f"domain {name}: depends on unknown domain '{dep}'")
            elif table[dep]["rank"] >= entry["rank"]:
                errors.append(f"domain {name}: depends on '{dep}', declared after it")
        for header in entry["public_headers"]:
            if header in owner:
                errors.append(f"budget/{header}: claimed by domains {owner[header]} and {name}")
            owner[header] = name
    if errors:
        return errors

    files = []
    for path in sorted(src.rglob("*")):
        if not path.is_file() or path.suffix not in (".cpp", ".hpp", ".h", ".cc"):
            continue
        rel = path.relative_to(src)
        if len(rel.parts) < 2:
            errors.append(f"src/{rel}: a file at the top level of src/; put it in a domain folder")
            continue
        if rel.parts[0] not in table:
            errors.append(f"src/{rel}: folder '{rel.parts[0]}' is not a declared domain")
            continue
        files.append((path, f"src/{rel}", rel.parts[0], False))
    for path in sorted(public_dir.glob("*.hpp")):
        if path.name not in owner:
            errors.append(f"include/budget/{path.name}: belongs to no domain (add it to PUBLIC_HEADERS "
                          "in libbudget/CMakeLists.txt)")
            continue
        files.append((path, f"include/budget/{path.name}", owner[path.name], True))

    for path, shown, domain, is_public in files:
        allowed = closure(table, domain)
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quote, target = match.groups()
            where = f"{shown}:{number}"
            if quote == "<":
                if target.startswith("budget/"):
                    errors.append(f'{where}: <{target}>: include budget headers with quotes, "{target}"')
                continue
            parts = target.split("/")
            if parts[0] == "budget" and len(parts) == 2:
                header = parts[1]
                if header == "version.hpp":  # generated into the build tree; depends on nothing
                    continue
                if header not in owner:
                    errors.append(f'{where}: "{target}" is not a public header of any domain')
                    continue
                target_domain = owner[header]
            elif len(parts) == 2 and parts[0] in table:
                if is_public:
                    errors.append(f'{where}: a public header includes the private "{target}"')
                    continue
                if not (src / target).is_file():
                    errors.append(f'{where}: "{target}" does not exist under src/')
                    continue
                target_domain = parts[0]
            else:
                errors.append(f'{where}: "{target}" is neither "budget/<header>.hpp" nor "<domain>/<file>"')
                continue
            if target_domain not in allowed:
                errors.append(f'{where}: domain {domain} includes "{target}" of domain {target_domain}, '
                              f"which is not among its dependencies ({', '.join(sorted(allowed))})")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", required=True, help="the domain table JSON written by CMake")
    parser.add_argument("--root", required=True, help="the libbudget directory (holds src/ and include/)")
    args = parser.parse_args()
    try:
        table = json.loads(pathlib.Path(args.domains).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"check_domain_includes: cannot read {args.domains}: {error}", file=sys.stderr)
        return 2
    errors = check(table, pathlib.Path(args.root))
    for error in errors:
        print(f"domain includes: {error}", file=sys.stderr)
    if errors:
        print(f"domain includes: {len(errors)} violation(s); the domains and their order are in "
              "libbudget/CMakeLists.txt", file=sys.stderr)
        return 1
    print(f"domain includes: {len(table)} domains, every include points downwards")
    return 0


if __name__ == "__main__":
    sys.exit(main())
