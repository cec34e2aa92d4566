"""A fake Sign in with Apple on loopback for the interop tests: HTTPS under a CA of its
own (the daemon trusts it with --outbound-ca-file), ID tokens signed with its ES256 and
RS256 keys, the keys at /auth/keys (rotatable), and the REST API's /auth/token and
/auth/revoke, which check the client secret as Apple documents it: an ES256 JWT signed
with the team's key, `kid` the key id, `iss` the team id, `sub` the client id, `aud`
https://appleid.apple.com, at most six months of life."""

import datetime
import hashlib
import ipaddress
import json
import os
import secrets
import threading
import time
import urllib.parse

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from stub_server import JSONHandler, serve_https, write_certificate, write_private_key

ISSUER = "https://appleid.apple.com"


def make_ca(directory):
    """A CA and a localhost certificate it signed; returns (ca.pem, cert.pem, key.pem)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Fake Apple Test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    paths = [os.path.join(directory, n) for n in ("apple-ca.pem", "apple-cert.pem", "apple-key.pem")]
    write_certificate(paths[0], ca)
    write_certificate(paths[1], leaf)
    write_private_key(paths[2], key)
    return paths


def sha256_hex(text):
    return hashlib.sha256(text.encode()).hexdigest()


class FakeApple:
    """Apple's keys, its tokens, and what its REST API was asked."""

    def __init__(self, team_id, key_id, client_ids):
        self.team_id, self.key_id, self.client_ids = team_id, key_id, list(client_ids)
        # The team's Sign in with Apple key: the .p8 the developer portal hands out.
        self.team_key = ec.generate_private_key(ec.SECP256R1())
        self.signing = {}  # kid -> (alg, private key)
        self.rotate()
        self.codes = {}  # authorization code -> client id
        self.issued = {}  # refresh token -> client id
        self.revoked = []
        self.refusals = []  # why client secrets or requests were refused
        self.fail_next = 0  # answer this many POSTs 503 first
        self.posts = 0
        self.lock = threading.Lock()

    @property
    def p8(self):
        return self.team_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()).decode()

    def rotate(self):
        """New ES256 and RS256 keys under new kids; the old ones leave the JWKS."""
        tag = secrets.token_hex(3)
        self.signing = {f"es-{tag}": ("ES256", ec.generate_private_key(ec.SECP256R1())),
                        f"rs-{tag}": ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))}

    def jwks(self):
        keys = []
        for kid, (alg, key) in self.signing.items():
            algorithm = jwt.algorithms.ECAlgorithm if alg == "ES256" else jwt.algorithms.RSAAlgorithm
            jwk = json.loads(algorithm.to_jwk(key.public_key()))
            jwk.update(kid=kid, alg=alg, use="sig")
            keys.append(jwk)
        return {"keys": keys}

    def token(self, sub, raw_nonce=None, alg="ES256", aud=None, email=None, nonce_claim=None, **extra):
        """An identity token as Apple makes it: no name, the nonce's SHA-256, strings for
        email_verified and is_private_email."""
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": aud or self.client_ids[0], "sub": sub, "iat": now, "exp": now + 600,
                  "auth_time": now, "nonce_supported": True, "c_hash": "x"}
        if raw_nonce is not None:
            claims["nonce"] = sha256_hex(raw_nonce)
        if nonce_claim is not None:
            claims["nonce"] = nonce_claim
        if email:
            claims.update(email=email, email_verified="true",
                          is_private_email="true" if email.endswith("privaterelay.appleid.com") else "false")
        claims.update(extra)
        kid, (_, key) = next((k, v) for k, v in self.signing.items() if v[0] == alg)
        return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})

    def new_code(self, client_id):
        code = "c" + secrets.token_hex(16) + ".0.r" + secrets.token_hex(4)
        self.codes[code] = client_id
        return code

    def check_secret(self, form):
        """Apple's rules for client_secret; returns why it is refused, or None."""
        secret, client_id = form.get("client_secret", ""), form.get("client_id", "")
        try:
            header = jwt.get_unverified_header(secret)
            claims = jwt.decode(secret, self.team_key.public_key(), algorithms=["ES256"], audience=ISSUER,
                                issuer=self.team_id, options={"require": ["iss", "iat", "exp", "aud", "sub"]})
        except Exception as error:  # noqa: BLE001 - any failure is a refusal
            return f"client_secret: {error}"
        if header.get("kid") != self.key_id or header.get("alg") != "ES256":
            return "client_secret header"
        if claims["sub"] != client_id or client_id not in self.client_ids:
            return "client_secret sub"
        if claims["exp"] - claims["iat"] > 15777000:
            return "client_secret lifetime"
        return None


def make_handler(apple):
    class Handler(JSONHandler):
        def do_GET(self):
            if self.path == "/auth/keys":
                return self.reply(200, apple.jwks(), [("Cache-Control", "max-age=86400")])
            return self.reply(404, {"error": "not_found"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length).decode()
            form = dict(urllib.parse.parse_qsl(raw))
            with apple.lock:
                apple.posts += 1
                if apple.fail_next > 0:
                    apple.fail_next -= 1
                    return self.reply(503, {"error": "temporarily_unavailable"})
                if self.headers.get("Content-Type") != "application/x-www-form-urlencoded":
                    apple.refusals.append("content type")
                    return self.reply(400, {"error": "invalid_request"})
                why = apple.check_secret(form)
                if why:
                    apple.refusals.append(why)
                    return self.reply(400, {"error": "invalid_client"})
                if self.path == "/auth/token":
                    if form.get("grant_type") != "authorization_code":
                        return self.reply(400, {"error": "unsupported_grant_type"})
                    if apple.codes.get(form.get("code")) != form["client_id"]:
                        return self.reply(400, {"error": "invalid_grant"})
                    del apple.codes[form["code"]]  # a code is used once
                    refresh = "r" + secrets.token_hex(16)
                    apple.issued[refresh] = form["client_id"]
                    return self.reply(200, {"access_token": "a" + secrets.token_hex(8), "token_type": "Bearer",
                                            "expires_in": 3600, "refresh_token": refresh, "id_token": "x.y.z"})
                if self.path == "/auth/revoke":
                    if form.get("token_type_hint") != "refresh_token" or \
                            apple.issued.get(form.get("token")) != form["client_id"]:
                        return self.reply(400, {"error": "invalid_request"})
                    apple.revoked.append(form["token"])
                    return self.reply(200, None)
            return self.reply(404, {"error": "not_found"})

    return Handler


def serve(apple, cert_path, key_path):
    """Starts the fake on 127.0.0.1:0 in a thread; returns (server, port)."""
    return serve_https(make_handler(apple), cert_path, key_path)
