"""AnonAuthClient (Foundation alone: URLSession on libcurl here) against the real daemon
over HTTPS: the seed's flow (Tests/SeedFlow, the `anonauth-seed-flow` executable). And
the same flow through the emulator listener (plain HTTP on loopback) with
`useEmulator(withHost:port:)`, as an app in development reaches it.

URLSession on Linux trusts only the system CA bundle; it reads neither SSL_CERT_FILE nor
a delegate's trust decision. The test leaves the machine's trust store alone: it runs the
flow in a private mount namespace where a copy of the system bundle plus the daemon's
certificate is bind-mounted over /etc/ssl/certs/ca-certificates.crt. The namespace needs
root (CI has it); without it the test skips, saying so."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import ROOT, TEST_DAEMON_FLAGS, Daemon

SEED_FLOW = os.environ.get("ANONAUTH_SEED_FLOW", str(ROOT / ".build/debug/anonauth-seed-flow"))
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def can_unshare():
    if not os.path.exists(SYSTEM_BUNDLE) or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_flow(daemon, trusting_bundle=None, base_url=None):
    """Runs the seed's flow against `daemon` (its HTTPS port unless `base_url`); with
    `trusting_bundle`, inside a mount namespace where that bundle is the system's.
    Returns (exit status, what it saw)."""
    session = os.path.join(tempfile.mkdtemp(prefix="anonauth-seed-"), "session.json")
    base_url = base_url or f"https://localhost:{daemon.rpc[1]}"
    command = [SEED_FLOW, base_url, daemon.client_json["api_key"], "seed.swift@example.com", session]
    if trusting_bundle:
        command = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" "$1" && shift && exec "$@"',
                   trusting_bundle, SYSTEM_BUNDLE, *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.stdout.strip(), result.stderr
    return result.returncode, json.loads(result.stdout.strip().splitlines()[-1])


def check_seed_flow(seen):
    """What the seed's flow must have seen, whichever way it reached the daemon."""
    uid = seen["anonymous_uid"]
    assert seen["anonymous_is_anonymous"] is True
    assert seen["anonymous_is_new_user"] is True
    assert seen["first_token_parts"] == 3
    # Linking keeps the uid and makes the user permanent.
    assert seen["linked_uid"] == uid
    assert seen["linked_is_anonymous"] is False
    assert seen["linked_email"] == "seed.swift@example.com"
    assert "password" in seen["linked_providers"]
    assert seen["email_taken"] == "emailAlreadyInUse"
    assert seen["weak_password"] == "weakPassword"
    # Sign out, sign in: the same uid.
    assert seen["signed_out_user"] == "nil"
    assert seen["wrong_password"] in ("invalidCredential", "wrongPassword")
    assert seen["signed_in_uid"] == uid
    assert seen["signed_in_is_new_user"] is False
    # The session file brings the user back; a forced refresh rotates the refresh token.
    assert seen["restarted_uid"] == uid
    assert seen["refresh_rotated_refresh_token"] is True
    assert seen["still_signed_in_after_refresh"] == uid
    # Delete signs out; the account is gone, and a stale session is signed out on refresh.
    assert seen["deleted_user"] == "nil"
    assert seen["sign_in_after_delete"] in ("invalidCredential", "userNotFound")
    assert seen["stale_refresh"] in ("userTokenExpired", "invalidUserToken", "userNotFound")
    assert seen["stale_signed_out"] is True
    assert seen["listener_heard"] == ["nil", uid, "nil", uid, "nil"]
    assert seen["wrong_key"] == "invalidAPIKey"


@pytest.fixture
def https_daemon():
    d = Daemon(extra=TEST_DAEMON_FLAGS)
    yield d
    assert d.stop() == 0


def test_the_seed_flow_over_https_with_the_swift_client(https_daemon):
    if not can_unshare():
        pytest.skip("unshare -m is not permitted here (it needs root): the Swift client's "
                    "HTTPS test cannot trust the daemon's certificate without changing the machine")
    system_before = digest(SYSTEM_BUNDLE)
    bundle = os.path.join(tempfile.mkdtemp(prefix="anonauth-ca-"), "ca-certificates.crt")
    with open(bundle, "wb") as out:
        for part in (SYSTEM_BUNDLE, https_daemon.ca_file):
            with open(part, "rb") as f:
                out.write(f.read().rstrip(b"\n") + b"\n")

    status, seen = run_flow(https_daemon, trusting_bundle=bundle)

    assert status == 0, seen
    check_seed_flow(seen)
    # The machine's own bundle was never touched.
    assert digest(SYSTEM_BUNDLE) == system_before


def test_without_the_daemons_certificate_in_the_bundle_the_client_refuses_it(https_daemon):
    """The control: outside the namespace the daemon's certificate is not trusted, so the
    trust above came from the mounted bundle alone."""
    status, seen = run_flow(https_daemon)
    assert status == 1
    assert "networkError" in seen["failed"], seen


def test_the_seed_flow_through_the_emulator_listener():
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--firebase-emulator-listen", "127.0.0.1:0"])
    try:
        status, seen = run_flow(d, base_url=f"http://127.0.0.1:{d.emulator[1]}")
        assert status == 0, seen
        check_seed_flow(seen)
    finally:
        assert d.stop() == 0
