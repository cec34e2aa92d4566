"""docs/clients.md's Python client, run as a reader would run it: protoc's modules from
Protos/ on PYTHONPATH, a daemon's client.json as its only argument. If the page's code
stops working against the daemon, this fails."""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

from conftest import ROOT, Daemon

CLIENT = ROOT / "Tests/Interop/clients/python_client.py"


def generate_modules():
    out = pathlib.Path(tempfile.mkdtemp(prefix="anonauth-py-client-"))
    protos = sorted(str(p.relative_to(ROOT / "Protos")) for p in (ROOT / "Protos").rglob("*.proto"))
    subprocess.run(["protoc", f"--python_out={out}", "-I", str(ROOT / "Protos"), *protos], check=True)
    return out


def test_the_documented_python_client_signs_in_verifies_and_refreshes():
    modules = generate_modules()
    daemon = Daemon()
    try:
        result = subprocess.run(
            [sys.executable, str(CLIENT), os.path.join(daemon.dir, "client.json")],
            env={**os.environ, "PYTHONPATH": str(modules)}, capture_output=True, text=True, timeout=120)
    finally:
        daemon.stop()
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["health"] == "SERVING"
    assert len(seen["uid"]) == 28 and seen["is_anonymous"] is True
    assert seen["verified_uid"] == seen["uid"] == seen["refreshed_uid"] == seen["account_uid"]
    assert seen["refresh_token_rotated"] is True
    assert seen["bad_key"] == {"code": 16, "reason": "API_KEY_INVALID"}


def test_every_python_block_of_the_page_is_copied_from_the_client():
    page = (ROOT / "docs/clients.md").read_text(encoding="utf-8")
    source = CLIENT.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert blocks, "docs/clients.md shows no Python"
    for block in blocks:
        assert block in source, "docs/clients.md shows Python that python_client.py does not hold:\n" + block
