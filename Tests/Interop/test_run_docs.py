"""The docs runner (Scripts/run_docs.py) itself: a failing block fails the run, a skipped
one is listed with its reason, a variable set by a block reaches the next block of the
page, and a block that needs what no earlier block set fails."""

import subprocess
import sys

from conftest import ROOT


def run(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text)
    return subprocess.run([sys.executable, str(ROOT / "Scripts/run_docs.py"), str(page)],
                          capture_output=True, text=True, timeout=120)


def test_blocks_run_share_variables_and_a_failure_fails(tmp_path):
    passing = run(tmp_path, "# p\n\n```sh\nGREETING=hello\n```\n\n<!-- docs-runner: needs GREETING -->\n"
                            "```sh\ntest \"$GREETING\" = hello && anonauth health\n```\n\n"
                            "<!-- docs-runner: skip (not here) -->\n```sh\nexit 1\n```\n\n"
                            "```python\nimport json; json.load(open('anonauth-data/client.json'))\n```\n")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "3 blocks ran, 1 skipped, 0 failed" in passing.stdout
    assert "skip " in passing.stdout and "(not here)" in passing.stdout

    failing = run(tmp_path, "```sh\nanonauth admin get-config --no-such-flag\n```\n\n"
                            "<!-- docs-runner: needs NOT_SET -->\n```sh\necho $NOT_SET\n```\n")
    assert failing.returncode == 1
    assert "0 blocks ran, 0 skipped, 2 failed" in failing.stdout
    assert "unknown option --no-such-flag" in failing.stdout
    assert "needs NOT_SET, which no earlier block set" in failing.stdout
