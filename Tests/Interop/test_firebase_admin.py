"""Firebase's own Admin SDK (Python `firebase-admin` 7.x, from PyPI) against the real
daemon, pointed at it as at the Firebase Auth Emulator: FIREBASE_AUTH_EMULATOR_HOST names
the daemon's --firebase-emulator-listen address, and the SDK sends `Bearer owner`. Every
admin call of docs/http-admin-api.md is made through the SDK's own functions, and
`verify_id_token` checks a token a real sign-up minted (the SDK skips the signature in
emulator mode but checks aud, iss and, with check_revoked, the account)."""

import base64
import json
import time
import urllib.error
import urllib.request

import pytest

firebase_admin = pytest.importorskip("firebase_admin")
from firebase_admin import auth  # noqa: E402

from conftest import TEST_DAEMON_FLAGS, Daemon  # noqa: E402

SIGNER_KEY = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
SALT = "42xEC+ixf3L2lw=="
HASH = "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="

EMULATOR_FLAGS = ["--firebase-emulator-listen", "127.0.0.1:0", "--issuer-prefix", "https://securetoken.google.com/"]


@pytest.fixture(scope="module")
def emulated():
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, *EMULATOR_FLAGS])
    yield d
    assert d.stop() == 0


@pytest.fixture
def app(emulated, monkeypatch):
    """A firebase_admin app of the daemon's dev project, its auth client in emulator mode."""
    host, port = emulated.emulator
    monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", f"{host}:{port}")
    name = f"anonauth-{time.monotonic_ns()}"
    made = firebase_admin.initialize_app(
        options={"projectId": emulated.client_json["project_id"]}, name=name)
    yield made
    firebase_admin.delete_app(made)


def client_call(daemon, method, body):
    """A Firebase client API call through the emulator listener (the v1 layout)."""
    host, port = daemon.emulator
    url = (f"http://{host}:{port}/identitytoolkit.googleapis.com/v1/accounts:{method}"
           f"?key={daemon.client_json['api_key']}")
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def sign_in(daemon, email, password):
    return client_call(daemon, "signInWithPassword",
                       {"email": email, "password": password, "returnSecureToken": True})


