"""A tiny HTTPS server for the linking tests: an OIDC provider's JWKS and Facebook's Graph
API (debug_token and /me), with a self-signed certificate for localhost that the daemon
is told to trust with --outbound-ca-file."""

import datetime
import hashlib
import hmac
import ipaddress
import os
import threading
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from stub_server import JSONHandler, serve_https, write_certificate, write_private_key


def self_signed(directory, names=("localhost",), ips=("127.0.0.1",)):
    """Writes cert.pem and key.pem (P-256) into `directory`; returns their paths."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    san = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path = os.path.join(directory, "stub-cert.pem")
    key_path = os.path.join(directory, "stub-key.pem")
    write_certificate(cert_path, cert)
    write_private_key(key_path, key)
    return cert_path, key_path


class Stub:
    """State shared with the handler: what to answer and what was asked."""

    def __init__(self, app_id, app_secret):
        self.jwks = {"keys": []}
        self.jwks_max_age = 600
        self.app_id = app_id
        self.app_secret = app_secret
        self.fb_tokens = {}  # access token -> dict(user_id, app_id, is_valid, expires_at, name, email)
        self.hits = {}
        self.bad_proofs = 0
        self.requests = []
        self.lock = threading.Lock()

    def count(self, path):
        with self.lock:
            return self.hits.get(path, 0)


def make_handler(stub):
    class Handler(JSONHandler):
        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            with stub.lock:
                stub.hits[url.path] = stub.hits.get(url.path, 0) + 1
                stub.requests.append((url.path, query, dict(self.headers)))
            if url.path == "/oidc/jwks":
                return self.reply(200, stub.jwks, [("Cache-Control", f"public, max-age={stub.jwks_max_age}")])
            if url.path == "/graph/debug_token":
                if query.get("access_token") != f"{stub.app_id}|{stub.app_secret}":
                    return self.reply(400, {"error": {"message": "bad app token"}})
                user = stub.fb_tokens.get(query.get("input_token"))
                if user is None:
                    return self.reply(200, {"data": {"is_valid": False}})
                return self.reply(200, {"data": {
                    "app_id": user["app_id"], "is_valid": user.get("is_valid", True), "type": "USER",
                    "expires_at": user.get("expires_at", 0), "user_id": user["user_id"]}})
            if url.path == "/graph/me":
                token = query.get("access_token", "")
                proof = hmac.new(stub.app_secret.encode(), token.encode(), hashlib.sha256).hexdigest()
                if query.get("appsecret_proof") != proof:
                    with stub.lock:
                        stub.bad_proofs += 1
                    return self.reply(400, {"error": {"message": "bad appsecret_proof"}})
                user = stub.fb_tokens.get(token)
                if user is None or query.get("fields") != "id,name,email":
                    return self.reply(400, {"error": {"message": "bad request"}})
                body = {"id": user["user_id"], "name": user.get("name", "FB User")}
                if "email" in user:
                    body["email"] = user["email"]
                return self.reply(200, body)
            return self.reply(404, {"error": "not found"})

    return Handler


def serve(stub, cert_path, key_path):
    """Starts the HTTPS server on 127.0.0.1:0 in a thread; returns (server, port)."""
    return serve_https(make_handler(stub), cert_path, key_path)
