"""App code written to FirebaseAuth 12's public API (Tests/FirebaseAppCode: the seed
page's flow in its async and completion-handler forms, an auth service and a Swift 6
@MainActor view model), built against AnonAuthClient with only the import changed, run
against the real daemon over HTTPS by `anonauth-firebase-app` (Tests/FirebaseAppRunner)
on the main queue as an app runs it. Trusting the daemon's certificate works as in
test_swift_client.py: a private mount namespace (root, as CI has) or a skip."""

import json
import os
import subprocess
import tempfile
import time

import jwt
import pytest

from conftest import ROOT, TEST_DAEMON_FLAGS, Daemon, trust_google_key
from test_swift_client import SYSTEM_BUNDLE, can_unshare

APP = os.environ.get("ANONAUTH_FIREBASE_APP", str(ROOT / ".build/debug/anonauth-firebase-app"))
GOOGLE_CLIENT = "app-code.apps.googleusercontent.com"
GOOGLE_ISSUER = "https://accounts.google.com"

FIREBASE_DOMAIN = "FIRAuthErrorDomain"


def configure_google(daemon, pb):
    """Lets the project accept Google ID tokens signed by a key of the test's; returns it."""
    key = trust_google_key(daemon, pb, "app-google", GOOGLE_CLIENT, GOOGLE_ISSUER)
    now = int(time.time())
    claims = {"iss": GOOGLE_ISSUER, "aud": GOOGLE_CLIENT, "sub": "g-app-1", "iat": now, "exp": now + 600,
              "email": "app.google@example.com", "email_verified": True}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "app-google"})


def test_app_code_written_to_firebase_auth_runs_against_the_daemon(pb):
    if not can_unshare():
        pytest.skip("unshare -m is not permitted here (it needs root): the app's HTTPS calls "
                    "cannot trust the daemon's certificate without changing the machine")
    daemon = Daemon(extra=TEST_DAEMON_FLAGS)
    try:
        google = configure_google(daemon, pb)
        bundle = os.path.join(tempfile.mkdtemp(prefix="anonauth-ca-"), "ca-certificates.crt")
        with open(bundle, "wb") as out:
            for part in (SYSTEM_BUNDLE, daemon.ca_file):
                with open(part, "rb") as f:
                    out.write(f.read().rstrip(b"\n") + b"\n")
        # The default session store is a file in the user's data directory: a fresh one.
        home = tempfile.mkdtemp(prefix="anonauth-app-home-")
        command = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" "$1" && shift && exec "$@"',
                   bundle, SYSTEM_BUNDLE, APP, f"https://localhost:{daemon.rpc[1]}",
                   daemon.client_json["api_key"], "app", google]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                                env={**os.environ, "HOME": home, "XDG_DATA_HOME": os.path.join(home, "data"),
                                     "ANONAUTH_MAIL_DIR": os.path.join(daemon.dir, "mail")})
        assert result.stdout.strip(), result.stderr
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        assert result.returncode == 0, seen
    finally:
        assert daemon.stop() == 0

    for form in ("seed_async", "seed_completion"):
        assert seen[form] == {**seen[form], "same_uid": True, "was_anonymous": True,
                              "anonymous_after_link": False, "signed_out": True, "deleted": True}, form
    assert seen["seed_completion"]["on_main_thread"] is True
    # The User the app held became permanent in place, and is currentUser.
    assert seen["held_updated_in_place"] is True
    assert seen["held_display_name"] == "Ada"
    assert seen["photo_change"] == {"code": 0}  # sent and accepted (not stored yet)
    assert seen["token_provider"] == "password"
    assert seen["authorization_header"] is True
    assert seen["summary"]["providers"] == ["password"] and seen["summary"]["has_created"] is True
    # Errors bridge to Firebase's NSError.
    wrong = seen["wrong_password"]
    assert wrong["domain"] == FIREBASE_DOMAIN and wrong["code"] in (17004, 17009), wrong
    assert wrong["name"] in ("ERROR_INVALID_CREDENTIAL", "ERROR_WRONG_PASSWORD")
    assert seen["password_reset"] == {"code": 0}, seen["password_reset"]
    assert seen["apple"]["domain"] == FIREBASE_DOMAIN and seen["apple"]["code"] in (17004, 17006), seen["apple"]
    # credentialAlreadyInUse carries the credential that signs in to the owner.
    in_use = seen["already_in_use"]
    assert in_use["code"] == 17025 and in_use["name"] == "ERROR_CREDENTIAL_ALREADY_IN_USE", in_use
    assert in_use["has_updated_credential"] is True
    assert seen["recovered_owner"] is True
    # Listeners on the main queue, in a Swift 6 @MainActor view model too.
    assert seen["service_listeners_on_main"] is True and seen["service_heard"] >= 4
    assert seen["service_token_changes"] > seen["service_heard"]
    assert seen["model_guest"] is True and seen["model_saved"] is True
    assert seen["restart_same_uid"] is True
    assert seen["model_signed_out"] is True and seen["model_listener_on_main"] is True
    assert seen["model_error"] == ""
    # Email actions through the mails a --dev daemon writes to its data dir.
    assert seen["email_link_recognized"] is True
    assert seen["email_link_upgrade"] == {"same_uid": True, "same_object": True, "anonymous": False,
                                          "email": "app.link@example.com", "verified": True}
    assert seen["reset_code_email"] == "app.link@example.com" and seen["reset_same_uid"] is True
    reused = seen["reset_code_reused"]
    assert reused["domain"] == FIREBASE_DOMAIN and reused["code"] == 17030, reused  # invalidActionCode
