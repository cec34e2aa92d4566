#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus to Tests/Fuzz/corpus/TARGET/: small valid and
nearly valid inputs from which libFuzzer mutates. Run again after a format changes;
the files are committed. Standard library only (plus `cryptography` for real keys)."""

import base64
import hashlib
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parents[1] / "Tests" / "Fuzz" / "corpus"


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, value):
    """A protobuf field: ints as varints, bytes/str as length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


def call(call_id, method, metadata=(), payload=b"", timeout=0):
    body = field(1, call_id) + field(2, method)
    for key, value in metadata:
        body += field(3, field(1, key) + field(2, value))
    if timeout:
        body += field(4, timeout)
    return field(1, body + field(5, payload))


def framed(*frames):
    return b"".join(struct.pack(">I", len(f)) + f for f in frames)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(header, claims, signature=b"sig"):
    h = b64url(json.dumps(header, separators=(",", ":")).encode())
    c = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{h}.{c}.{b64url(signature)}"


def write(target, name, data):
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def dqlite_text(s):
    raw = s.encode() + b"\0"
    return raw + b"\0" * (-len(raw) % 8)


def dqlite_message(kind, body):
    return struct.pack("<IBBH", len(body) // 8, kind, 0, 0) + body


def dqlite():
    """A dqlite node's responses: rows in two batches' shapes, the node list, a failure,
    a dump's files."""
    q = lambda n: struct.pack("<Q", n)
    row = bytes([0x31]) + b"\0" * 7 + q(42) + dqlite_text("zoe")
    write("dqlite", "rows", dqlite_message(7, q(2) + dqlite_text("id") + dqlite_text("name") + row
                                            + b"\xee" * 8))
    write("dqlite", "servers", dqlite_message(3, q(2) + q(1) + dqlite_text("127.0.0.1:9001") + q(0)
                                               + q(2) + dqlite_text("node-2.example:9001") + q(1)))
    write("dqlite", "failure", dqlite_message(0, q(2067) + dqlite_text("UNIQUE constraint failed: t.k")))
    write("dqlite", "files", dqlite_message(9, q(1) + dqlite_text("anonauth") + q(8) + b"SQLite f"))
    write("dqlite", "blob-past-end", dqlite_message(7, q(1) + dqlite_text("b") + bytes([4]) + b"\0" * 7
                                                     + q(1 << 40) + b"\xff" * 8))


def frames():
    check = "/anonauth.v1.HealthService/Check"
    write("frame", "call", b"\x00" + framed(call(1, check)))
    write("frame", "call-metadata", b"\x07" + framed(
        call(7, "/anonauth.v1.AccountService/SignUp", [("x-api-key", "k"), ("x-request-id", "r")],
             field(1, b""), 1000)))
    write("frame", "ping-pong", b"\x02" + framed(field(3, field(1, 42)), field(4, field(1, 42))))
    write("frame", "goaway", b"\xff" + framed(field(5, field(1, 3) + field(2, "SHUTTING_DOWN"))))
    write("frame", "two-calls-cut", b"\x03" + framed(call(1, check), call(2, check))[:-3])
    write("frame", "unknown-7800", b"\xff" + framed(b"\x78\x00" * 1100))
    write("frame", "empty-map-entries", b"\x40" + framed(field(2, field(2, b"\x22\x00" * 3000))))
    write("frame", "zero-length", b"\x00" + b"\x00\x00\x00\x00")
    write("frame", "too-large", b"\x00" + b"\x7f\xff\xff\xff" + b"x" * 8)


def requests():
    # The first byte picks the type, in RequestsFuzz.decoders' order.
    credential = field(1, "password") + field(2, "a@example.com") + field(3, "secret123")
    seeds = {
        "signup-anonymous": (0, field(1, b"")),
        "signup-email": (0, field(2, field(1, "a@example.com") + field(2, "hunter22") + field(3, "A"))),
        "signin-password": (1, field(1, "a@example.com") + field(2, "hunter22")),
        "signin-idp": (2, field(1, field(1, "google.com") + field(4, "eyJ.x.y") + field(6, "n"))),
        "link": (3, field(1, "eyJ.a.b") + field(2, credential)),
        "refresh": (5, field(1, "A" * 43)),
        "update-config": (10, field(1, field(1, "demo") + field(2, 1) + field(7, 100)
                                    + field(4, field(1, "oidc.x") + field(2, 1))) + field(2, "idps")),
        "schedule-quota": (14, field(1, "demo") + field(2, 5) + field(3, 2**63 - 1) + field(4, 2**64 - 1)),
        "list-accounts": (15, field(1, "demo") + field(2, 1) + field(3, 100) + field(4, "tok")),
        "delete-accounts": (18, field(1, "demo") + field(2, "u1") + field(2, "u2")),
        "verify": (27, field(1, "eyJ.a.b") + field(2, 1)),
        "unknown-fields": (7, field(1, "t") + field(99, 5) + field(100, b"zz")),
    }
    for name, (index, payload) in seeds.items():
        write("requests", name, bytes([index]) + payload)


def prescan():
    # The first byte picks the type, in PreScanFuzz.checks' order. The hostile shapes are
    # a little over their limit (or at it), small enough to replay in `make test`.
    def reply_status(status):
        return field(2, field(2, status))
    check = "/anonauth.v1.HealthService/Check"
    seeds = {
        "frame-unknown-7800": (0, b"\x78\x00" * 1100),
        "frame-call-metadata": (0, call(1, check, [("x-api-key", "k"), ("x-request-id", "r")], field(1, b""))),
        "frame-map-entries": (0, reply_status(b"\x22\x00" * 5000)),
        "frame-two-calls": (0, call(1, check) + call(2, check)),
        "payload-unknown-7800": (1, field(1, b"") + b"\x78\x00" * 1100),
        "empty-strings": (2, field(1, "demo") + b"\x12\x00" * 3000),
        "empty-accounts-over-cost": (3, b"\x12\x00" * 20000),
        "accounts-with-providers": (3, b"\x12\x02\x62\x00" * 2000),
        "nested-unknowns": (3, field(2, b"\x78\x00") * 1100),
        "repeated-singular-config": (4, field(1, field(4, b"")) * 3),
        "export-page": (5, field(1, field(1, field(1, "uid") + field(10, field(1, "google.com"))) + field(6, "u"))
                        * 50 + field(2, "next")),
        "usage-map": (6, field(5, field(1, "2026-01-01") + field(2, field(1, "anonymous") + field(2, 3)) * 200)),
        "packed-looking": (7, field(2, b"") * 100 + field(1, 7)),
    }
    for name, (index, payload) in seeds.items():
        write("prescan", name, bytes([index]) + payload)


def tokens_and_keys():
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_numbers()
    ec_key = ec.generate_private_key(ec.SECP256R1()).public_key().public_numbers()

    def int_b64(n, size=None):
        size = size or (n.bit_length() + 7) // 8
        return b64url(n.to_bytes(size, "big"))

    rsa_jwk = {"kty": "RSA", "kid": "r1", "alg": "RS256", "use": "sig", "n": int_b64(rsa_key.n),
               "e": int_b64(rsa_key.e)}
    ec_jwk = {"kty": "EC", "kid": "e1", "crv": "P-256", "x": int_b64(ec_key.x, 32), "y": int_b64(ec_key.y, 32)}
    write("jwks", "rsa-and-ec", json.dumps({"keys": [rsa_jwk, ec_jwk]}))
    write("jwks", "encryption-key-skipped", json.dumps({"keys": [{**rsa_jwk, "use": "enc"}]}))
    write("jwks", "empty", '{"keys":[]}')
    write("jwks", "bad-base64", json.dumps({"keys": [{**ec_jwk, "x": "!!"}]}))

    claims = {"iss": "https://anonauth.local/demo", "aud": "demo", "sub": "u" * 28, "iat": 1700000000,
              "exp": 1700003600, "firebase": {"identities": {}, "sign_in_provider": "anonymous"}}
    write("jwt", "rs256", jwt({"alg": "RS256", "kid": "r1", "typ": "JWT"}, claims, b"\x01" * 256))
    write("jwt", "es256", jwt({"alg": "ES256", "kid": "e1"}, claims, b"\x02" * 64))
    write("jwt", "alg-none", jwt({"alg": "none"}, claims, b""))
    write("jwt", "hs256", jwt({"alg": "HS256"}, claims, hashlib.sha256(b"k").digest()))
    write("jwt", "huge-exp", jwt({"alg": "RS256"}, {**claims, "exp": 2**63 - 1, "iat": -2**63}))
    write("jwt", "two-parts", "eyJhbGciOiJSUzI1NiJ9.eyJ9")


def json_values():
    write("json", "object", '{"a":1,"b":[true,false,null,1.5e3,-2],"c":{"d":"\\u00e9\\n"}}')
    write("json", "claims", '{"role":"admin","tier":3,"flags":["x"]}')
    write("json", "deep", "[" * 64 + "]" * 64)
    write("json", "big-number", '{"n":123456789012345678901234567890}')
    write("json", "surrogate", '"\\ud800"')


def http():
    write("ops-http", "healthz", "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: kube-probe/1.29")
    write("ops-http", "metrics-query", "GET /metrics?x=1 HTTP/1.0\r\nAccept: */*")
    write("ops-http", "bad-version", "GET / HTTP/2\r\n")
    write("ops-http", "bad-header", "POST /x HTTP/1.1\r\n: nothing")
    # http-request: byte 0 sizes the read pieces, byte 1 the body limit (x64 bytes).
    write("http-request", "sign-up",
          b"\x07\x10POST /v1/accounts:signUp?key=k HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
          b"Content-Length: 27\r\n\r\n{\"returnSecureToken\":true}\n")
    write("http-request", "pipelined",
          b"\x00\x01GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
          b"Expect: 100-continue\r\n\r\nokGET /c HTTP/1.0\r\nConnection: close\r\n\r\n")
    write("http-request", "smuggle",
          b"\x05\x01POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    write("http-request", "duplicate-length",
          b"\x02\x01POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx")
    write("http-request", "obs-fold",
          b"\xff\x01GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n")
    write("http-request", "absurd-length",
          b"\x03\x00POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n")
    write("outbound-http", "content-length",
          b"\x10HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"keys\":[]}")
    write("outbound-http", "chunked",
          b"\x03HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n")
    write("outbound-http", "negative-chunk",
          b"\x40HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nhello\r\n0\r\n\r\n")
    write("outbound-http", "interim-then-close",
          b"\xffHTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nCache-Control: max-age=60\r\n\r\nbody")
    write("outbound-http", "duplicate-length",
          b"\x00HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok")


def phc_and_config():
    write("phc", "scrypt", "$scrypt$ln=15,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$" + "A" * 43)
    write("phc", "reordered", "$scrypt$p=1,ln=14,r=8$c2FsdHNhbHRzYWx0c2FsdA$" + "B" * 43)
    write("phc", "bad-params", "$scrypt$ln=99,r=0,p=1$$")
    write("phc", "argon", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA")
    write("config", "full", json.dumps({"listen": "127.0.0.1:0", "ops-listen": "127.0.0.1:0", "dev": True,
                                        "data-dir": "/nonexistent/anonauth-fuzz", "log-level": "info"}))
    write("config", "numbers", '{"cleanup-interval-ms": 1e400, "cleanup-batch-size": -1}')
    write("config", "unknown", '{"no-such-setting": 1}')
    write("config", "not-object", "[1,2,3]")


def http2():
    # http2: byte 0 bit 0 prepends the client preface, bits 1-7 size the read pieces.
    def frame(kind, flags, stream, payload=b""):
        return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

    def literal(name, value, indexing=False):
        """An HPACK literal field, not Huffman-coded (names and values under 127 bytes,
        or a value whose length takes the multi-byte integer form)."""
        def length(n):
            if n < 127:
                return bytes([n])
            n -= 127
            out = bytearray([127])
            while n >= 128:
                out.append(n % 128 + 128)
                n //= 128
            return bytes(out) + bytes([n])
        return bytes([0x40 if indexing else 0x00]) + length(len(name)) + name.encode() + length(len(value)) + value.encode()

    settings = frame(4, 0, 0, struct.pack(">HI", 3, 100) + struct.pack(">HI", 4, 65535))
    settings_ack = frame(4, 1, 0)
    post = b"\x83\x87" + literal(":authority", "localhost")

    def request(stream, path, content_type, body, end=True):
        block = post + literal(":path", path) + literal("content-type", content_type)
        return frame(1, 4, stream, block) + frame(0, 1 if end else 0, stream, body)

    write("http2", "json-request", b"\x01" + settings + settings_ack +
          request(1, "/v1/accounts:signUp?key=k", "application/json", b'{"returnSecureToken":true}'))
    write("http2", "grpc-request", b"\x0f" + settings +
          request(1, "/anonauth.v1.Account/SignUp", "application/grpc", b"\x00\x00\x00\x00\x02\x08\x01") +
          request(3, "/grpc.health.v1.Health/Check", "application/grpc+proto; charset=x", b"\x00\x00\x00\x00\x00"))
    write("http2", "rapid-reset", b"\x01" + settings + b"".join(
        request(n, "/echo", "application/json", b"x", end=False) + frame(3, 0, n, struct.pack(">I", 8))
        for n in range(1, 60, 2)))
    write("http2", "continuation", b"\x05" + settings +
          frame(1, 0, 1, post + literal(":path", "/")) +
          b"".join(frame(9, 0, 1, literal("x-a%d" % n, "v" * 40)) for n in range(12)) +
          frame(9, 4, 1, literal("x-end", "1")))
    write("http2", "floods", b"\x03" + settings + b"".join(
        frame(6, 0, 0, struct.pack(">Q", n)) + frame(4, 0, 0, struct.pack(">HI", 1, 4096)) +
        frame(8, 0, 0, struct.pack(">I", 1)) for n in range(40)))
    write("http2", "hpack-bomb", b"\x7f" + settings +
          frame(1, 4, 1, post + literal(":path", "/") + literal("x-big", "b" * 4000, indexing=True) + b"\xbe" * 200))
    write("http2", "no-preface", b"\x00GET / HTTP/1.1\r\nHost: a\r\n\r\n")


def grpc_standard():
    # grpc-standard: one ServerReflectionRequest (or a HealthCheckRequest, field 1 alone).
    write("grpc-standard", "list-services", field(1, "localhost:7443") + field(7, "*"))
    write("grpc-standard", "file-by-name", field(3, "anonauth/v1/admin.proto"))
    write("grpc-standard", "symbol", field(4, "anonauth.v1.AccountService.SignUp"))
    write("grpc-standard", "extension", field(5, field(1, "anonauth.v1.SignUpRequest") + field(2, 100)))
    write("grpc-standard", "extension-numbers", field(6, ".anonauth.v1.SignUpRequest"))
    write("grpc-standard", "health", field(1, "anonauth.v1.AccountService"))
    write("grpc-standard", "truncated", field(3, "anonauth/v1/account.proto")[:-4])


def firebase_json():
    # firebase-json: byte 0 picks the endpoint (low 7 bits, in FirebaseAPI.allEndpoints'
    # order: signUp, signInWithPassword, signInWithIdp, lookup, update, delete, token) and
    # a form body (high bit).
    write("firebase-json", "sign-up", b"\x00" + b'{"email":"a@example.com","password":"pw","returnSecureToken":true}')
    write("firebase-json", "idp", b"\x02" + b'{"postBody":"providerId=google.com&id_token=x%20y","idToken":"t"}')
    write("firebase-json", "update", b"\x04" + b'{"idToken":"t","deleteProvider":["google.com",7],"displayName":null}')
    write("firebase-json", "token-form", b"\x86" + b"grant_type=refresh_token&refresh_token=%ZZ%41+b")
    write("firebase-json", "deep", b"\x03" + b"[" * 600 + b"]" * 600)
    write("firebase-json", "not-utf8", b"\x01" + b'{"email":"\xff"}')


def smtp_reply():
    """A mail server's replies; the first byte sizes the pieces they arrive in."""
    write("smtp-reply", "greeting", b"\x05220 mail.example.com ESMTP\r\n")
    write("smtp-reply", "ehlo", b"\x03250-mail.example.com\r\n250-PIPELINING\r\n250-AUTH PLAIN LOGIN\r\n"
          b"250-SIZE 10240000\r\n250 STARTTLS\r\n")
    write("smtp-reply", "pipelined", b"\x3f250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n")
    write("smtp-reply", "failures", b"\x00451-4.3.0 first\n451 4.3.0 try later\n550 5.1.1 no such user\r\n")


if __name__ == "__main__":
    import sys
    if sys.argv[1:]:  # only the named groups, e.g. `make_fuzz_seeds.py prescan`
        for name in sys.argv[1:]:
            globals()[name]()
        sys.exit(0)
    frames()
    dqlite()
    requests()
    prescan()
    tokens_and_keys()
    json_values()
    http()
    http2()
    grpc_standard()
    firebase_json()
    phc_and_config()
    smtp_reply()
    print(f"seeds written under {ROOT}")
