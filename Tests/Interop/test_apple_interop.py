"""Sign in with Apple against the real daemon and a fake Apple on loopback
(apple_stub.py: its own CA, ES256 and RS256 keys, the token and revoke endpoints). What an
attacker holding a leaked Apple token tries is refused (no nonce, the claim sent back as
the nonce, the token replayed, another app's bundle id); what an app does works: the
native and the Firebase wire, the name FirebaseAuth sends, a Firebase user imported with
its Apple identity, the CLI, and token revocation with a client secret the daemon signs."""

import json
import tempfile
import time
import urllib.parse

import pytest
import requests

import apple_stub
from apple_stub import sha256_hex
from conftest import Daemon, cli
from test_linking_interop import ACCOUNT, daemon_claims, rpc

ADMIN = "/anonauth.v1.AdminService/"
BUNDLE_ID = "com.example.seed"
SERVICES_ID = "com.example.seed.web"
TEAM_ID = "TEAM4242AB"
KEY_ID = "KEY4242ABC"


def apple_config(apple, port, **overrides):
    base = f"https://localhost:{port}"
    config = {"provider_id": "apple.com", "enabled": True, "client_ids": [BUNDLE_ID, SERVICES_ID],
              "jwks_url": base + "/auth/keys", "api_base_url": base, "team_id": TEAM_ID, "key_id": KEY_ID,
              "private_key": apple.p8}
    config.update(overrides)
    return config


def start(pb, apple, port, ca):
    daemon = Daemon(extra=["--outbound-ca-file", ca])
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = daemon.client_json["project_id"]
    entry = req.config.idps.add()
    for k, v in apple_config(apple, port).items():
        if isinstance(v, list):
            getattr(entry, k).extend(v)
        else:
            setattr(entry, k, v)
    req.update_mask.append("idps")
    status, _ = admin(daemon, pb, "UpdateProjectConfig", req, pb.admin.ProjectConfig)
    assert status.code == 0, status
    return daemon


def admin(daemon, pb, method, request, response_type):
    return rpc(daemon, pb, ADMIN + method, request, response_type,
               {"authorization": "Bearer " + daemon.client_json["admin_key"]})


@pytest.fixture(scope="module")
def env(pb):
    directory = tempfile.mkdtemp(prefix="anonauth-apple-")
    ca, cert, key = apple_stub.make_ca(directory)
    apple = apple_stub.FakeApple(TEAM_ID, KEY_ID, [BUNDLE_ID, SERVICES_ID])
    server, port = apple_stub.serve(apple, cert, key)
    daemon = start(pb, apple, port, ca)

    class Env:
        pass

    e = Env()
    e.daemon, e.apple, e.port, e.ca = daemon, apple, port, ca
    e.base = f"https://localhost:{daemon.rpc[1]}"
    yield e
    assert daemon.stop() == 0
    server.shutdown()


def native_sign_in(e, pb, **credential):
    req = pb.account.SignInWithIdpRequest()
    for k, v in credential.items():
        setattr(req.credential, k, v)
    return rpc(e.daemon, pb, ACCOUNT + "SignInWithIdp", req, pb.account.AuthResponse)


def rest(e, path, body):
    return requests.post(e.base + path, params={"key": e.daemon.client_json["api_key"]}, json=body,
                         timeout=30, verify=e.daemon.ca_file)


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
def test_a_leaked_token_cannot_be_replayed(env, pb, alg):
    sub = f"001234.{alg.lower()}.0042"
    token = env.apple.token(sub, raw_nonce=f"raw-{alg}", alg=alg, email=f"{alg.lower()}@privaterelay.appleid.com")
    # Without the raw nonce, or with the hashed claim sent back as the "raw" nonce.
    for nonce in ["", sha256_hex(f"raw-{alg}"), "another"]:
        status, _ = native_sign_in(env, pb, provider_id="apple.com", id_token=token, nonce=nonce)
        assert (status.code, status.reason) == (3, "MISSING_OR_INVALID_NONCE"), nonce
    # The app's own sign-in.
    status, auth = native_sign_in(env, pb, provider_id="apple.com", id_token=token, nonce=f"raw-{alg}")
    assert status.code == 0, status
    assert auth.is_new_user and auth.sign_in_provider == "apple.com"
    assert auth.account.email == f"{alg.lower()}@privaterelay.appleid.com" and auth.account.email_verified
    claims = daemon_claims(env, auth.id_token)
    assert claims["firebase"]["sign_in_provider"] == "apple.com"
    assert claims["firebase"]["identities"]["apple.com"] == [sub]
    # The same token and nonce again, within the token's life: a replay.
    status, _ = native_sign_in(env, pb, provider_id="apple.com", id_token=token, nonce=f"raw-{alg}")
    assert (status.code, status.reason) == (3, "MISSING_OR_INVALID_NONCE")
    assert "Duplicate credential" in status.message
    # A later sign-in from the web (the Services ID), without the email Apple sent once.
    later = env.apple.token(sub, raw_nonce="later-" + alg, alg=alg, aud=SERVICES_ID)
    status, again = native_sign_in(env, pb, provider_id="apple.com", id_token=later, nonce="later-" + alg)
    assert status.code == 0 and again.local_id == auth.local_id and not again.is_new_user


