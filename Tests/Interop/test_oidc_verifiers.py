"""AnonAuth as an OpenID Connect issuer, proved with verifiers nobody here wrote: PyJWT's
PyJWKClient, joserfc and go-oidc (Debian's golang-github-coreos-go-oidc-dev), each given
nothing but the project's issuer URL, the audience and the CA of the daemon's
certificate, find the keys by discovery (over HTTP/1.1 without ALPN for urllib, over h2
for Go) and must accept a fresh token and refuse an altered signature, another
project's token, an expired token and one signed by a key retired past its grace.

The expired and retired-key tokens are real ones: the same data dir is served first three
days in the past (libfaketime), where a token is minted and the key rotated, then one day
in the past, where the retired key is gone and another token is minted, and at last in
the present, by which time that token has expired. All three daemons name one public URL.
"""

import glob
import json
import os
import pathlib
import shutil
import socket
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import ROOT, Daemon, call
from test_ops_and_cli import CLI

LIBFAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
pytestmark = pytest.mark.skipif(not LIBFAKETIME, reason="faketime (Debian package) is missing")

PROJECT = "demo-project"
GO_OIDC = "/usr/share/gocode/src/github.com/coreos/go-oidc"


def days_ago(days):
    return {"LD_PRELOAD": LIBFAKETIME[0], "FAKETIME": f"-{days}d", "FAKETIME_DONT_RESET": "1"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sign_up(daemon, api_key):
    """A new anonymous account's ID token, through the JSON API on the RPC port with
    urllib, which offers no ALPN: the request line alone makes the connection HTTP/1.1."""
    host, port = daemon.rpc
    request = urllib.request.Request(
        f"https://{host}:{port}/v1/accounts:signUp?key={api_key}",
        data=json.dumps({"returnSecureToken": True}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, context=daemon.context(alpn=None), timeout=30) as reply:
        return json.loads(reply.read())["idToken"]


def cli(daemon, *args):
    result = subprocess.run([CLI, *args, "--data-dir", daemon.dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def kid_of(token):
    import jwt
    return jwt.get_unverified_header(token)["kid"]


def altered(token):
    """The token with one character of its signature changed (not the last, whose low
    bits base64url may ignore)."""
    head, payload, signature = token.split(".")
    middle = len(signature) // 2
    swapped = "A" if signature[middle] != "A" else "B"
    return ".".join([head, payload, signature[:middle] + swapped + signature[middle + 1:]])


class World:
    """The issuer and its tokens, one of each kind."""


@pytest.fixture(scope="module")
def world():
    port = free_port()
    public_url = f"https://127.0.0.1:{port}"
    flags = ["--public-url", public_url]
    w = World()
    w.issuer = f"{public_url}/{PROJECT}"

    past = Daemon(extra=flags, env=days_ago(3))
    try:
        api_key = past.client_json["api_key"]
        w.retired = sign_up(past, api_key)
        w.retired_kid = kid_of(w.retired)
        cli(past, "admin", "rotate-signing-key")
    finally:
        assert past.stop() == 0

    later = Daemon(extra=flags, env=days_ago(1), data_dir=past.dir)
    try:
        w.expired = sign_up(later, api_key)
    finally:
        assert later.stop() == 0
    assert kid_of(w.expired) != w.retired_kid

    w.daemon = now = Daemon(extra=[*flags, "--listen", f"127.0.0.1:{port}"], data_dir=past.dir)
    try:
        w.ca_file = now.ca_file
        w.fresh = sign_up(now, api_key)
        assert kid_of(w.fresh) == kid_of(w.expired)
        w.altered = altered(w.fresh)
        cli(now, "admin", "create-project", "other-project", "--anonymous")
        w.other = sign_up(now, cli(now, "admin", "create-api-key", "other-project"))
        yield w
    finally:
        assert now.stop() == 0


def discover(w):
    """The discovery document, fetched as a backend would: urllib, no ALPN."""
    url = w.issuer + "/.well-known/openid-configuration"
    with urllib.request.urlopen(url, context=ssl.create_default_context(cafile=w.ca_file), timeout=30) as reply:
        assert reply.headers["Content-Type"] == "application/json"
        config = json.loads(reply.read())
    assert config["issuer"] == w.issuer
    return config


# PyJWT: PyJWKClient on the discovered jwks_uri (it fetches with urllib, no ALPN).

def pyjwt_verify(w, token):
    import jwt
    config = discover(w)
    keys = jwt.PyJWKClient(config["jwks_uri"], ssl_context=ssl.create_default_context(cafile=w.ca_file))
    key = keys.get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=config["id_token_signing_alg_values_supported"],
                      audience=PROJECT, issuer=config["issuer"])


def test_pyjwt_accepts_a_fresh_token(world):
    assert pyjwt_verify(world, world.fresh)["aud"] == PROJECT


def test_pyjwt_refuses_what_it_must(world):
    import jwt
    with pytest.raises(jwt.InvalidSignatureError):
        pyjwt_verify(world, world.altered)
    with pytest.raises((jwt.InvalidAudienceError, jwt.InvalidIssuerError)):
        pyjwt_verify(world, world.other)
    with pytest.raises(jwt.ExpiredSignatureError):
        pyjwt_verify(world, world.expired)
    # Refused for its key, before any claim is looked at.
    with pytest.raises(jwt.PyJWKClientError, match="Unable to find a signing key"):
        pyjwt_verify(world, world.retired)


# joserfc: its KeySet from the discovered jwks_uri, then its claims registry.

def joserfc_verify(w, token):
    from joserfc import jwt
    from joserfc.jwk import KeySet
    config = discover(w)
    with urllib.request.urlopen(config["jwks_uri"], context=ssl.create_default_context(cafile=w.ca_file),
                                timeout=30) as reply:
        keys = KeySet.import_key_set(json.loads(reply.read()))
    decoded = jwt.decode(token, keys, algorithms=config["id_token_signing_alg_values_supported"])
    jwt.JWTClaimsRegistry(iss={"essential": True, "value": config["issuer"]},
                          aud={"essential": True, "value": PROJECT},
                          exp={"essential": True}).validate(decoded.claims)
    return decoded.claims


def test_joserfc_accepts_a_fresh_token(world):
    assert joserfc_verify(world, world.fresh)["aud"] == PROJECT


def test_joserfc_refuses_what_it_must(world):
    from joserfc import errors
    with pytest.raises(errors.BadSignatureError):
        joserfc_verify(world, world.altered)
    with pytest.raises(errors.InvalidClaimError):
        joserfc_verify(world, world.other)
    with pytest.raises(errors.ExpiredTokenError):
        joserfc_verify(world, world.expired)
    # The key set has no key of that id: refused before the claims.
    with pytest.raises(errors.InvalidKeyIdError):
        joserfc_verify(world, world.retired)


# go-oidc, built offline from Debian's Go sources.

@pytest.fixture(scope="module")
def go_verifier(tmp_path_factory):
    if not shutil.which("go") or not os.path.isdir(GO_OIDC):
        pytest.skip("golang-go and golang-github-coreos-go-oidc-dev are missing (make interop-deps)")
    out = tmp_path_factory.mktemp("go") / "oidc_verify"
    # GOPATH mode on Debian's sources: nothing is fetched (GOPROXY=off).
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOPROXY": "off",
           "GOCACHE": str(ROOT / ".build" / "gocache")}
    source = pathlib.Path(__file__).parent / "oidc_verify" / "main.go"
    subprocess.run(["go", "build", "-o", str(out), str(source)], env=env, check=True, timeout=600)
    return out


def go_verify(w, binary, *tokens, skip_expiry=False):
    args = [str(binary), w.issuer, PROJECT, w.ca_file, *(["skip-expiry"] if skip_expiry else [])]
    result = subprocess.run(args, input="\n".join(tokens) + "\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_go_oidc_accepts_a_fresh_token_and_refuses_what_it_must(world, go_verifier):
    fresh, altered_, other, expired = go_verify(
        world, go_verifier, world.fresh, world.altered, world.other, world.expired)
    assert fresh.startswith("ok "), fresh
    assert altered_.startswith("refused") and "failed to verify signature" in altered_, altered_
    assert other.startswith("refused") and "different provider" in other, other
    assert expired.startswith("refused") and "token is expired" in expired, expired
    # go-oidc looks at the expiry first: told to skip it, the retired key is what refuses.
    (retired,) = go_verify(world, go_verifier, world.retired, skip_expiry=True)
    assert retired.startswith("refused") and "failed to verify signature" in retired, retired


# The daemon itself and its documents.

def test_the_retired_key_is_gone_and_the_expired_tokens_key_is_published(world):
    config = discover(world)
    with urllib.request.urlopen(config["jwks_uri"], context=ssl.create_default_context(cafile=world.ca_file),
                                timeout=30) as reply:
        kids = [key["kid"] for key in json.loads(reply.read())["keys"]]
    assert world.retired_kid not in kids
    assert kid_of(world.expired) in kids


def test_the_daemons_own_verify_id_token_refuses_the_altered_signature(world, pb):
    with world.daemon.connect() as s:
        request = pb.token.VerifyIdTokenRequest(id_token=world.altered)
        status, _ = call(s, pb, "/anonauth.v1.TokenService/VerifyIdToken", request,
                         metadata={"x-api-key": world.daemon.client_json["api_key"]})
        assert status.reason == "INVALID_ID_TOKEN", status
        request = pb.token.VerifyIdTokenRequest(id_token=world.fresh)
        status, reply = call(s, pb, "/anonauth.v1.TokenService/VerifyIdToken", request,
                             pb.token.VerifyIdTokenResponse,
                             metadata={"x-api-key": world.daemon.client_json["api_key"]})
        assert status.code == 0, status


def get(w, path, headers=None):
    host, port = w.daemon.rpc
    request = urllib.request.Request(f"https://{host}:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=w.ca_file),
                                    timeout=30) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


@pytest.mark.parametrize("path", [f"/{PROJECT}/.well-known/openid-configuration", "/.well-known/jwks.json",
                                  "/x509"])
def test_documents_are_cached_by_max_age_and_revalidated_by_etag(world, path):
    status, headers, body = get(world, path)
    assert status == 200 and body
    assert headers["Cache-Control"] == "public, max-age=300"
    tag = headers["ETag"]
    status, headers, body = get(world, path, {"If-None-Match": tag})
    assert status == 304 and body == b"" and headers["ETag"] == tag
    assert get(world, path, {"If-None-Match": '"stale"'})[0] == 200


def test_an_unknown_projects_discovery_is_not_found(world):
    assert get(world, "/no-such-project/.well-known/openid-configuration")[0] == 404


def test_the_discovery_document_over_h2(world):
    import h2.connection
    import h2.events
    with world.daemon.connect(alpn=("h2",)) as s:
        assert s.selected_alpn_protocol() == "h2"
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        conn.send_headers(1, [(":method", "GET"), (":scheme", "https"), (":authority", "127.0.0.1"),
                              (":path", f"/{PROJECT}/.well-known/openid-configuration")], end_stream=True)
        s.sendall(conn.data_to_send())
        status, body, done = None, b"", False
        while not done:
            data = s.recv(65536)
            assert data, "closed before the reply ended"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    status = dict(event.headers)[b":status"]
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, 1)
                elif isinstance(event, h2.events.StreamEnded):
                    done = True
            s.sendall(conn.data_to_send())
    assert status == b"200"
    assert json.loads(body)["issuer"] == world.issuer


def test_a_native_client_without_alpn_still_gets_frames(world, pb):
    with world.daemon.connect(alpn=None) as s:
        assert s.selected_alpn_protocol() is None
        status, _ = call(s, pb, "/anonauth.v1.HealthService/Check", pb.health.CheckRequest())
        assert status.code == 0, status


def read_http_reply(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([line.split(b":", 1)[1] for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += sock.recv(65536)
    return head, body


def test_a_request_line_split_across_records_is_still_http(daemon):
    """The first bytes "G", then "ET /..." in another TLS record: the server waits for
    enough bytes to tell, then serves HTTP/1.1."""
    with daemon.connect(alpn=None) as s:
        s.sendall(b"G")
        s.sendall(b"ET /.well-known/jwks.json HTTP/1.1\r\nHost: localhost\r\n\r\n")
        head, body = read_http_reply(s)
    assert head.startswith(b"HTTP/1.1 200"), head
    assert json.loads(body)["keys"]


def test_a_stalled_method_prefix_is_closed_as_a_partial_frame(daemon):
    """"GE" and nothing more: held while undecided, and closed by the partial-frame
    timeout (500 ms in the test daemon), as a frame's first bytes would be."""
    from conftest import assert_closed
    with daemon.connect(alpn=None) as s:
        s.sendall(b"GE")
        assert_closed(s)
