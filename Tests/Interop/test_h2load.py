"""h2load (Debian's nghttp2-client), an HTTP/2 load generator written with neither
AnonAuth nor hyper-h2 in mind, against the real daemon: gRPC SignUp calls, then sign-ups
through the JSON API, over HTTP/2 on the RPC port, many streams at a time on several
connections. Every request must succeed by h2load's own summary, and every one must have
made an account (h2load counts a 2xx as a success; a gRPC error also comes as 200, so
the daemon's sign-up counter says whether the calls themselves succeeded)."""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import Daemon, TEST_DAEMON_FLAGS, call, metrics

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Scripts"))
from bench import ONE_SOURCE_FLAGS  # noqa: E402

REQUESTS, CLIENTS, STREAMS = 400, 4, 16

pytestmark = pytest.mark.skipif(shutil.which("h2load") is None, reason="h2load (nghttp2-client) is not installed")


@pytest.fixture
def daemon(pb):
    # One address makes every request: the per-address rates, and the project's per-IP
    # sign-up quota (100 an hour), would measure themselves.
    d = Daemon(extra=TEST_DAEMON_FLAGS + ONE_SOURCE_FLAGS)
    config = pb.admin.ProjectConfig(project_id=d.client_json["project_id"], sign_up_quota_per_hour=1_000_000)
    with d.connect() as s:
        status, _ = call(s, pb, "/anonauth.v1.AdminService/UpdateProjectConfig",
                         pb.admin.UpdateProjectConfigRequest(config=config, update_mask=["sign_up_quota_per_hour"]),
                         metadata={"authorization": "Bearer " + d.client_json["admin_key"]})
    assert status.code == 0, status
    yield d
    assert d.stop() == 0


def h2load(daemon, path, body, headers):
    """Runs h2load with `body` POSTed to `path` (only h2 offered by ALPN); returns its
    summary's request and status-code counts."""
    with tempfile.NamedTemporaryFile(prefix="anonauth-h2load-", delete=False) as f:
        f.write(body)
    try:
        host, port = daemon.rpc
        result = subprocess.run(
            ["h2load", "--npn-list=h2", "-n", str(REQUESTS), "-c", str(CLIENTS), "-m", str(STREAMS),
             "-d", f.name, *[a for h in headers for a in ("-H", h)], f"https://{host}:{port}{path}"],
            capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(f.name)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "Application protocol: h2" in out, out
    requests = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                         r"(\d+) errored, (\d+) timeout", out)
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    assert requests and codes, out
    names = ("total", "started", "done", "succeeded", "failed", "errored", "timeout")
    summary = dict(zip(names, map(int, requests.groups())))
    summary.update(zip(("2xx", "3xx", "4xx", "5xx"), map(int, codes.groups())))
    return summary, out


def sign_ups(daemon):
    return metrics(daemon).get('anonauth_sign_ups_total{provider="anonymous"}', 0)


def assert_all_succeeded(summary, out):
    assert summary["succeeded"] == summary["done"] == summary["total"] == REQUESTS, out
    assert summary["failed"] == summary["errored"] == summary["timeout"] == 0, out
    assert summary["2xx"] == REQUESTS, out


def test_grpc_sign_ups_from_h2load_all_succeed(daemon):
    before = sign_ups(daemon)
    # SignUpRequest{anonymous: {}} (field 1, empty) as one uncompressed gRPC message.
    body = b"\0\0\0\0\2" + b"\x0a\x00"
    summary, out = h2load(daemon, "/anonauth.v1.AccountService/SignUp", body, [
        "content-type: application/grpc", "te: trailers", "x-api-key: " + daemon.client_json["api_key"]])
    assert_all_succeeded(summary, out)
    assert sign_ups(daemon) - before == REQUESTS


def test_json_api_sign_ups_over_h2_from_h2load_all_succeed(daemon):
    before = sign_ups(daemon)
    summary, out = h2load(daemon, "/v1/accounts:signUp?key=" + daemon.client_json["api_key"],
                          b'{"returnSecureToken":true}', ["content-type: application/json"])
    assert_all_succeeded(summary, out)
    assert sign_ups(daemon) - before == REQUESTS
