"""The requests Firebase's Apple SDK (FirebaseAuth 12.x) sends after
`useEmulator(withHost:port:)`, byte for byte in shape: the legacy Identity Toolkit v3
paths (`/www.googleapis.com/identitytoolkit/v3/relyingparty/<method>?key=`), pretty-printed
JSON bodies as a debug build sends them, the SDK's own headers and no Authorization, and
the refresh with camelCase JSON. The seed's flow runs through the emulator listener, and
every answer is checked for what the SDK's decoders need (docs/http-admin-api.md lists
them): strings for expiresIn, createdAt and lastLoginAt, `users` with exactly one object,
a passwordHash placeholder, a providerId on every providerUserInfo, the ID token's
numeric exp/iat/auth_time and string firebase.sign_in_provider, and errors as
`{"error":{"code":...,"message":"CODE..."}}` with a status of 300 or more."""

import base64
import json
import time
import urllib.error
import urllib.request

import jwt
import pytest

from conftest import TEST_DAEMON_FLAGS, Daemon, trust_google_key

GOOGLE_CLIENT = "seed-ios-client.apps.googleusercontent.com"
GOOGLE_ISSUER = "https://accounts.google.com"

SDK_HEADERS = {
    "Content-Type": "application/json",
    "X-Client-Version": "iOS/FirebaseSDK/12.4.0/FirebaseCore-iOS",
    "X-Ios-Bundle-Identifier": "com.example.seed",
    "X-Firebase-GMPID": "1:1234567890:ios:0123456789abcdef",
    "X-Firebase-Locale": "en",
    "X-Firebase-Client": "apple-platform/ios apple-sdk/22F76 appstore/true deploy/cocoapods device/arm64",
    "X-Firebase-AppCheck": "eyJlcnJvciI6IlVOS05PV05fRVJST1IifQ==",
    "Accept-Language": "en",
}


@pytest.fixture(scope="module")
def emulated():
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--firebase-emulator-listen", "127.0.0.1:0"])
    yield d
    assert d.stop() == 0