def test_another_apps_token_is_refused(env, pb):
    token = env.apple.token("001234.other.1", raw_nonce="n", aud="com.someone.else")
    status, _ = native_sign_in(env, pb, provider_id="apple.com", id_token=token, nonce="n")
    assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE")
    # Signed by a key Apple never published.
    stranger = apple_stub.FakeApple(TEAM_ID, KEY_ID, [BUNDLE_ID])
    status, _ = native_sign_in(env, pb, provider_id="apple.com", id_token=stranger.token("x", raw_nonce="n"),
                               nonce="n")
    assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE")


def test_the_firebase_wire_carries_the_name(env):
    """FirebaseAuth's signInWithIdp for Apple: the raw nonce in postBody's `nonce`, the
    name from ASAuthorizationAppleIDCredential.fullName in its `user` field."""
    anon = rest(env, "/v1/accounts:signUp", {"returnSecureToken": True}).json()
    time.sleep(1.1)  # valid_since is in whole seconds
    token = env.apple.token("001234.wire.7", raw_nonce="wire-nonce", email="wire@privaterelay.appleid.com")
    user = json.dumps({"name": {"firstName": "Ada", "lastName": "Lovelace"}}, sort_keys=True)
    post_body = urllib.parse.urlencode(
        {"providerId": "apple.com", "id_token": token, "nonce": "wire-nonce", "user": user})
    r = rest(env, "/v1/accounts:signInWithIdp",
             {"postBody": post_body, "requestUri": "http://localhost", "idToken": anon["idToken"],
              "returnSecureToken": True, "returnIdpCredential": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["localId"] == anon["localId"] and body["providerId"] == "apple.com"
    assert body["federatedId"] == "001234.wire.7"
    lookup = rest(env, "/v1/accounts:lookup", {"idToken": body["idToken"]}).json()["users"][0]
    assert lookup["displayName"] == "Ada Lovelace"
    assert [p["providerId"] for p in lookup["providerUserInfo"]] == ["apple.com"]
    # The same body again: the nonce has signed in once.
    again = rest(env, "/v1/accounts:signInWithIdp", {"postBody": post_body, "requestUri": "http://localhost",
                                                      "returnSecureToken": True})
    assert again.status_code == 400 and again.json()["error"]["message"].startswith("MISSING_OR_INVALID_NONCE")


def test_an_imported_firebase_apple_user_signs_in_with_its_uid(env, pb):
    req = pb.admin.ImportAccountsRequest(project_id=env.daemon.client_json["project_id"])
    row = req.accounts.add(local_id="fb-apple-uid-1", email="imp@privaterelay.appleid.com", email_verified=True)
    row.providers.add(provider_id="apple.com", raw_id="000777.imported.1", email="imp@privaterelay.appleid.com")
    status, response = admin(env.daemon, pb, "ImportAccounts", req, pb.admin.ImportAccountsResponse)
    assert status.code == 0 and response.imported == 1, (status, response)
    token = env.apple.token("000777.imported.1", raw_nonce="imp", email="imp@privaterelay.appleid.com")
    status, auth = native_sign_in(env, pb, provider_id="apple.com", id_token=token, nonce="imp")
    assert status.code == 0, status
    assert auth.local_id == "fb-apple-uid-1" and not auth.is_new_user
    # And the export shows the identity as Firebase's shape has it.
    status, page = admin(env.daemon, pb, "ExportAccounts",
                         pb.admin.ExportAccountsRequest(project_id=env.daemon.client_json["project_id"]),
                         pb.admin.ExportAccountsResponse)
    exported = next(a.account for a in page.accounts if a.account.local_id == "fb-apple-uid-1")
    assert [(p.provider_id, p.raw_id) for p in exported.providers] == [("apple.com", "000777.imported.1")]


def test_the_keys_rotate(pb, env):
    """Apple rotates its keys: a token under the new kid verifies, one under a key Apple
    no longer publishes does not (a daemon of its own, whose first fetch comes after the
    rotation: the refetch for an unknown kid is the Swift suite's JWKSURLTests)."""
    retired = env.apple.token("001.rot", raw_nonce="r1")
    old = dict(env.apple.signing)
    env.apple.rotate()
    daemon = start(pb, env.apple, env.port, env.ca)
    try:
        e = type("E", (), {"daemon": daemon})
        for alg in ["ES256", "RS256"]:
            status, _ = native_sign_in(e, pb, provider_id="apple.com",
                                       id_token=env.apple.token("001.rot", raw_nonce="r2" + alg, alg=alg),
                                       nonce="r2" + alg)
            assert status.code == 0, status
        status, _ = native_sign_in(e, pb, provider_id="apple.com", id_token=retired, nonce="r1")
        assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE")
    finally:
        # The old generation signs again (first), the new one stays published: the
        # module's daemon cached the old keys.
        env.apple.signing = {**old, **env.apple.signing}
        assert daemon.stop() == 0


def test_revoke_token_with_a_client_secret_the_daemon_signs(env):
    anon = rest(env, "/v1/accounts:signUp", {"returnSecureToken": True}).json()
    code = env.apple.new_code(BUNDLE_ID)
    env.apple.fail_next = 2  # Apple stumbles twice: the daemon tries again
    r = rest(env, "/v2/accounts:revokeToken",
             {"providerId": "apple.com", "tokenType": "3", "token": code, "idToken": anon["idToken"]})
    assert r.status_code == 200, r.text
    assert r.json() == {}
    assert env.apple.refusals == [] and len(env.apple.revoked) == 1
    line = next(json.loads(l) for l in env.daemon.log_lines() if "provider token revoked" in l)
    assert line["attempts"] == 4 and line["client_id"] == BUNDLE_ID
    assert code not in env.daemon.log_lines_text() and env.apple.revoked[0] not in env.daemon.log_lines_text()
    # A code issued to the web Services ID: the bundle id is refused, the next id works.
    r = rest(env, "/v2/accounts:revokeToken",
             {"providerId": "apple.com", "tokenType": "3", "token": env.apple.new_code(SERVICES_ID),
              "idToken": anon["idToken"]})
    assert r.status_code == 200, r.text
    # A code Apple does not know, another provider, another token type.
    for body, message in [
        ({"providerId": "apple.com", "tokenType": "3", "token": "unknown"}, "INVALID_IDP_RESPONSE"),
        ({"providerId": "google.com", "tokenType": "3", "token": "x"}, "INVALID_ARGUMENT"),
        ({"providerId": "apple.com", "tokenType": "1", "token": "x"}, "INVALID_ARGUMENT"),
    ]:
        r = rest(env, "/v2/accounts:revokeToken", {**body, "idToken": anon["idToken"]})
        assert r.status_code == 400 and r.json()["error"]["message"].startswith(message), r.text


def test_cli_links_apple(env):
    d = env.daemon
    uid = cli(d, "signin-anonymously").stdout.strip()
    token = env.apple.token("001234.cli.9", raw_nonce="cli-raw")
    missing = cli(d, "link", "apple", "--id-token", token, check=False)
    assert missing.returncode == 2 and "--raw-nonce" in missing.stderr
    out = cli(d, "link", "apple", "--id-token", token, "--raw-nonce", "cli-raw", "--name", "Grace Hopper").stdout
    assert "linked apple.com to " + uid in out
    who = json.loads(cli(d, "whoami", "--json").stdout)
    assert who["providers"] == "apple.com"
    # The token again (its nonce has signed in): refused, with Firebase's name for it.
    again = cli(d, "signin", "apple", "--id-token", token, "--raw-nonce", "cli-raw", check=False)
    assert again.returncode == 1 and "MISSING_OR_INVALID_NONCE" in again.stderr
