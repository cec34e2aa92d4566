#!/usr/bin/env python3
"""Fails when a Markdown file of the repository links to a relative path that does not
exist, or to one outside the repository (a clone has nothing there), and when any file
of the repository names the wire contract or the design by their old paths outside it:
docs/protocol.md is the contract and docs/architecture.md the design. `make test` runs
it, so a moved or renamed page cannot leave a dead link behind, and a reference to a
file a clone does not have cannot come back.

    python3 Scripts/check_links.py [ROOT]

Links to web addresses and to anchors of the same page are not checked."""

import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# The folder beside the repository that once held the contract and the design, and
# their file names (case-sensitive: docs/protocol.md itself does not match). Written
# so that this file does not match itself.
OUTSIDE = re.compile(rb"\.\./shared\b|\b(?:PROTOCOL|DESIGN)\.md\b")


def markdown_files(root):
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "*.md"],
                            capture_output=True, text=True, check=True).stdout.split()
    return [root / name for name in listed]


def dead_links(root):
    for page in markdown_files(root):
        text = page.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                path = (page.parent / target.split("#", 1)[0]).resolve()
                if not path.is_relative_to(root) or not path.exists():
                    yield f"{page.relative_to(root)}:{number}: {target}"


def outside_references(root):
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, listed):
        path = root / name.decode("utf-8", "surrogateescape")
        if not path.is_file():
            continue  # deleted in the work tree, or a submodule
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            match = OUTSIDE.search(line)
            if match:
                yield f"{path.relative_to(root)}:{number}: {match.group().decode()}"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    dead = list(dead_links(root))
    for line in dead:
        print("dead link:", line)
    outside = list(outside_references(root))
    for line in outside:
        print("names a file outside the repository (use docs/protocol.md or docs/architecture.md):", line)
    if dead or outside:
        sys.exit(1)
    print("Markdown links resolve; nothing names a file outside the repository.")


if __name__ == "__main__":
    main()
