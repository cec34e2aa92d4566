"""ID tokens checked by a standard JWT library the way the Firebase Admin SDKs check them,
with keys fetched from the ops port (JWKS and X.509)."""

import json
import time
import urllib.request

import jwt
import pytest
from cryptography import x509

from conftest import Daemon, call_frame, read_frame, send_frame

SIGN_UP = "/anonauth.v1.AccountService/SignUp"


@pytest.fixture
def firebase_daemon():
    d = Daemon(extra=["--issuer-prefix", "https://securetoken.google.com/"])
    yield d
    assert d.stop() == 0


def sign_up(daemon, pb):
    req = pb.account.SignUpRequest()
    req.anonymous.SetInParent()
    with daemon.connect() as s:
        send_frame(s, call_frame(pb, 1, SIGN_UP, req.SerializeToString(), {"x-api-key": daemon.client_json["api_key"]}))
        frame = read_frame(s, pb)
    assert frame.reply.status.code == 0, frame.reply.status
    return pb.account.AuthResponse.FromString(frame.reply.payload)


def get(daemon, path):
    with urllib.request.urlopen(f"http://{daemon.ops[0]}:{daemon.ops[1]}{path}", timeout=5) as r:
        return r.headers, json.loads(r.read())


def check_firebase_rules(claims, project):
    # The checks of the Firebase Admin SDKs' verifyIdToken.
    assert claims["iss"] == "https://securetoken.google.com/" + project
    assert claims["aud"] == project
    assert isinstance(claims["sub"], str) and 0 < len(claims["sub"]) <= 128
    assert claims["iat"] <= time.time() + 5
    assert claims["exp"] > time.time()
    assert claims["user_id"] == claims["sub"]
    assert claims["firebase"]["sign_in_provider"] == "anonymous"
    assert claims["firebase"]["identities"] == {}
    assert claims["provider_id"] == "anonymous"


def test_id_token_verifies_with_pyjwt_against_jwks(firebase_daemon, pb):
    auth = sign_up(firebase_daemon, pb)
    assert len(auth.local_id) == 28 and auth.local_id.isalnum()
    assert len(auth.refresh_token) >= 43
    headers, jwks = get(firebase_daemon, "/.well-known/jwks.json")
    assert "max-age=" in headers["Cache-Control"]
    header = jwt.get_unverified_header(auth.id_token)
    assert header["alg"] == "RS256" and header["typ"] == "JWT"
    keys = {k["kid"]: jwt.PyJWK(k) for k in jwks["keys"]}
    assert header["kid"] in keys
    project = firebase_daemon.client_json["project_id"]
    claims = jwt.decode(
        auth.id_token, keys[header["kid"]].key, algorithms=["RS256"], audience=project,
        issuer="https://securetoken.google.com/" + project,
        options={"require": ["exp", "iat", "sub", "aud", "iss", "auth_time"]})
    check_firebase_rules(claims, project)
    assert claims["sub"] == auth.local_id


def test_id_token_verifies_with_the_x509_certificate(firebase_daemon, pb):
    auth = sign_up(firebase_daemon, pb)
    headers, certs = get(firebase_daemon, "/x509")
    assert "max-age=" in headers["Cache-Control"]
    kid = jwt.get_unverified_header(auth.id_token)["kid"]
    cert = x509.load_pem_x509_certificate(certs[kid].encode())
    project = firebase_daemon.client_json["project_id"]
    claims = jwt.decode(auth.id_token, cert.public_key(), algorithms=["RS256"], audience=project)
    check_firebase_rules(claims, project)


def test_tampered_token_fails_pyjwt(firebase_daemon, pb):
    auth = sign_up(firebase_daemon, pb)
    _, jwks = get(firebase_daemon, "/.well-known/jwks.json")
    key = jwt.PyJWK(jwks["keys"][0]).key
    head, body, sig = auth.id_token.split(".")
    forged = head + "." + body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1] + "." + sig
    with pytest.raises(jwt.InvalidTokenError):
        jwt.decode(forged, key, algorithms=["RS256"], audience=firebase_daemon.client_json["project_id"])
