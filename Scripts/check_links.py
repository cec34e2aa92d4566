#!/usr/bin/env python3
"""Fails when a Markdown file of the repository links to a relative path that does not
exist, or to one outside the repository (a clone has nothing there). `make test` runs
it, so a moved or renamed page cannot leave a dead link behind.

    python3 Scripts/check_links.py [ROOT]

Links to web addresses and to anchors of the same page are not checked."""

import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


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


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    dead = list(dead_links(root))
    for line in dead:
        print("dead link:", line)
    if dead:
        sys.exit(1)
    print("Markdown links resolve.")


if __name__ == "__main__":
    main()
