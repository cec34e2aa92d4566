"""The daemon's logs: one JSON object per line on stderr, with the call's project, uid
and is_anon, and never a secret. A full flow runs against the real daemon, then every
line it wrote is parsed and scanned.

What counts as a secret here: ID tokens (and anything shaped like a JWT), refresh
tokens, admin keys (the real one and a wrong one a caller sent), the master key and the
TLS private key. API keys are public identifiers (docs/protocol.md §3), but the logs
name a project by its project_id, so no API key should appear either: the scan includes
them, and a bogus one a caller sent."""

import json
import os
import re
import time

from conftest import Daemon, call, call_frame, read_frame, send_frame

ACCOUNT = "/anonauth.v1.AccountService/"
TOKEN = "/anonauth.v1.TokenService/"
ADMIN = "/anonauth.v1.AdminService/"
JWT_SHAPE = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")


def full_flow(d, pb):
    """Runs every kind of call once; returns the secrets the calls saw."""
    secrets = []
    api_key = d.client_json["api_key"]
    admin_key = d.client_json["admin_key"]
    user = {"x-api-key": api_key}
    admin = {"authorization": "Bearer " + admin_key}
    seen = {}
    with d.connect() as s:
        req = pb.account.SignUpRequest()
        req.anonymous.SetInParent()
        st, auth = call(s, pb, ACCOUNT + "SignUp", req, pb.account.AuthResponse, {**user, "x-request-id": "rid-signup"})
        assert st.code == 0, st
        seen["uid"] = auth.local_id
        secrets += [auth.id_token, auth.refresh_token]

        st, refreshed = call(s, pb, ACCOUNT + "RefreshToken",
                             pb.account.RefreshTokenRequest(refresh_token=auth.refresh_token),
                             pb.account.AuthResponse, user)
        assert st.code == 0, st
        secrets += [refreshed.id_token, refreshed.refresh_token]
        # The rotated token again, within the grace window: the same successor.
        st, again = call(s, pb, ACCOUNT + "RefreshToken",
                         pb.account.RefreshTokenRequest(refresh_token=auth.refresh_token),
                         pb.account.AuthResponse, user)
        assert st.code == 0 and again.refresh_token == refreshed.refresh_token, st
        secrets.append(again.id_token)

        st, verified = call(s, pb, TOKEN + "VerifyIdToken",
                            pb.token.VerifyIdTokenRequest(id_token=refreshed.id_token, check_revoked=True),
                            pb.token.VerifyIdTokenResponse, user)
        assert st.code == 0 and verified.uid == auth.local_id, st
        st, info = call(s, pb, ACCOUNT + "GetAccountInfo",
                        pb.account.GetAccountInfoRequest(id_token=refreshed.id_token), pb.account.AccountInfo,
                        {**user, "x-request-id": "rid-info"})
        assert st.code == 0 and info.local_id == auth.local_id, st

        # Refused calls: what the caller sent must not be echoed into the logs either.
        tampered = refreshed.id_token[:-6] + ("AAAAAA" if not refreshed.id_token.endswith("AAAAAA") else "BBBBBB")
        secrets.append(tampered)
        st, _ = call(s, pb, TOKEN + "VerifyIdToken", pb.token.VerifyIdTokenRequest(id_token=tampered), None, user)
        assert st.reason == "INVALID_ID_TOKEN", st
        bogus_refresh = "R" * 43
        secrets.append(bogus_refresh)
        st, _ = call(s, pb, ACCOUNT + "RefreshToken", pb.account.RefreshTokenRequest(refresh_token=bogus_refresh),
                     None, user)
        assert st.reason == "INVALID_REFRESH_TOKEN", st
        bogus_api_key = "AAbogusbogusbogusbogusbogusbogusbogus12"
        secrets.append(bogus_api_key)
        st, _ = call(s, pb, ACCOUNT + "SignUp", req, None, {"x-api-key": bogus_api_key})
        assert st.reason == "API_KEY_INVALID", st
        wrong_admin = "aak_wrongwrongwrongwrongwrongwrongwrongwrong"
        secrets.append(wrong_admin)
        st, _ = call(s, pb, ADMIN + "CreateProject", pb.admin.CreateProjectRequest(project_id="nope-project"), None,
                     {"authorization": "Bearer " + wrong_admin})
        assert st.reason == "ADMIN_KEY_INVALID", st

        # Admin calls with the admin key.
        st, _ = call(s, pb, ADMIN + "CreateProject", pb.admin.CreateProjectRequest(project_id="log-test"),
                     pb.admin.ProjectConfig, admin)
        assert st.code == 0, st
        update = pb.admin.UpdateProjectConfigRequest(update_mask=["anonymous_enabled"])
        update.config.project_id = "log-test"
        update.config.anonymous_enabled = True
        st, config = call(s, pb, ADMIN + "UpdateProjectConfig", update, pb.admin.ProjectConfig, admin)
        assert st.code == 0 and config.anonymous_enabled, st
        st, made = call(s, pb, ADMIN + "CreateApiKey", pb.admin.CreateApiKeyRequest(project_id="log-test"),
                        pb.admin.CreateApiKeyResponse, admin)
        assert st.code == 0, st
        secrets.append(made.api_key)
        st, _ = call(s, pb, ADMIN + "ListApiKeys", pb.admin.ListApiKeysRequest(project_id="log-test"), None, admin)
        assert st.code == 0, st
        st, _ = call(s, pb, ADMIN + "GetProjectConfig", pb.admin.GetProjectConfigRequest(project_id="log-test"),
                     None, admin)
        assert st.code == 0, st
        quota = pb.admin.ScheduleSignUpQuotaRequest(project_id="log-test", quota=5, duration_seconds=60)
        st, _ = call(s, pb, ADMIN + "ScheduleSignUpQuota", quota, None, admin)
        assert st.code == 0, st
        st, _ = call(s, pb, ADMIN + "RotateSigningKey", pb.admin.RotateSigningKeyRequest(), None, admin)
        assert st.code == 0, st
        # A trusted sign-up in the new project: API key, admin key and x-end-user-ip.
        st, other = call(s, pb, ACCOUNT + "SignUp", req, pb.account.AuthResponse,
                         {"x-api-key": made.api_key, **admin, "x-end-user-ip": "203.0.113.9"})
        assert st.code == 0, st
        secrets += [other.id_token, other.refresh_token]

        st, _ = call(s, pb, ACCOUNT + "DeleteAccount", pb.account.DeleteAccountRequest(id_token=refreshed.id_token),
                     None, user)
        assert st.code == 0, st
    secrets += [api_key, admin_key]
    return secrets, seen