def post(daemon, path, body):
    """(status, JSON answer) of one POST as the SDK sends it."""
    host, port = daemon.emulator
    url = f"http://{host}:{port}{path}?key={daemon.client_json['api_key']}"
    data = json.dumps(body, indent=2, sort_keys=True).encode()
    request = urllib.request.Request(url, data=data, headers=SDK_HEADERS, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def legacy(daemon, method, body, prefix="/www.googleapis.com"):
    return post(daemon, f"{prefix}/identitytoolkit/v3/relyingparty/{method}", body)


def token_claims(id_token):
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def assert_session(answer):
    """What the SDK's token decoding needs from every answer that signs someone in."""
    assert isinstance(answer["idToken"], str) and answer["idToken"]
    assert isinstance(answer["refreshToken"], str) and answer["refreshToken"]
    assert isinstance(answer["expiresIn"], str) and int(answer["expiresIn"]) > 300
    claims = token_claims(answer["idToken"])
    for name in ("exp", "iat", "auth_time"):
        assert isinstance(claims[name], int), name
    assert isinstance(claims["firebase"]["sign_in_provider"], str)
    return claims


def account_info(daemon, id_token):
    status, answer = legacy(daemon, "getAccountInfo", {"idToken": id_token})
    assert status == 200, answer
    assert isinstance(answer["users"], list) and len(answer["users"]) == 1
    user = answer["users"][0]
    assert isinstance(user["createdAt"], str) and int(user["createdAt"]) > 0
    assert isinstance(user["lastLoginAt"], str) and int(user["lastLoginAt"]) > 0
    for item in user.get("providerUserInfo", []):
        assert isinstance(item["providerId"], str) and item["providerId"]
    return user


def assert_error(status, answer, code):
    assert status >= 300, answer
    assert answer["error"]["code"] == status
    assert answer["error"]["message"].split(":")[0].strip() == code, answer


def test_seed_flow_through_the_legacy_paths(emulated):
    status, anonymous = legacy(emulated, "signupNewUser",
                               {"clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True})
    assert status == 200, anonymous
    claims = assert_session(anonymous)
    assert claims["firebase"]["sign_in_provider"] == "anonymous"
    uid = anonymous["localId"]
    user = account_info(emulated, anonymous["idToken"])
    assert user["localId"] == uid and user.get("providerUserInfo", []) == []
    assert "passwordHash" not in user

    status, linked = legacy(emulated, "signupNewUser", {
        "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True, "email": "seed@example.com",
        "password": "secret-1", "idToken": anonymous["idToken"]})
    assert status == 200, linked
    assert linked["localId"] == uid
    assert assert_session(linked)["firebase"]["sign_in_provider"] == "password"
    user = account_info(emulated, linked["idToken"])
    assert user["email"] == "seed@example.com"
    assert isinstance(user["passwordHash"], str) and user["passwordHash"]
    assert [p["providerId"] for p in user["providerUserInfo"]] == ["password"]

    status, signed_in = legacy(emulated, "verifyPassword", {
        "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True, "email": "seed@example.com",
        "password": "secret-1"})
    assert status == 200, signed_in
    assert signed_in["localId"] == uid
    assert_session(signed_in)

    # The other layout the SDK's emulator mode may use for the same calls.
    status, same = legacy(emulated, "getAccountInfo", {"idToken": signed_in["idToken"]}, prefix="")
    assert status == 200 and same["users"][0]["localId"] == uid, same

    status, refreshed = post(emulated, "/securetoken.googleapis.com/v1/token",
                             {"grantType": "refresh_token", "refreshToken": signed_in["refreshToken"]})
    assert status == 200, refreshed
    assert isinstance(refreshed["access_token"], str) and refreshed["access_token"]
    assert isinstance(refreshed["expires_in"], str) and int(refreshed["expires_in"]) > 300
    assert refreshed["user_id"] == uid and refreshed["refresh_token"]
    assert token_claims(refreshed["access_token"])["sub"] == uid

    # setAccountInfo is accounts:update: what that call changes is the v1 endpoint's.
    status, answer = legacy(emulated, "setAccountInfo", {
        "idToken": refreshed["access_token"], "displayName": "Seed", "returnSecureToken": True})
    assert status == 200, answer
    assert answer["localId"] == uid and answer["displayName"] == "Seed"
    assert [item["providerId"] for item in answer["providerUserInfo"]] == ["password"]

    status, deleted = legacy(emulated, "deleteAccount", {"idToken": refreshed["access_token"], "localId": uid})
    assert status == 200, deleted
    status, answer = legacy(emulated, "verifyPassword", {
        "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True, "email": "seed@example.com",
        "password": "secret-1"})
    assert_error(status, answer, "INVALID_LOGIN_CREDENTIALS")


def test_errors_carry_the_codes_the_sdk_maps(emulated):
    status, first = legacy(emulated, "signupNewUser", {
        "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True, "email": "taken@example.com",
        "password": "secret-1"})
    assert status == 200, first
    status, answer = legacy(emulated, "signupNewUser", {
        "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True, "email": "taken@example.com",
        "password": "secret-1"})
    assert_error(status, answer, "EMAIL_EXISTS")
    status, answer = legacy(emulated, "verifyPassword", {
        "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True, "email": "taken@example.com",
        "password": "wrong-password"})
    assert_error(status, answer, "INVALID_LOGIN_CREDENTIALS")
    status, answer = legacy(emulated, "getAccountInfo", {"idToken": "not.a.token"})
    assert_error(status, answer, "INVALID_ID_TOKEN")
    # Email actions (--dev without --smtp-url: the mail goes to the data dir).
    status, answer = legacy(emulated, "getOobConfirmationCode", {
        "requestType": "PASSWORD_RESET", "email": "taken@example.com", "clientType": "CLIENT_TYPE_IOS"})
    assert status == 200 and answer["email"] == "taken@example.com", answer
    status, answer = legacy(emulated, "resetPassword", {"oobCode": "no-such-code", "newPassword": "secret-2"})
    assert_error(status, answer, "INVALID_OOB_CODE")
    status, answer = legacy(emulated, "emailLinkSignin", {"email": "taken@example.com", "oobCode": "no-such-code"})
    assert_error(status, answer, "INVALID_OOB_CODE")
    status, answer = legacy(emulated, "noSuchMethod", {})
    assert status == 404 and answer["error"]["code"] == 404, answer


def google_token(key, sub, email):
    now = int(time.time())
    claims = {"iss": GOOGLE_ISSUER, "aud": GOOGLE_CLIENT, "sub": sub, "iat": now, "exp": now + 600,
              "email": email, "email_verified": True}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "seed-google"})


def test_verify_assertion_links_google_and_returns_provider_id(emulated, pb):
    """The SDK's verifyAssertion: postBody with providerId and id_token, idToken to link,
    requestUri, returnIdpCredential, autoCreate. Its answer must name providerId; a
    Google account that belongs to someone else answers 200 with errorMessage."""
    key = trust_google_key(emulated, pb, "seed-google", GOOGLE_CLIENT, GOOGLE_ISSUER)

    status, anonymous = legacy(emulated, "signupNewUser", {"clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True})
    assert status == 200, anonymous
    google = google_token(key, "g-1001", "g1001@example.com")
    assertion = {"postBody": f"providerId=google.com&id_token={google}", "requestUri": "http://localhost",
                 "returnIdpCredential": True, "returnSecureToken": True, "autoCreate": True}
    status, linked = legacy(emulated, "verifyAssertion", {**assertion, "idToken": anonymous["idToken"]})
    assert status == 200, linked
    assert linked["providerId"] == "google.com" and linked["localId"] == anonymous["localId"]
    assert assert_session(linked)["firebase"]["sign_in_provider"] == "google.com"
    user = account_info(emulated, linked["idToken"])
    assert [p["providerId"] for p in user["providerUserInfo"]] == ["google.com"]

    status, signed_in = legacy(emulated, "verifyAssertion", assertion)
    assert status == 200 and signed_in["localId"] == anonymous["localId"], signed_in
    assert signed_in["providerId"] == "google.com"

    status, other = legacy(emulated, "signupNewUser", {"clientType": "CLIENT_TYPE_IOS", "returnSecureToken": True})
    assert status == 200, other
    status, taken = legacy(emulated, "verifyAssertion", {**assertion, "idToken": other["idToken"]})
    assert status == 200, taken
    assert taken["errorMessage"] == "FEDERATED_USER_ID_ALREADY_LINKED"
    assert taken["providerId"] == "google.com" and taken["oauthIdToken"] == google
