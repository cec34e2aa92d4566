"""Firebase's JSON API over HTTPS with plain `requests` (docs/http-api.md): the seed's
flow, refresh rotation, the answers to bodies that do not decode, and the error body
of every message the API maps."""

import json
import time

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import Daemon, TEST_DAEMON_FLAGS, call


@pytest.fixture(scope="module")
def api():
    d = Daemon(extra=TEST_DAEMON_FLAGS)
    yield Api(d)
    assert d.stop() == 0


class Api:
    def __init__(self, daemon):
        self.daemon = daemon
        self.key = daemon.client_json["api_key"]
        self.base = "https://localhost:%d" % daemon.rpc[1]
        self.session = requests.Session()
        # Passed as verify= on each request: a session's verify loses to REQUESTS_CA_BUNDLE
        # in the environment, and the daemon's certificate is in no system bundle.
        self.ca = daemon.ca_file

    def post(self, path, body=None, key=True, raw=None, headers=None):
        params = {"key": self.key} if key else {}
        if raw is not None:
            return self.session.post(self.base + path, params=params, data=raw, headers=headers or {}, timeout=30, verify=self.ca)
        return self.session.post(self.base + path, params=params, json=body or {}, headers=headers or {}, timeout=30, verify=self.ca)

    def accounts(self, method, body=None, **kw):
        return self.post("/v1/accounts:" + method, body, **kw)


def error_message(response):
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert error["code"] == response.status_code
    if "status" in error:  # Google's own errors (body, path) carry `status`, not `errors`
        assert "errors" not in error
    else:
        # A bad API key names Google's keyInvalid reason, which Firebase's Apple SDK reads as
        # invalidAPIKey; every other error is the generic one.
        key = error["message"].startswith("API key not valid")
        domain, reason = ("usageLimits", "keyInvalid") if key else ("global", "invalid")
        assert error["errors"] == [{"message": error["message"], "domain": domain, "reason": reason}]
    return error["message"]


def sign_up_anonymous(api):
    r = api.accounts("signUp", {"returnSecureToken": True})
    assert r.status_code == 200, r.text
    return r.json()


def test_seed_flow_anonymous_link_sign_out_sign_in_keeps_the_uid(api):
    anon = sign_up_anonymous(api)
    assert anon["kind"] == "identitytoolkit#SignupNewUserResponse"
    assert isinstance(anon["expiresIn"], str) and int(anon["expiresIn"]) > 300
    uid = anon["localId"]
    lookup = api.accounts("lookup", {"idToken": anon["idToken"]}).json()
    assert len(lookup["users"]) == 1 and "providerUserInfo" not in lookup["users"][0]
    linked = api.accounts("signUp", {"idToken": anon["idToken"], "email": "seed@example.com",
                                     "password": "correct horse", "returnSecureToken": True})
    assert linked.status_code == 200, linked.text
    assert linked.json()["localId"] == uid and linked.json()["idToken"] and linked.json()["refreshToken"]
    # "Sign out": forget every token, then sign in with the email and password.
    signed_in = api.accounts("signInWithPassword", {"email": "seed@example.com", "password": "correct horse",
                                                    "returnSecureToken": True})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["localId"] == uid and signed_in.json()["registered"] is True
    user = api.accounts("lookup", {"idToken": signed_in.json()["idToken"]}).json()["users"][0]
    assert user["localId"] == uid and user["email"] == "seed@example.com"
    assert user["passwordHash"] and int(user["createdAt"]) > 0 and int(user["lastLoginAt"]) > 0
    assert all("providerId" in item for item in user["providerUserInfo"])
    assert [p["providerId"] for p in user["providerUserInfo"]] == ["password"]


