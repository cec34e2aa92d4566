"""What the fake HTTPS providers of the interop tests share (https_stub.py's OIDC and
Graph API, apple_stub.py's Sign in with Apple, the client certificates of
test_mutual_tls.py): PEM files written from a key and a certificate, a JSON-answering
request handler, and the threaded HTTPS server on 127.0.0.1:0."""

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import serialization


def write_certificate(path, cert):
    """Writes `cert` as PEM to `path`."""
    with open(path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))


def write_private_key(path, key):
    """Writes `key` as unencrypted PKCS#8 PEM to `path`."""
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))


class JSONHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no access log, and `reply` for a JSON body (None: an empty
    one)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def serve_https(handler, cert_path, key_path):
    """Starts `handler` over TLS (ALPN http/1.1) on 127.0.0.1:0 in a thread; returns
    (server, port)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    ctx.set_alpn_protocols(["http/1.1"])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]