def key_material(d):
    """The dev master key (hex) and the TLS private key's PEM body lines."""
    with open(os.path.join(d.dir, "master.key")) as f:
        master = f.read().strip()
    with open(os.path.join(d.dir, "tls", "dev-key.pem")) as f:
        pem = [line for line in f.read().splitlines() if line and not line.startswith("-----")]
    assert len(master) == 64 and pem
    return [master, master[:32], master[32:]] + pem


def test_every_log_line_is_json_and_holds_no_secret(pb):
    d = Daemon(extra=["--log-level", "debug"])
    try:
        secrets, seen = full_flow(d, pb)
        forbidden = secrets + key_material(d)
    finally:
        assert d.stop() == 0
    lines = d.log_lines()
    assert len(lines) >= 20, lines
    calls = []
    for line in lines:
        entry = json.loads(line)  # every line is one JSON object
        assert isinstance(entry, dict), line
        assert {"ts", "level", "msg"} <= entry.keys(), line
        assert entry["level"] in {"debug", "info", "warn", "error"}, line
        for secret in forbidden:
            assert secret not in line, f"a secret leaked into: {line}"
        assert not JWT_SHAPE.search(line), line
        assert "PRIVATE KEY" not in line, line
        if entry["msg"] == "call":
            calls.append(entry)
            assert {"request_id", "method", "code", "reason", "duration_ms"} <= entry.keys(), line
    by_request = {c["request_id"]: c for c in calls}
    # One line per call: the handler's task writes it, not also the loop.
    assert len(by_request) == len(calls), [c["request_id"] for c in calls]
    signup = by_request["rid-signup"]
    assert signup["project_id"] == "demo-project" and signup["uid"] == seen["uid"] and signup["is_anon"] is True
    assert signup["code"] == 0 and signup["reason"] == ""
    info = by_request["rid-info"]
    assert info["uid"] == seen["uid"] and info["is_anon"] is True and info["project_id"] == "demo-project"
    admin_calls = [c for c in calls if c["method"] == ADMIN + "UpdateProjectConfig"]
    assert admin_calls and admin_calls[0]["project_id"] == "log-test"
    refused = [c for c in calls if c["reason"] == "API_KEY_INVALID"]
    assert refused and "project_id" not in refused[0] and refused[0]["code"] == 16
    deleted = [c for c in calls if c["method"] == ACCOUNT + "DeleteAccount"]
    assert deleted and deleted[0]["uid"] == seen["uid"]
    assert any(c["method"] == TOKEN + "VerifyIdToken" and c.get("uid") == seen["uid"] for c in calls)
    assert len(calls) >= 17


def test_log_level_filters_lines(pb):
    d = Daemon(extra=["--log-level", "warn"])
    try:
        with d.connect() as s:
            st, _ = call(s, pb, "/anonauth.v1.HealthService/Check", pb.health.CheckRequest())
            assert st.code == 0
    finally:
        assert d.stop() == 0
    for line in d.log_lines():
        assert json.loads(line)["level"] in {"warn", "error"}, line


def test_a_call_past_its_deadline_is_logged_once_as_deadline_exceeded(pb):
    """The loop answers DEADLINE_EXCEEDED and writes the call's line; the handler, still
    hashing the password, finishes later and must not write a second one."""
    d = Daemon()
    try:
        with d.connect() as s:
            request = pb.account.SignUpRequest(email_password=pb.account.EmailPasswordSignUp(
                email="late@example.com", password="password123"))
            send_frame(s, call_frame(pb, 1, ACCOUNT + "SignUp", request.SerializeToString(),
                                     {"x-api-key": d.client_json["api_key"], "x-request-id": "rid-late"},
                                     timeout_ms=1))
            frame = read_frame(s, pb)
            assert frame.reply.status.code == 4 and frame.reply.status.reason == "DEADLINE_EXCEEDED", frame
            time.sleep(1.5)  # the abandoned handler has long finished (or been dropped)
            st, _ = call(s, pb, "/anonauth.v1.HealthService/Check", pb.health.CheckRequest(), call_id=2)
            assert st.code == 0, st
    finally:
        assert d.stop() == 0
    late = [json.loads(line) for line in d.log_lines() if '"rid-late"' in line]
    calls = [entry for entry in late if entry["msg"] == "call"]
    assert len(calls) == 1 and calls[0]["code"] == 4 and calls[0]["reason"] == "DEADLINE_EXCEEDED", late
