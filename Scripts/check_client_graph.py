#!/usr/bin/env python3
"""Proves that the app library AnonAuthClient builds with Foundation alone, so that an
iOS or macOS app (and a Linux program) can depend on it: its product's targets and
everything they depend on are Swift targets of this package (no C, system-library or
binary target, no other package), and no source of them imports anything but Foundation,
FoundationNetworking (only under `#if canImport(FoundationNetworking)`), Security (only
under `#if canImport(Security)`) and the closure's own modules. `make test` runs it.

    python3 Scripts/check_client_graph.py [--describe FILE] [--root DIR] [--product NAME]

Without --describe it reads `swift package describe --type json` in ROOT (the
repository by default). Exit status 1 and one line per problem when the graph is not
clean."""

import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Modules every platform has with Foundation; the guarded ones need their `#if`.
ALLOWED = {"Foundation"}
GUARDED = {"FoundationNetworking", "Security"}
IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?"
    r"([A-Za-z_][A-Za-z0-9_]*)")
IF = re.compile(r"^\s*#if\s+(.*)$")
ELSEIF = re.compile(r"^\s*#(?:elseif|else)\b")
ENDIF = re.compile(r"^\s*#endif\b")


def describe(root):
    output = subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    # Some toolchains print progress lines before the JSON.
    return json.loads(output[output.index("{"):])


def closure(description, product):
    """The names of the targets `product` is made of, and of everything they depend on."""
    products = {p["name"]: p for p in description.get("products", [])}
    if product not in products:
        raise SystemExit(f"check_client_graph: no product {product!r} in the package")
    targets = {t["name"]: t for t in description["targets"]}
    seen, todo = [], list(products[product]["targets"])
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        todo.extend(targets.get(name, {}).get("target_dependencies", []))
    return seen, targets


def guarded_imports(text):
    """(line number, module, the `#if` conditions around it) for each import of a source."""
    stack = []
    for number, line in enumerate(text.splitlines(), 1):
        if m := IF.match(line):
            stack.append(m.group(1))
        elif ELSEIF.match(line) and stack:
            stack[-1] = "!(" + stack[-1] + ")"  # an #else is not the guard of its #if
        elif ENDIF.match(line) and stack:
            stack.pop()
        elif m := IMPORT.match(line):
            yield number, m.group(1), list(stack)


def problems(description, root, product):
    names, targets = closure(description, product)
    swift = {n for n in names if targets.get(n, {}).get("module_type") == "SwiftTarget"}
    found = []
    for name in names:
        target = targets.get(name)
        if target is None:
            found.append(f"{name}: not a target of this package (another package's product?)")
            continue
        if target.get("module_type") != "SwiftTarget":
            found.append(f"{name}: a {target.get('module_type', '?')}, not Swift: "
                         f"{product} would need it on every platform")
        for dependency in target.get("product_dependencies", []):
            found.append(f"{name}: depends on another package's product {dependency}")
        for source in target.get("sources", []):
            path = pathlib.Path(root) / target["path"] / source
            if path.suffix != ".swift":
                found.append(f"{name}/{source}: not a Swift source")
                continue
            for number, module, conditions in guarded_imports(path.read_text(encoding="utf-8")):
                where = f"{target['path']}/{source}:{number}"
                if module in ALLOWED or module in swift:
                    continue
                if module in GUARDED:
                    if f"canImport({module})" not in [c.replace(" ", "") for c in conditions]:
                        found.append(f"{where}: import {module} outside #if canImport({module})")
                    continue
                found.append(f"{where}: import {module}: only Foundation, FoundationNetworking "
                             f"and Security are allowed in {product}")
    return names, found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--describe", help="a saved `swift package describe --type json`")
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument("--product", default="AnonAuthClient")
    args = parser.parse_args()
    description = json.loads(pathlib.Path(args.describe).read_text()) if args.describe else describe(args.root)
    names, found = problems(description, args.root, args.product)
    for problem in found:
        print(problem)
    if found:
        print(f"{args.product} does not build with Foundation alone: {len(found)} problem(s).")
        return 1
    print(f"{args.product} builds with Foundation alone: {len(names)} target(s), {', '.join(sorted(names))}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
