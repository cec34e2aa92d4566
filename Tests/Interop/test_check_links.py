"""Scripts/check_links.py, run on small repositories made here: it passes a clean one,
and fails a dead relative link and any file that names the contract or the design by
their old paths outside the repository."""

import subprocess
import sys
import tempfile

from conftest import ROOT

SCRIPT = ROOT / "Scripts/check_links.py"


def run_on(files):
    root = tempfile.mkdtemp(prefix="anonauth-links-")
    subprocess.run(["git", "init", "-q", root], check=True)
    for name, text in files.items():
        path = f"{root}/{name}"
        subprocess.run(["mkdir", "-p", path.rsplit("/", 1)[0]], check=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return subprocess.run([sys.executable, str(SCRIPT), root], capture_output=True, text=True)


def test_a_repository_whose_links_resolve_passes():
    result = run_on({
        "README.md": "See [the protocol](docs/protocol.md#2-framing).\n",
        "docs/protocol.md": "# Protocol\nCited as docs/protocol.md §2.\n",
    })
    assert result.returncode == 0, result.stdout


def test_a_dead_relative_link_fails():
    result = run_on({"README.md": "See [gone](docs/gone.md).\n"})
    assert result.returncode == 1
    assert "README.md:1: docs/gone.md" in result.stdout


def test_naming_the_old_contract_or_design_anywhere_fails():
    old_contract = "PROTOCOL" + ".md"  # split, so that this file does not fail the check
    old_design = "DESIGN" + ".md"
    outside = ".." + "/shared"
    result = run_on({
        "docs/protocol.md": "# Protocol\n",
        "Sources/A.swift": f"/// The limits ({old_contract} section 1).\n",
        "Scripts/b.py": f"# see {old_design} \"Logs\"\n",
        "notes.md": f"the contract is in {outside}/\n",
    })
    assert result.returncode == 1
    for expected in (f"Sources/A.swift:1: {old_contract}", f"Scripts/b.py:1: {old_design}",
                     f"notes.md:1: {outside}"):
        assert expected in result.stdout, result.stdout