def test_create_get_and_refusals(app, emulated):
    user = auth.create_user(uid="admin-sdk-1", email="Ann@Example.com", password="secret-1",
                            display_name="Ann", photo_url="https://example.com/ann.png",
                            email_verified=True, disabled=False, app=app)
    assert user.uid == "admin-sdk-1"
    assert (user.email, user.display_name, user.photo_url) == ("ann@example.com", "Ann",
                                                               "https://example.com/ann.png")
    assert user.email_verified and not user.disabled
    assert [p.provider_id for p in user.provider_data] == ["password"]
    assert user.user_metadata.creation_timestamp > 0
    assert auth.get_user_by_email("ann@example.com", app=app).uid == "admin-sdk-1"
    assert sign_in(emulated, "ann@example.com", "secret-1")["localId"] == "admin-sdk-1"
    generated = auth.create_user(app=app)
    assert len(generated.uid) == 28
    with pytest.raises(auth.UidAlreadyExistsError):
        auth.create_user(uid="admin-sdk-1", app=app)
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.create_user(email="ann@example.com", app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user("no-such-user", app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_email("nobody@example.com", app=app)


def test_get_users_reports_the_missing(app):
    auth.create_user(uid="many-1", email="many1@example.com", app=app)
    auth.create_user(uid="many-2", app=app)
    result = auth.get_users([auth.UidIdentifier("many-2"), auth.EmailIdentifier("many1@example.com"),
                             auth.UidIdentifier("many-missing")], app=app)
    assert sorted(u.uid for u in result.users) == ["many-1", "many-2"]
    assert [i.uid for i in result.not_found] == ["many-missing"]


def test_list_users_pages(app):
    made = {auth.create_user(uid=f"page-{n:02}", app=app).uid for n in range(7)}
    first = auth.list_users(max_results=3, app=app)
    assert len(first.users) == 3 and first.has_next_page
    pages, seen = 0, []
    page = first
    while page:
        pages += 1
        seen += [u.uid for u in page.users]
        page = page.get_next_page()
    assert made <= set(seen) and len(seen) == len(set(seen)) and pages >= 3
    assert {u.uid for u in auth.list_users(app=app).iterate_all()} >= made


def test_update_user_each_field(app, emulated):
    uid = auth.create_user(uid="upd-1", app=app).uid
    user = auth.update_user(uid, email="upd@example.com", password="secret-9", display_name="Upd",
                            photo_url="https://example.com/u.png", email_verified=True, app=app)
    assert (user.email, user.display_name, user.photo_url, user.email_verified) == (
        "upd@example.com", "Upd", "https://example.com/u.png", True)
    assert sign_in(emulated, "upd@example.com", "secret-9")["localId"] == uid
    user = auth.update_user(uid, display_name=auth.DELETE_ATTRIBUTE, photo_url=auth.DELETE_ATTRIBUTE,
                            app=app)
    assert user.display_name is None and user.photo_url is None
    assert auth.update_user(uid, disabled=True, app=app).disabled
    assert not auth.update_user(uid, disabled=False, app=app).disabled
    user = auth.update_user(uid, custom_claims={"tier": "gold"}, app=app)
    assert user.custom_claims == {"tier": "gold"}
    user = auth.update_user(uid, valid_since=int(time.time()) + 5, app=app)
    assert user.tokens_valid_after_timestamp >= (int(time.time()) + 4) * 1000
    user = auth.update_user(uid, providers_to_delete=["password"], app=app)
    assert user.email is None and user.provider_data == []
    with pytest.raises(auth.UserNotFoundError):
        auth.update_user("no-such-user", display_name="x", app=app)


def test_claims_revocation_and_verify_id_token(app, emulated):
    signed_up = client_call(emulated, "signUp", {"returnSecureToken": True})
    uid, id_token = signed_up["localId"], signed_up["idToken"]
    claims = auth.verify_id_token(id_token, app=app, check_revoked=True)
    assert claims["uid"] == uid and claims["iss"].startswith("https://securetoken.google.com/")
    assert claims["firebase"]["sign_in_provider"] == "anonymous"
    auth.set_custom_user_claims(uid, {"role": "editor"}, app=app)
    assert auth.get_user(uid, app=app).custom_claims == {"role": "editor"}
    auth.set_custom_user_claims(uid, None, app=app)
    assert auth.get_user(uid, app=app).custom_claims is None
    # The SDK compares whole seconds: revoke in a later second than the token's iat.
    time.sleep(1.1)
    auth.revoke_refresh_tokens(uid, app=app)
    assert auth.get_user(uid, app=app).tokens_valid_after_timestamp > 0
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(id_token, app=app, check_revoked=True)
    assert auth.verify_id_token(id_token, app=app)["uid"] == uid


def test_emulator_mode_skips_the_signature(app, emulated):
    """Why docs/verifying-tokens.md says never to verify tokens with an Admin SDK in
    emulator mode: a token whose signature was altered is accepted. The production paths
    refuse it (test_oidc_verifiers.py)."""
    id_token = client_call(emulated, "signUp", {"returnSecureToken": True})["idToken"]
    head, payload, signature = id_token.split(".")
    middle = len(signature) // 2
    forged = ".".join([head, payload, signature[:middle] + ("A" if signature[middle] != "A" else "B")
                       + signature[middle + 1:]])
    assert auth.verify_id_token(forged, app=app)["uid"]


def test_delete_user_and_delete_users(app):
    for n in range(3):
        auth.create_user(uid=f"del-{n}", app=app)
    auth.delete_user("del-0", app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user("del-0", app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.delete_user("del-0", app=app)
    result = auth.delete_users(["del-1", "del-2", "del-never"], app=app)
    assert (result.success_count, result.failure_count, result.errors) == (3, 0, [])
    assert auth.get_users([auth.UidIdentifier("del-1")], app=app).users == []


def test_import_users_with_firebase_scrypt(app, emulated):
    users = [
        auth.ImportUserRecord(uid="imp-1", email="user1@example.com", email_verified=True,
                              password_hash=base64.b64decode(HASH), password_salt=base64.b64decode(SALT),
                              display_name="Imported", custom_claims={"plan": "pro"},
                              provider_data=[auth.UserProvider(uid="user1@example.com", provider_id="password",
                                                               email="user1@example.com")]),
        auth.ImportUserRecord(uid="imp-2", user_metadata=auth.UserMetadata(creation_timestamp=1600000000000)),
        auth.ImportUserRecord(uid="imp-1", email="again@example.com"),
    ]
    hash_alg = auth.UserImportHash.scrypt(key=base64.b64decode(SIGNER_KEY), rounds=8, memory_cost=14,
                                          salt_separator=base64.b64decode("Bw=="))
    result = auth.import_users(users, hash_alg=hash_alg, app=app)
    assert (result.success_count, result.failure_count) == (2, 1)
    assert [e.index for e in result.errors] == [2] and result.errors[0].reason.startswith("DUPLICATE_UID")
    imported = auth.get_user("imp-1", app=app)
    assert imported.custom_claims == {"plan": "pro"} and imported.display_name == "Imported"
    assert auth.get_user("imp-2", app=app).user_metadata.creation_timestamp == 1600000000000
    assert sign_in(emulated, "user1@example.com", "user1password")["localId"] == "imp-1"


def test_bearer_owner_is_refused_on_the_tls_port(emulated):
    """`Bearer owner` is the admin key on the loopback emulator listener only."""
    import ssl
    host, port = emulated.rpc
    ctx = ssl.create_default_context(cafile=emulated.ca_file)
    ctx.set_alpn_protocols(["http/1.1"])
    project = emulated.client_json["project_id"]
    request = urllib.request.Request(
        f"https://localhost:{port}/v1/projects/{project}/accounts:lookup",
        data=json.dumps({"localId": ["imp-1"]}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30, context=ctx)
    assert refused.value.code == 401
    assert json.loads(refused.value.read())["error"]["message"].startswith("UNAUTHENTICATED")
    request.add_header("Authorization", "Bearer " + emulated.client_json["admin_key"])
    with urllib.request.urlopen(request, timeout=30, context=ctx) as reply:
        assert reply.status == 200


def test_large_import_needs_the_admin_key(app, emulated):
    """An import over the unauthenticated body limit (64 KiB) is read in full for the
    Admin SDK's `Bearer owner` on the emulator listener; the same body with `Bearer owner`
    on the TLS port is refused before its body is read (413)."""
    users = [auth.ImportUserRecord(uid=f"big-{n:04}", display_name="x" * 100) for n in range(1000)]
    result = auth.import_users(users, app=app)
    assert (result.success_count, result.failure_count) == (1000, 0)
    assert auth.get_user("big-0999", app=app).display_name == "x" * 100

    import ssl
    ctx = ssl.create_default_context(cafile=emulated.ca_file)
    ctx.set_alpn_protocols(["http/1.1"])
    body = json.dumps({"users": [u.to_dict() for u in users]}).encode()
    assert len(body) > 64 * 1024
    project = emulated.client_json["project_id"]
    request = urllib.request.Request(
        f"https://localhost:{emulated.rpc[1]}/v1/projects/{project}/accounts:batchCreate", data=body,
        headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30, context=ctx)
    assert refused.value.code == 413


def test_unknown_project_and_wrong_key(emulated):
    host, port = emulated.emulator
    project = emulated.client_json["project_id"]
    lookup = ("accounts:lookup", b'{"localId":["x"]}')
    rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    for target, authorization, (call, body), extra, status, message in [
        ("no-such-project", "Bearer owner", lookup, {}, 400, "PROJECT_NOT_FOUND"),
        (project, "Bearer not-the-key", lookup, {}, 401, "UNAUTHENTICATED"),
        # An import with nothing to import still needs the key.
        (project, "Bearer not-the-key", ("accounts:batchCreate", b'{"users":[]}'), {}, 401, "UNAUTHENTICATED"),
        (project, "Bearer not-the-key", ("accounts:batchCreate", b'{"users":[{}]}'), {}, 401, "UNAUTHENTICATED"),
        # A web page that reached the listener by DNS rebinding: owner is no key for it.
        (project, "Bearer owner", lookup, rebound, 401, "UNAUTHENTICATED"),
    ]:
        request = urllib.request.Request(
            f"http://{host}:{port}/identitytoolkit.googleapis.com/v1/projects/{target}/{call}",
            data=body, headers={"Content-Type": "application/json", "Authorization": authorization, **extra})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == status, (call, extra)
        assert json.loads(refused.value.read())["error"]["message"].startswith(message)


def admin_post(daemon, call, body):
    """(status, JSON answer) of an admin call with `Bearer owner` on the emulator listener."""
    host, port = daemon.emulator
    project = daemon.client_json["project_id"]
    request = urllib.request.Request(
        f"http://{host}:{port}/identitytoolkit.googleapis.com/v1/projects/{project}/{call}",
        data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_batch_delete_without_force_leaves_enabled_accounts(app, emulated):
    """Firebase's rule, which the Python SDK never meets (it always sends force): without
    force, only disabled accounts are deleted; enabled ones come back in errors."""
    auth.create_user(uid="bd-enabled", app=app)
    auth.create_user(uid="bd-disabled", disabled=True, app=app)
    status, answer = admin_post(emulated, "accounts:batchDelete",
                                {"localIds": ["bd-enabled", "bd-disabled", "bd-never"]})
    assert status == 200, answer
    assert [(e["index"], e["localId"]) for e in answer["errors"]] == [(0, "bd-enabled")]
    assert answer["errors"][0]["message"].startswith("NOT_DISABLED")
    assert [u.uid for u in auth.get_users([auth.UidIdentifier("bd-enabled"), auth.UidIdentifier("bd-disabled")],
                                          app=app).users] == ["bd-enabled"]
    status, answer = admin_post(emulated, "accounts:batchDelete", {"localIds": ["x"] * 1001, "force": True})
    assert status == 400 and answer["error"]["message"].startswith("INVALID_ARGUMENT"), answer