def test_refresh_rotates_and_the_old_refresh_token_is_refused(api):
    anon = sign_up_anonymous(api)
    form = api.post("/v1/token", raw="grant_type=refresh_token&refresh_token=" + anon["refreshToken"],
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 200, form.text
    body = form.json()
    assert body["user_id"] == anon["localId"] and body["token_type"] == "Bearer"
    assert body["access_token"] == body["id_token"] and isinstance(body["expires_in"], str)
    assert body["project_id"] and body["refresh_token"] != anon["refreshToken"]
    # Apple's SDK: JSON camelCase, under the emulator-mode prefix.
    camel = api.post("/securetoken.googleapis.com/v1/token",
                     {"grantType": "refresh_token", "refreshToken": body["refresh_token"]})
    assert camel.status_code == 200, camel.text
    old = api.post("/v1/token", {"grant_type": "refresh_token", "refresh_token": anon["refreshToken"]})
    assert old.status_code == 400
    assert error_message(old) in ("TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN")


def test_the_identitytoolkit_prefix_and_the_header_key_reach_the_same_calls(api):
    r = api.post("/identitytoolkit.googleapis.com/v1/accounts:signUp", {}, key=False,
                 headers={"x-goog-api-key": api.key})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("raw,needle", [
    (b"{not json", "Invalid JSON payload received."),
    (b'{"email":"\xff\xfe"}', "not UTF-8"),
    (b"[" * 600 + b"]" * 600, "Invalid JSON payload received."),
    (b"[]", "not a JSON object"),
])
def test_bodies_that_do_not_decode_are_400_invalid_argument(api, raw, needle):
    r = api.post("/v1/accounts:signUp", raw=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert needle in error_message(r)


def test_a_member_of_the_wrong_type_is_400_naming_it(api):
    r = api.accounts("signInWithPassword", {"email": 5, "password": "x"})
    assert r.status_code == 400 and "'email'" in error_message(r)


def test_unknown_path_404_and_wrong_method_405(api):
    r = api.post("/v1/accounts:signInWithCustomToken", {})
    assert r.status_code == 404 and error_message(r).startswith("NOT_FOUND")
    r = api.session.get(api.base + "/v1/accounts:signUp", params={"key": api.key}, timeout=30, verify=api.ca)
    assert r.status_code == 405 and "POST" in r.headers["allow"]


def test_every_mapped_message(api):
    anon = sign_up_anonymous(api)
    password_user = api.accounts("signUp", {"email": "taken@example.com", "password": "secret-1"}).json()
    cases = [
        (api.accounts("signUp", {}, key=False), "API key not valid. Please pass a valid API key."),
        (api.accounts("signUp", {"email": "taken@example.com", "password": "secret-1"}), "EMAIL_EXISTS"),
        (api.accounts("signUp", {"email": "not-an-email", "password": "secret-1"}), "INVALID_EMAIL"),
        (api.accounts("signUp", {"email": "weak@example.com", "password": "x"}), "WEAK_PASSWORD"),
        (api.accounts("signUp", {"email": "x@example.com"}), "MISSING_PASSWORD"),
        (api.accounts("signInWithPassword", {"password": "x"}), "MISSING_EMAIL"),
        (api.accounts("signInWithPassword", {"email": "taken@example.com", "password": "wrong-1"}),
         "INVALID_LOGIN_CREDENTIALS"),
        (api.accounts("lookup", {"idToken": "garbage"}), "INVALID_ID_TOKEN"),
        (api.accounts("lookup", {}), "MISSING_ID_TOKEN"),
        (api.accounts("update", {"idToken": anon["idToken"], "deleteProvider": ["google.com"]}),
         "NO_SUCH_PROVIDER"),
        (api.accounts("signInWithIdp", {"postBody": "id_token=x", "requestUri": "http://localhost"}),
         "INVALID_IDP_RESPONSE"),
        (api.post("/v1/token", {"refresh_token": "x"}), "MISSING_GRANT_TYPE"),
        (api.post("/v1/token", {"grant_type": "password", "refresh_token": "x"}), "INVALID_GRANT_TYPE"),
        (api.post("/v1/token", {"grant_type": "refresh_token"}), "MISSING_REFRESH_TOKEN"),
        (api.post("/v1/token", {"grant_type": "refresh_token", "refresh_token": "garbage"}),
         "TOKEN_EXPIRED"),
    ]
    for response, message in cases:
        assert response.status_code == 400, (message, response.text)
        got = error_message(response)
        assert got.split(" : ")[0] == message, (message, got)
    assert password_user["localId"]


def test_delete_then_lookup_is_user_not_found(api):
    anon = sign_up_anonymous(api)
    r = api.accounts("delete", {"idToken": anon["idToken"]})
    assert r.status_code == 200 and r.json()["kind"] == "identitytoolkit#DeleteAccountResponse"
    r = api.accounts("lookup", {"idToken": anon["idToken"]})
    assert r.status_code == 400
    assert error_message(r) in ("USER_NOT_FOUND", "TOKEN_EXPIRED")


def test_the_call_line_names_the_rest_call(api):
    sign_up_anonymous(api)
    lines = [json.loads(line) for line in api.daemon.log_lines() if line.startswith("{")]
    calls = [line for line in lines if line.get("msg") == "call" and line.get("method") == "accounts:signUp"]
    assert calls and calls[-1]["http_status"] == 200 and calls[-1]["code"] == 0


def test_update_display_name_password_and_email(api):
    anon = sign_up_anonymous(api)
    # An anonymous account gets email and password through accounts:update (linked).
    r = api.accounts("update", {"idToken": anon["idToken"], "email": "upd@example.com", "password": "first-pass",
                                "displayName": "Ada", "returnSecureToken": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "identitytoolkit#SetAccountInfoResponse" and body["localId"] == anon["localId"]
    assert body["displayName"] == "Ada" and body["email"] == "upd@example.com" and body["passwordHash"]
    assert [p["providerId"] for p in body["providerUserInfo"]] == ["password"]
    # A new password: new tokens, and every other session is revoked.
    other = api.accounts("signInWithPassword", {"email": "upd@example.com", "password": "first-pass"}).json()
    r = api.accounts("update", {"idToken": body["idToken"], "password": "second-pass", "returnSecureToken": True})
    assert r.status_code == 200, r.text
    changed = r.json()
    assert changed["idToken"] and changed["refreshToken"] and isinstance(changed["expiresIn"], str)
    old = api.post("/v1/token", {"grant_type": "refresh_token", "refresh_token": other["refreshToken"]})
    # Deleted, not only outdated: a session started in the same second is gone too.
    assert old.status_code == 400 and error_message(old) == "TOKEN_EXPIRED"
    r = api.accounts("signInWithPassword", {"email": "upd@example.com", "password": "first-pass"})
    assert error_message(r) == "INVALID_LOGIN_CREDENTIALS"
    # A new email; the name alone keeps the refresh token.
    r = api.accounts("update", {"idToken": changed["idToken"], "email": "moved@example.com"})
    assert r.status_code == 200 and r.json()["email"] == "moved@example.com", r.text
    r = api.accounts("update", {"idToken": r.json()["idToken"], "displayName": "Grace"})
    assert r.status_code == 200 and r.json()["displayName"] == "Grace" and "refreshToken" not in r.json()
    signed_in = api.accounts("signInWithPassword", {"email": "moved@example.com", "password": "second-pass"})
    assert signed_in.status_code == 200 and signed_in.json()["localId"] == anon["localId"]


def test_update_errors(api):
    anon = sign_up_anonymous(api)
    api.accounts("signUp", {"email": "owner@example.com", "password": "secret-1"})
    r = api.accounts("update", {"idToken": anon["idToken"], "email": "only@example.com"})
    assert r.status_code == 400 and error_message(r).startswith("INVALID_ARGUMENT")
    r = api.accounts("update", {"idToken": anon["idToken"], "email": "owner@example.com", "password": "secret-2"})
    assert error_message(r) == "EMAIL_EXISTS"
    r = api.accounts("update", {"idToken": anon["idToken"], "displayName": "a\u0007b"})
    assert error_message(r).startswith("INVALID_ARGUMENT")


def set_cors_origins(api, pb, origins):
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = api.daemon.client_json["project_id"]
    req.config.cors_origins.extend(origins)
    req.update_mask.append("cors_origins")
    with api.daemon.connect() as s:
        status, config = call(s, pb, "/anonauth.v1.AdminService/UpdateProjectConfig", req, pb.admin.ProjectConfig,
                              {"authorization": "Bearer " + api.daemon.client_json["admin_key"]})
    assert status.code == 0, status
    return config


def preflight(api, origin, path="/v1/accounts:signUp"):
    return api.session.options(api.base + path, params={"key": api.key}, timeout=30, verify=api.ca, headers={
        "origin": origin, "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-client-version"})


def test_cors_none_by_default_then_the_project_setting(api, pb):
    origin = "https://app.example.com"
    r = preflight(api, origin)
    assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
    assert error_message(r).startswith("CORS_ORIGIN_NOT_ALLOWED")
    r = api.accounts("signUp", {}, headers={"origin": origin})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    assert r.headers["vary"] == "Origin"

    config = set_cors_origins(api, pb, [origin])
    assert list(config.cors_origins) == [origin]
    r = preflight(api, origin)
    assert r.status_code == 204, r.text
    assert r.headers["access-control-allow-origin"] == origin
    assert "POST" in r.headers["access-control-allow-methods"]
    assert "x-client-version" in r.headers["access-control-allow-headers"]
    assert int(r.headers["access-control-max-age"]) > 0 and r.headers["vary"] == "Origin"
    r = api.accounts("signUp", {}, headers={"origin": origin})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
    # Errors carry it too, so the page can read them; another origin gets nothing.
    r = api.accounts("lookup", {"idToken": "x"}, headers={"origin": origin})
    assert r.status_code == 400 and r.headers["access-control-allow-origin"] == origin
    assert preflight(api, "https://evil.example.com").status_code == 403
    assert preflight(api, origin, path="/v1/nothing").status_code == 404
    set_cors_origins(api, pb, [])
    assert preflight(api, origin).status_code == 403


def configure_oidc(api, pb):
    """oidc.test with its keys inline (no network): returns a signer of its ID tokens."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid="k1", alg="RS256", use="sig")
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = api.daemon.client_json["project_id"]
    idp = req.config.idps.add()
    idp.provider_id, idp.enabled, idp.client_id = "oidc.test", True, "web-client"
    idp.issuer, idp.jwks_json = "https://issuer.example", json.dumps({"keys": [jwk]})
    req.update_mask.append("idps")
    with api.daemon.connect() as s:
        status, _ = call(s, pb, "/anonauth.v1.AdminService/UpdateProjectConfig", req, pb.admin.ProjectConfig,
                         {"authorization": "Bearer " + api.daemon.client_json["admin_key"]})
    assert status.code == 0, status

    def token(sub, email):
        now = int(time.time())
        claims = {"iss": "https://issuer.example", "aud": "web-client", "sub": sub, "iat": now, "exp": now + 600,
                  "email": email, "email_verified": True}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})

    return token


def test_sign_in_with_idp_and_a_link_to_an_identity_another_account_holds(api, pb):
    token = configure_oidc(api, pb)
    first = token("idp-user-1", "idp1@example.com")
    r = api.accounts("signInWithIdp", {"postBody": "providerId=oidc.test&id_token=" + first,
                                        "requestUri": "http://localhost", "returnIdpCredential": True,
                                        "returnSecureToken": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "identitytoolkit#VerifyAssertionResponse" and body["providerId"] == "oidc.test"
    assert body["federatedId"] == "idp-user-1" and body["isNewUser"] is True
    assert body["idToken"] and body["refreshToken"] and isinstance(body["expiresIn"], str)
    owner = body["localId"]
    # Linking the same identity to another (anonymous) account: 200, no tokens, the credential.
    anon = sign_up_anonymous(api)
    r = api.accounts("signInWithIdp", {"postBody": "providerId=oidc.test&id_token=" + first,
                                        "idToken": anon["idToken"], "requestUri": "http://localhost",
                                        "returnSecureToken": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["errorMessage"] == "FEDERATED_USER_ID_ALREADY_LINKED"
    assert body["oauthIdToken"] == first and body["providerId"] == "oidc.test" and "idToken" not in body
    # Linking a fresh identity keeps the anonymous uid.
    second = token("idp-user-2", "i2@example.com")
    r = api.accounts("signInWithIdp", {"postBody": "providerId=oidc.test&id_token=" + second,
                                        "idToken": anon["idToken"], "requestUri": "http://localhost"})
    assert r.status_code == 200 and r.json()["localId"] == anon["localId"] != owner, r.text
    user = api.accounts("lookup", {"idToken": r.json()["idToken"]}).json()["users"][0]
    assert [(p["providerId"], p["rawId"]) for p in user["providerUserInfo"]] == [("oidc.test", "idp-user-2")]
    # A token that does not verify.
    r = api.accounts("signInWithIdp", {"postBody": "providerId=oidc.test&id_token=" + first[:-4] + "AAAA",
                                        "requestUri": "http://localhost"})
    assert r.status_code == 400 and error_message(r).startswith("INVALID_IDP_RESPONSE")


def admin_call(api, pb, method, req, response_type):
    with api.daemon.connect() as s:
        status, response = call(s, pb, "/anonauth.v1.AdminService/" + method, req, response_type,
                                {"authorization": "Bearer " + api.daemon.client_json["admin_key"]})
    assert status.code == 0, status
    return response


def set_config(api, pb, **fields):
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = api.daemon.client_json["project_id"]
    for name, value in fields.items():
        setattr(req.config, name, value)
        req.update_mask.append(name)
    return admin_call(api, pb, "UpdateProjectConfig", req, pb.admin.ProjectConfig)


def test_more_mapped_messages_from_account_state_and_settings(api, pb):
    project = api.daemon.client_json["project_id"]
    # OPERATION_NOT_ALLOWED: anonymous sign-in turned off for the project.
    set_config(api, pb, anonymous_enabled=False)
    try:
        r = api.accounts("signUp", {"returnSecureToken": True})
        assert r.status_code == 400 and error_message(r) == "OPERATION_NOT_ALLOWED"
    finally:
        set_config(api, pb, anonymous_enabled=True)
    # PROVIDER_ALREADY_LINKED: a password linked to an account that has one.
    user = api.accounts("signUp", {"email": "twice@example.com", "password": "secret-1"}).json()
    r = api.accounts("signUp", {"idToken": user["idToken"], "email": "twice2@example.com", "password": "secret-2"})
    assert error_message(r) == "PROVIDER_ALREADY_LINKED"
    # LAST_SIGN_IN_METHOD: unlinking the only way back in.
    r = api.accounts("update", {"idToken": user["idToken"], "deleteProvider": ["password"]})
    assert error_message(r).startswith("OPERATION_NOT_ALLOWED : ")
    # TOKEN_EXPIRED: an ID token issued before the account's tokens were revoked.
    anon = sign_up_anonymous(api)
    time.sleep(1.1)
    req = pb.admin.RevokeRefreshTokensRequest(project_id=project, local_id=anon["localId"])
    admin_call(api, pb, "RevokeRefreshTokens", req, pb.admin.RevokeRefreshTokensResponse)
    r = api.accounts("lookup", {"idToken": anon["idToken"]})
    assert r.status_code == 400 and error_message(r) == "TOKEN_EXPIRED"
    # USER_DISABLED.
    other = sign_up_anonymous(api)
    req = pb.admin.DisableAccountRequest(project_id=project, local_id=other["localId"], disabled=True)
    admin_call(api, pb, "DisableAccount", req, pb.account.AccountInfo)
    r = api.post("/v1/token", {"grant_type": "refresh_token", "refresh_token": other["refreshToken"]})
    assert r.status_code == 400 and error_message(r) == "USER_DISABLED"


def test_quota_refusal_is_too_many_attempts_with_retry_after(pb):
    d = Daemon(extra=TEST_DAEMON_FLAGS)
    try:
        api = Api(d)
        set_config(api, pb, sign_up_quota_per_hour=1)
        assert api.accounts("signUp", {}).status_code == 200
        r = api.accounts("signUp", {})
        assert r.status_code == 400 and error_message(r).startswith("TOO_MANY_ATTEMPTS_TRY_LATER")
        assert int(r.headers["retry-after"]) > 0
    finally:
        assert d.stop() == 0


def test_sign_in_with_firebase_id_token_moves_the_uid(api, pb):
    # AnonAuth's addition: the native SignInWithFirebaseIdToken as JSON.
    from test_firebase_exchange import Securetoken, configure as configure_firebase
    securetoken = Securetoken()
    configure_firebase(api.daemon, pb, securetoken, create=True)
    r = api.post("/identitytoolkit.googleapis.com/v1/accounts:signInWithFirebaseIdToken",
                 {"idToken": securetoken.token("py-fb-http-1"), "returnSecureToken": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["localId"] == "py-fb-http-1" and body["isNewUser"] is True
    assert body["expiresIn"] == "3600" and body["refreshToken"]
    lookup = api.accounts("lookup", {"idToken": body["idToken"]}).json()
    assert lookup["users"][0]["localId"] == "py-fb-http-1"
    again = api.accounts("signInWithFirebaseIdToken", {"idToken": securetoken.token("py-fb-http-1")})
    assert again.status_code == 200 and again.json()["isNewUser"] is False
    forged = Securetoken().token("py-fb-forged")
    refused = api.accounts("signInWithFirebaseIdToken", {"idToken": forged})
    assert refused.status_code == 400 and error_message(refused)
