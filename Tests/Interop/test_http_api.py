"""Firebase's JSON API over HTTPS with plain `requests` (docs/http-api.md): the seed's
flow, refresh rotation, the answers to bodies that do not decode, and the error body
of every message the API maps."""

import json

import pytest
import requests

from conftest import Daemon, TEST_DAEMON_FLAGS


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
        assert error["errors"] == [{"message": error["message"], "domain": "global", "reason": "invalid"}]
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
    r = api.post("/v1/accounts:sendOobCode", {})
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
         "INVALID_REFRESH_TOKEN"),
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
