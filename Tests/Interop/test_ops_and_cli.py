"""The ops port's HTTP handling, and the CLI's session commands across invocations."""

import json
import os
import socket
import stat
import subprocess

import pytest

from conftest import ROOT

CLI = os.environ.get("ANONAUTH_CLI", str(ROOT / ".build/debug/anonauth"))


def raw_http(daemon, request: bytes) -> bytes:
    with socket.create_connection(daemon.ops, timeout=5) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data  # the server closed the connection
            data += chunk


@pytest.mark.parametrize("request_bytes", [
    b"GARBAGE\r\n\r\n",
    b"GET /healthz HTTP/9.9\r\n\r\n",
    b"GET healthz HTTP/1.1\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n",
    b"\xff\xfe\r\n\r\n",
])
def test_malformed_http_gets_400_and_close(daemon, request_bytes):
    reply = raw_http(daemon, request_bytes)
    assert reply.startswith(b"HTTP/1.1 400 ")
    assert b"Connection: close" in reply


def test_ops_pages(daemon):
    cli(daemon, "signin-anonymously")  # so that calls and sign-ups have been counted
    assert raw_http(daemon, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200 ")
    assert raw_http(daemon, b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200 ")
    assert raw_http(daemon, b"GET /nope HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 404 ")
    assert raw_http(daemon, b"POST /healthz HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405 ")
    jwks = raw_http(daemon, b"GET /.well-known/jwks.json HTTP/1.1\r\n\r\n")
    assert b"Cache-Control: public, max-age=" in jwks
    metrics = raw_http(daemon, b"GET /metrics HTTP/1.1\r\n\r\n").decode()
    for name in ["anonauth_rpc_calls_total", "anonauth_rpc_duration_seconds_bucket", "anonauth_accounts",
                 "anonauth_sign_ups_total", "anonauth_store_transactions_total", "anonauth_connections_open",
                 "anonauth_connections_total", "anonauth_sign_up_quota_refusals_total", "anonauth_cleanup_passes_total",
                 "anonauth_cleaned_up_accounts_total", "anonauth_store_queued_writes",
                 "anonauth_store_held_batches_total"]:
        assert name in metrics, name
    # Store histograms: the sign-up's write was one batch of at least one job, and it waited.
    for histogram in ["anonauth_store_batch_size", "anonauth_store_commit_duration_seconds",
                      "anonauth_store_write_duration_seconds"]:
        assert f"# TYPE {histogram} histogram" in metrics, histogram
        count = [line for line in metrics.splitlines() if line.startswith(histogram + "_count ")]
        assert count and int(count[0].split()[1]) >= 1, histogram
        assert f'{histogram}_bucket{{le="+Inf"}}' in metrics
    assert 'anonauth_sign_ups_total{provider="anonymous"} 1' in metrics
    # The event loop's turns: counted, bucketed cumulatively, and the longest one known.
    assert "# TYPE anonauth_event_loop_turn_seconds histogram" in metrics
    turns = {line.split()[0]: float(line.split()[1]) for line in metrics.splitlines()
             if line.startswith("anonauth_event_loop_turn_")}
    count = turns['anonauth_event_loop_turn_seconds_count{loop="anonauth-io-0"}']
    assert count >= 1 and turns['anonauth_event_loop_turn_seconds_bucket{loop="anonauth-io-0",le="+Inf"}'] == count
    buckets = [v for k, v in turns.items() if k.startswith("anonauth_event_loop_turn_seconds_bucket")]
    assert buckets == sorted(buckets), buckets
    assert 0 < turns['anonauth_event_loop_turn_max_seconds{loop="anonauth-io-0"}'] < 60
    assert 'method="/anonauth.v1.AccountService/SignUp",code="OK"' in metrics


def cli(daemon, *args, check=True):
    result = subprocess.run([CLI, *args, "--data-dir", daemon.dir], capture_output=True, text=True, timeout=30)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_cli_session_across_invocations(daemon):
    uid = cli(daemon, "signin-anonymously").stdout.strip()
    assert len(uid) == 28
    session = os.path.join(daemon.dir, "cli-session.json")
    assert stat.S_IMODE(os.stat(session).st_mode) == 0o600
    # A second sign-in keeps the signed-in anonymous user.
    assert cli(daemon, "signin-anonymously").stdout.strip() == uid
    who = json.loads(cli(daemon, "whoami", "--json").stdout)
    assert who["uid"] == uid and who["is_anonymous"] == "true"
    token = cli(daemon, "token").stdout.strip()
    verified = json.loads(cli(daemon, "verify", token, "--check-revoked", "--json").stdout)
    assert verified["uid"] == uid and verified["sign_in_provider"] == "anonymous"
    assert cli(daemon, "delete").returncode == 0
    gone = cli(daemon, "verify", token, "--check-revoked", check=False)
    assert gone.returncode == 1 and "USER_NOT_FOUND" in gone.stderr
    assert cli(daemon, "whoami", check=False).returncode == 1
    assert "not signed in" in cli(daemon, "whoami", check=False).stderr


def test_cli_help_on_every_command():
    out = subprocess.run([CLI, "--help"], capture_output=True, text=True).stdout
    commands = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert {"health", "signin-anonymously", "whoami", "token", "verify", "delete", "bench"} <= set(commands)
    for command in commands:
        r = subprocess.run([CLI, command, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and "Usage: anonauth " + command in r.stdout, command


def test_cli_admin_commands(daemon, tmp_path):
    uid = cli(daemon, "signin-anonymously").stdout.strip()
    listed = json.loads(cli(daemon, "admin", "list-accounts", "--json").stdout)
    assert listed["total"] == 1 and listed["accounts"][0]["local_id"] == uid
    table = cli(daemon, "admin", "list-accounts").stdout
    assert table.splitlines()[0].split()[:2] == ["UID", "KIND"] and uid in table
    config = json.loads(cli(daemon, "admin", "update-config", "sign_up_quota_per_hour=7", "--json").stdout)
    assert config["sign_up_quota_per_hour"] == 7
    # The Firebase exchange's settings, as the migration runbook sets them.
    config = json.loads(cli(daemon, "admin", "update-config", "firebase_project_id=my-fb",
                            "firebase_create_unknown_users=true", "--json").stdout)
    assert config["firebase_project_id"] == "my-fb" and config["firebase_create_unknown_users"] is True, config
    shown = json.loads(cli(daemon, "admin", "get-config", "--json").stdout)
    assert shown["firebase_project_id"] == "my-fb" and shown["firebase_create_unknown_users"] is True, shown
    bad = cli(daemon, "admin", "update-config", "auto_cleanup_enabled_at_ms=1", check=False)
    assert bad.returncode == 1 and "INVALID_CONFIG" in bad.stderr
    claims = json.loads(cli(daemon, "admin", "set-custom-claims", uid, '{"role":"beta"}', "--json").stdout)
    assert claims["custom_claims_json"] == '{"role":"beta"}'
    assert json.loads(cli(daemon, "admin", "disable-account", uid, "--json").stdout)["disabled"] is True
    assert json.loads(cli(daemon, "admin", "disable-account", uid, "--enable", "--json").stdout)["disabled"] is False
    key = json.loads(cli(daemon, "admin", "create-api-key", "--json").stdout)["api_key"]
    assert key in json.loads(cli(daemon, "admin", "list-api-keys", "--json").stdout)["api_keys"]
    kid = json.loads(cli(daemon, "admin", "rotate-signing-key", "--json").stdout)["kid"]
    assert len(kid) == 40
    backup = json.loads(cli(daemon, "admin", "backup", "snap.db", "--json").stdout)
    assert backup["bytes"] > 0 and os.path.exists(backup["path"])
    assert json.loads(cli(daemon, "admin", "delete-accounts", uid, "--json").stdout)["deleted"] == 1
    wrong_key = tmp_path / "wrong.key"
    wrong_key.write_text("aak_nope\n")
    wrong = subprocess.run([CLI, "admin", "usage", "--data-dir", daemon.dir, "--admin-key-file", str(wrong_key)],
                           capture_output=True, text=True)
    assert wrong.returncode == 1 and "ADMIN_KEY_INVALID" in wrong.stderr


def test_cli_admin_sets_up_a_project_a_user_can_sign_up_in(daemon, tmp_path):
    assert cli(daemon, "admin", "create-project", "cli-project", "--anonymous").stdout.strip() == "cli-project"
    key = cli(daemon, "admin", "create-api-key", "cli-project").stdout.strip()
    assert key.startswith("AA") and len(key) == 39
    session = str(tmp_path / "session.json")
    uid = cli(daemon, "signin-anonymously", "--api-key", key, "--session", session).stdout.strip()
    verified = json.loads(cli(daemon, "whoami", "--api-key", key, "--session", session, "--json").stdout)
    assert verified["uid"] == uid
    kid = cli(daemon, "admin", "rotate-signing-key").stdout.strip()
    assert kid and kid in json.dumps(json.loads(raw_http(daemon, b"GET /.well-known/jwks.json HTTP/1.1\r\n\r\n")
                                                .split(b"\r\n\r\n", 1)[1]))
    # An admin key file that holds a wrong key: refused, and the key is not echoed.
    wrong = tmp_path / "wrong.key"
    wrong.write_text("aak_not-the-admin-key-not-the-admin-key\n")
    refused = cli(daemon, "admin", "create-api-key", "cli-project", "--admin-key-file", str(wrong), check=False)
    assert refused.returncode == 1 and "ADMIN_KEY_INVALID" in refused.stderr
    assert "not-the-admin-key" not in refused.stderr
    missing = cli(daemon, "admin", "create-project", check=False)
    assert missing.returncode == 2 and "PROJECT_ID" in missing.stderr


@pytest.mark.parametrize("request_bytes", [
    b"GET /healthz HTTP/1.1\n",                          # a bare LF, head never completes
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",     # a TLS ClientHello on the plain port
    b"BREW /pot HTCPCP/1.0\r\n",                          # a request line that cannot parse
])
def test_malformed_heads_are_answered_at_once_not_after_the_timeout(daemon, request_bytes):
    # No blank line: only an early 400 answers this; the head timeout closes with no answer.
    reply = raw_http(daemon, request_bytes)
    assert reply.startswith(b"HTTP/1.1 400 ")


def test_cli_shows_times_people_can_read(daemon):
    """Tables and text show UTC ISO 8601 times, with "in ..." for what is coming; the
    JSON output keeps epoch milliseconds."""
    import re
    iso = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    cli(daemon, "admin", "update-config", "auto_cleanup_enabled=true")
    uid = cli(daemon, "signin-anonymously").stdout.strip()
    row = next(line for line in cli(daemon, "admin", "list-accounts").stdout.splitlines() if uid in line)
    assert re.search(rf"{iso} +{iso} \(in (29|30) d\)", row), row
    assert "CREATED (UTC)" in cli(daemon, "admin", "list-accounts").stdout
    preview = cli(daemon, "admin", "preview-cleanup").stdout
    assert re.search(rf"next background run at: {iso} \(in \d+ (s|min|h|d)\)", preview), preview
    account = json.loads(cli(daemon, "admin", "get-account", uid).stdout)
    assert re.fullmatch(iso, account["created_at"]) and "(in " in account["scheduled_deletion_at"], account
    token = cli(daemon, "token").stdout.strip()
    verified = cli(daemon, "verify", token).stdout
    assert re.search(rf"expires at {iso} \(in (59|60) min\)", verified), verified
    as_json = json.loads(cli(daemon, "admin", "list-accounts", "--json").stdout)["accounts"][0]
    assert isinstance(as_json["created_at_ms"], int) and isinstance(as_json["scheduled_deletion_at_ms"], int)
