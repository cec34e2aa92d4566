"""The Firebase session exchange against the real daemon: a project configured through
UpdateProjectConfig with Google's certificate map inline (a key and self-signed
certificate made here with `cryptography`, standing in for securetoken@system), Firebase
ID tokens made with PyJWT as Firebase makes them, the exchange, and a refresh of the
AnonAuth session it returns. The daemon's ID tokens are checked with PyJWT."""

import datetime
import json
import os
import secrets
import subprocess
import time
import urllib.request

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from conftest import ROOT, Daemon, call

CLI = os.environ.get("ANONAUTH_CLI", str(ROOT / ".build/debug/anonauth"))
ACCOUNT = "/anonauth.v1.AccountService/"
ADMIN = "/anonauth.v1.AdminService/"
FIREBASE_PROJECT = "py-firebase-project"
KID = "py-securetoken-1"
INVALID_IDP_RESPONSE, USER_NOT_FOUND = (3, "INVALID_IDP_RESPONSE"), (5, "USER_NOT_FOUND")


class Securetoken:
    """Firebase Authentication's signing key and its certificate, as Google publishes
    them at .../x509/securetoken@system.gserviceaccount.com."""

    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "securetoken.system.gserviceaccount.com")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=14))
                .sign(self.key, hashes.SHA256()))
        self.certs_json = json.dumps({KID: cert.public_bytes(serialization.Encoding.PEM).decode()})

    def token(self, uid, provider="anonymous", audience=FIREBASE_PROJECT, **extra):
        now = int(time.time())
        claims = {
            "iss": "https://securetoken.google.com/" + audience, "aud": audience, "auth_time": now - 300,
            "user_id": uid, "sub": uid, "iat": now - 10, "exp": now + 3590,
            "firebase": {"identities": {}, "sign_in_provider": provider},
        }
        if provider == "anonymous":
            claims["provider_id"] = "anonymous"
        claims.update(extra)
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KID})


def rpc(daemon, pb, method, request, response_type, admin=False):
    meta = {"x-api-key": daemon.client_json["api_key"]}
    if admin:
        meta = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
    with daemon.connect() as s:
        return call(s, pb, method, request, response_type, meta)


def configure(daemon, pb, securetoken, create):
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = daemon.client_json["project_id"]
    req.config.firebase_project_id = FIREBASE_PROJECT
    req.config.firebase_certs_json = securetoken.certs_json
    req.config.firebase_create_unknown_users = create
    req.update_mask.extend(["firebase_project_id", "firebase_certs_json", "firebase_create_unknown_users"])
    status, config = rpc(daemon, pb, ADMIN + "UpdateProjectConfig", req, pb.admin.ProjectConfig, admin=True)
    assert status.code == 0, status
    assert config.firebase_project_id == FIREBASE_PROJECT
    assert config.firebase_create_unknown_users == create


def exchange(daemon, pb, id_token):
    req = pb.account.SignInWithFirebaseIdTokenRequest(id_token=id_token)
    return rpc(daemon, pb, ACCOUNT + "SignInWithFirebaseIdToken", req, pb.account.AuthResponse)


def daemon_claims(daemon, token):
    host, port = daemon.ops
    with urllib.request.urlopen(f"http://{host}:{port}/.well-known/jwks.json", timeout=5) as r:
        jwks = json.loads(r.read())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(jwt.PyJWK(k).key for k in jwks["keys"] if k["kid"] == kid)
    return jwt.decode(token, key, algorithms=["RS256"], audience=daemon.client_json["project_id"])


def test_exchange_then_refresh(pb):
    securetoken = Securetoken()
    daemon = Daemon()
    try:
        # Off until a Firebase project is configured.
        status, _ = exchange(daemon, pb, securetoken.token("py-fb-off"))
        assert (status.code, status.reason) == (9, "OPERATION_NOT_ALLOWED")

        # The first exchange makes the account with the Firebase uid.
        uid = "pyFirebaseUid" + secrets.token_hex(6)
        configure(daemon, pb, securetoken, create=True)
        status, first = exchange(daemon, pb, securetoken.token(uid))
        assert status.code == 0, status
        assert first.local_id == uid and first.is_new_user and first.is_anonymous
        assert first.sign_in_provider == "anonymous"

        # With creation off, the same uid signs in to that account; an unknown one is refused.
        configure(daemon, pb, securetoken, create=False)
        status, again = exchange(daemon, pb, securetoken.token(uid))
        assert status.code == 0, status
        assert again.local_id == uid and not again.is_new_user and again.is_anonymous
        claims = daemon_claims(daemon, again.id_token)
        assert claims["sub"] == claims["user_id"] == uid
        assert claims["firebase"]["sign_in_provider"] == "anonymous"
        status, _ = exchange(daemon, pb, securetoken.token("py-fb-unknown"))
        assert (status.code, status.reason) == USER_NOT_FOUND

        # Tokens of another Firebase project, or signed by another key, are refused
        # without echoing the token.
        other = securetoken.token(uid, audience="another-project")
        status, _ = exchange(daemon, pb, other)
        assert (status.code, status.reason) == INVALID_IDP_RESPONSE
        assert other not in status.message
        forged = jwt.encode(jwt.decode(securetoken.token(uid), options={"verify_signature": False}),
                            rsa.generate_private_key(public_exponent=65537, key_size=2048), algorithm="RS256",
                            headers={"kid": KID})
        status, _ = exchange(daemon, pb, forged)
        assert (status.code, status.reason) == INVALID_IDP_RESPONSE

        # The AnonAuth session refreshes like any other.
        status, refreshed = rpc(daemon, pb, ACCOUNT + "RefreshToken",
                                pb.account.RefreshTokenRequest(refresh_token=again.refresh_token),
                                pb.account.AuthResponse)
        assert status.code == 0, status
        assert refreshed.local_id == uid and refreshed.refresh_token != again.refresh_token
        assert daemon_claims(daemon, refreshed.id_token)["sub"] == uid

        # The CLI takes the token from stdin only.
        result = subprocess.run([CLI, "signin", "firebase", "--id-token-stdin", "--data-dir", daemon.dir],
                                input=securetoken.token(uid) + "\n", capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == uid
        result = subprocess.run([CLI, "signin", "firebase", "--id-token", "x", "--data-dir", daemon.dir],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and "--id-token-stdin" in result.stderr
    finally:
        assert daemon.stop() == 0
    # No refused token reached the log.
    log = daemon.log_lines_text()
    assert other.split(".")[2] not in log and forged.split(".")[2] not in log
