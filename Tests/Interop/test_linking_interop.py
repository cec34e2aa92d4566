"""Account linking against the real daemon, with identity providers played by a local
HTTPS stub (https_stub.py): an OIDC provider whose keys are fetched from a jwks_url, and
Facebook's Graph API. The daemon trusts the stub's self-signed certificate through
--outbound-ca-file. Replies are decoded with Google's protobuf runtime, and the ID tokens
the daemon returns are checked with PyJWT."""

import hashlib
import json
import subprocess
import tempfile
import time
import urllib.request

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import https_stub
from conftest import CLI, Daemon, cli, call_frame, read_frame, send_frame

ACCOUNT = "/anonauth.v1.AccountService/"
ISSUER = "https://issuer.example"
CLIENT_ID = "py-client"
APP_ID = "424242"
APP_SECRET = "py-app-secret"


class Provider:
    """The OIDC provider's keys (RSA and P-256) and its ID tokens."""

    def __init__(self):
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())

    def jwks(self):
        rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa.public_key()))
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec.public_key()))
        rsa_jwk.update(kid="py-rsa", alg="RS256", use="sig")
        ec_jwk.update(kid="py-ec", alg="ES256", use="sig")
        return {"keys": [rsa_jwk, ec_jwk]}

    def token(self, sub, alg="RS256", email=None, nonce=None, **extra):
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": CLIENT_ID, "sub": sub, "iat": now, "exp": now + 600}
        if email:
            claims.update(email=email, email_verified=True)
        if nonce:
            claims["nonce"] = nonce
        claims.update(extra)
        key, kid = (self.rsa, "py-rsa") if alg == "RS256" else (self.ec, "py-ec")
        return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})


@pytest.fixture(scope="module")
def env(pb):
    directory = tempfile.mkdtemp(prefix="anonauth-stub-")
    cert, key = https_stub.self_signed(directory)
    stub = https_stub.Stub(APP_ID, APP_SECRET)
    provider = Provider()
    stub.jwks = provider.jwks()
    server, port = https_stub.serve(stub, cert, key)
    daemon = Daemon(extra=["--outbound-ca-file", cert])
    base = f"https://localhost:{port}"
    configure(daemon, pb, [
        {"provider_id": "oidc.test", "enabled": True, "client_id": CLIENT_ID, "issuer": ISSUER,
         "jwks_url": base + "/oidc/jwks"},
        {"provider_id": "facebook.com", "enabled": True, "client_id": APP_ID, "client_secret": APP_SECRET,
         "api_base_url": base + "/graph"},
    ])

    class Env:
        pass

    e = Env()
    e.daemon, e.stub, e.provider, e.port, e.cert = daemon, stub, provider, port, cert
    yield e
    assert daemon.stop() == 0
    server.shutdown()


def rpc(daemon, pb, method, request, response_type, metadata=None):
    """One call; returns (status, decoded response or None)."""
    meta = {"x-api-key": daemon.client_json["api_key"]}
    meta.update(metadata or {})
    with daemon.connect() as s:
        send_frame(s, call_frame(pb, 1, method, request.SerializeToString(), meta))
        frame = read_frame(s, pb)
    status = frame.reply.status
    if status.code != 0:
        return status, None
    return status, response_type.FromString(frame.reply.payload)


def configure(daemon, pb, idps):
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = daemon.client_json["project_id"]
    for idp in idps:
        entry = req.config.idps.add()
        for k, v in idp.items():
            setattr(entry, k, v)
    req.update_mask.append("idps")
    status, _ = rpc(daemon, pb, "/anonauth.v1.AdminService/UpdateProjectConfig", req, pb.admin.ProjectConfig,
                    {"authorization": "Bearer " + daemon.client_json["admin_key"]})
    assert status.code == 0, status


def anonymous(e, pb):
    req = pb.account.SignUpRequest()
    req.anonymous.SetInParent()
    status, auth = rpc(e.daemon, pb, ACCOUNT + "SignUp", req, pb.account.AuthResponse)
    assert status.code == 0, status
    return auth


def link(e, pb, account_token, **credential):
    req = pb.account.LinkWithCredentialRequest(id_token=account_token)
    for k, v in credential.items():
        setattr(req.credential, k, v)
    return rpc(e.daemon, pb, ACCOUNT + "LinkWithCredential", req, pb.account.AuthResponse)


def sign_in(e, pb, daemon=None, **credential):
    req = pb.account.SignInWithIdpRequest()
    for k, v in credential.items():
        setattr(req.credential, k, v)
    return rpc(daemon or e.daemon, pb, ACCOUNT + "SignInWithIdp", req, pb.account.AuthResponse)


def daemon_claims(e, token):
    """The claims of a daemon-made ID token, verified with PyJWT against the ops JWKS."""
    host, port = e.daemon.ops
    with urllib.request.urlopen(f"http://{host}:{port}/.well-known/jwks.json", timeout=5) as r:
        jwks = json.loads(r.read())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(jwt.PyJWK(k).key for k in jwks["keys"] if k["kid"] == kid)
    return jwt.decode(token, key, algorithms=["RS256"], audience=e.daemon.client_json["project_id"])


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_oidc_link_with_keys_from_a_jwks_url(env, pb, alg):
    user = anonymous(env, pb)
    time.sleep(1.1)  # valid_since is in whole seconds
    nonce = f"n-1-{alg}"
    token = env.provider.token(f"oidc-{alg}", alg=alg, email=f"{alg.lower()}@issuer.example",
                               nonce=hashlib.sha256(nonce.encode()).hexdigest())
    status, linked = link(env, pb, user.id_token, provider_id="oidc.test", id_token=token, nonce=nonce)
    assert status.code == 0, status
    assert linked.local_id == user.local_id
    assert not linked.is_anonymous and not linked.is_new_user
    assert linked.sign_in_provider == "oidc.test"
    claims = daemon_claims(env, linked.id_token)
    assert claims["firebase"]["sign_in_provider"] == "oidc.test"
    assert claims["firebase"]["identities"]["oidc.test"] == [f"oidc-{alg}"]
    assert claims["email"] == f"{alg.lower()}@issuer.example"
    assert claims["iat"] == linked.account.valid_since
    # The provider's keys were fetched once and then served from the cache.
    assert env.stub.count("/oidc/jwks") == 1
    # Signing in later with the same identity finds the account.
    status, again = sign_in(env, pb, provider_id="oidc.test", id_token=env.provider.token(f"oidc-{alg}", alg=alg))
    assert status.code == 0 and again.local_id == user.local_id and not again.is_new_user


def test_oidc_refusals(env, pb):
    user = anonymous(env, pb)
    other = Provider()
    cases = [
        dict(provider_id="oidc.test", id_token=other.token("x")),  # signed by another key
        dict(provider_id="oidc.test", id_token=env.provider.token("x", aud="someone-else")),
        dict(provider_id="oidc.test", id_token=env.provider.token("x", iss="https://evil.example")),
        dict(provider_id="oidc.test", id_token=env.provider.token("x", exp=int(time.time()) - 120)),
        dict(provider_id="oidc.test", id_token="not-a-token"),
    ]
    for credential in cases:
        status, _ = link(env, pb, user.id_token, **credential)
        assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE"), credential
    # The nonce cannot be skipped: a token with one needs the raw nonce whose SHA-256 it
    # holds; neither no nonce nor the claim itself will do.
    hashed = hashlib.sha256(b"a").hexdigest()
    for credential in [
        dict(provider_id="oidc.test", id_token=env.provider.token("x", nonce=hashed), nonce="b"),
        dict(provider_id="oidc.test", id_token=env.provider.token("x", nonce=hashed)),
        dict(provider_id="oidc.test", id_token=env.provider.token("x", nonce=hashed), nonce=hashed),
        dict(provider_id="oidc.test", id_token=env.provider.token("x", nonce="a"), nonce="a"),
    ]:
        status, _ = link(env, pb, user.id_token, **credential)
        assert (status.code, status.reason) == (3, "MISSING_OR_INVALID_NONCE"), credential
    status, _ = link(env, pb, user.id_token, provider_id="oidc.missing", id_token=env.provider.token("x"))
    assert (status.code, status.reason) == (9, "OPERATION_NOT_ALLOWED")


def test_facebook_link_and_sign_in_through_the_graph_api_stub(env, pb):
    env.stub.fb_tokens["fb-good"] = {"user_id": "10001", "app_id": APP_ID, "expires_at": int(time.time()) + 3600,
                                     "name": "Fay Book", "email": "fay@example.com"}
    user = anonymous(env, pb)
    status, linked = link(env, pb, user.id_token, provider_id="facebook.com", access_token="fb-good")
    assert status.code == 0, status
    assert linked.local_id == user.local_id and linked.sign_in_provider == "facebook.com"
    assert [(p.provider_id, p.raw_id) for p in linked.account.providers] == [("facebook.com", "10001")]
    assert linked.account.email == "fay@example.com" and linked.account.display_name == "Fay Book"
    status, again = sign_in(env, pb, provider_id="facebook.com", access_token="fb-good")
    assert status.code == 0 and again.local_id == user.local_id and not again.is_new_user
    assert env.stub.bad_proofs == 0
    me = [q for path, q, _ in env.stub.requests if path == "/graph/me"]
    assert me and all(q["fields"] == "id,name,email" and len(q["appsecret_proof"]) == 64 for q in me)

    # The same Facebook user on another account: CREDENTIAL_ALREADY_IN_USE, naming only
    # the provider and the email.
    second = anonymous(env, pb)
    status, _ = link(env, pb, second.id_token, provider_id="facebook.com", access_token="fb-good")
    assert (status.code, status.reason) == (6, "CREDENTIAL_ALREADY_IN_USE")
    assert dict(status.details) == {"provider_id": "facebook.com", "email": "fay@example.com"}


@pytest.mark.parametrize("token,user", [
    ("fb-invalid", {"user_id": "1", "app_id": APP_ID, "is_valid": False}),
    ("fb-other-app", {"user_id": "1", "app_id": "999"}),
    ("fb-expired", {"user_id": "1", "app_id": APP_ID, "expires_at": 1000}),
    ("fb-unknown", None),
])
def test_facebook_refusals(env, pb, token, user):
    if user:
        env.stub.fb_tokens[token] = user
    status, _ = sign_in(env, pb, provider_id="facebook.com", access_token=token)
    assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE")
    assert token not in status.message


def test_an_untrusted_certificate_is_refused(pb, env):
    """Without --outbound-ca-file the system CAs do not trust the stub: keys cannot be
    fetched, and nothing but INVALID_IDP_RESPONSE comes of it."""
    daemon = Daemon()
    try:
        configure(daemon, pb, [{"provider_id": "oidc.test", "enabled": True, "client_id": CLIENT_ID,
                                "issuer": ISSUER, "jwks_url": f"https://localhost:{env.port}/oidc/jwks"}])
        before = env.stub.count("/oidc/jwks")
        status, _ = sign_in(env, pb, daemon=daemon, provider_id="oidc.test", id_token=env.provider.token("u"))
        assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE")
        assert env.stub.count("/oidc/jwks") == before  # the handshake failed before any request
    finally:
        assert daemon.stop() == 0


def test_cli_link_sign_out_sign_in(env):
    d = env.daemon
    uid = cli(d, "signin-anonymously").stdout.strip()
    linked = json.loads(cli(d, "link", "email", "--email", "Cli@Example.com", "--password-stdin", "--json",
                            stdin="correct horse\n").stdout)
    assert linked == {"uid": uid, "is_anonymous": "false", "is_new_user": "false", "provider": "password"}
    cli(d, "signout")
    # stdin is not a terminal: the password is read from it without --password-stdin too.
    assert cli(d, "signin", "email", "--email", "cli@example.com", stdin="correct horse\n").stdout.strip() == uid
    wrong = cli(d, "signin", "email", "--email", "cli@example.com", stdin="wrong horse\n", check=False)
    assert wrong.returncode == 1 and "invalid-login-credentials" in wrong.stderr
    # A password is never taken from a flag.
    flag = cli(d, "signin", "email", "--email", "cli@example.com", "--password", "correct horse", check=False)
    assert flag.returncode == 2 and "never taken from a flag" in flag.stderr
    # OIDC through the CLI, the token from stdin.
    token = env.provider.token("cli-oidc")
    out = cli(d, "link", "oidc", "--provider", "oidc.test", "--id-token-stdin", stdin=token + "\n").stdout
    assert "linked oidc.test to " + uid in out
    who = json.loads(cli(d, "whoami", "--json").stdout)
    assert set(who["providers"].split(",")) == {"password", "oidc.test"}
    assert "unlinked password" in cli(d, "unlink", "password").stdout
    gone = cli(d, "unlink", "password", check=False)
    assert gone.returncode == 1 and "no-such-provider" in gone.stderr
    assert cli(d, "signin", "oidc", "--provider", "oidc.test", "--id-token", token).stdout.strip() == uid


def test_cli_help_for_the_linking_commands():
    for command in ["link", "signin", "signup", "unlink"]:
        r = subprocess.run([CLI, command, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and "Usage: anonauth " + command in r.stdout
    r = subprocess.run([CLI, "link", "--help"], capture_output=True, text=True)
    assert "--password-stdin" in r.stdout and "oidc" in r.stdout


def test_a_certificate_for_another_name_is_refused(pb, env):
    """The stub's certificate is trusted but names only wrong.example: host-name
    verification must refuse it for https://localhost."""
    directory = tempfile.mkdtemp(prefix="anonauth-stub-wrong-")
    cert, key = https_stub.self_signed(directory, names=("wrong.example",), ips=())
    stub = https_stub.Stub(APP_ID, APP_SECRET)
    stub.jwks = env.provider.jwks()
    server, port = https_stub.serve(stub, cert, key)
    daemon = Daemon(extra=["--outbound-ca-file", cert])
    try:
        configure(daemon, pb, [{"provider_id": "oidc.test", "enabled": True, "client_id": CLIENT_ID,
                                "issuer": ISSUER, "jwks_url": f"https://localhost:{port}/oidc/jwks"}])
        status, _ = sign_in(env, pb, daemon=daemon, provider_id="oidc.test", id_token=env.provider.token("u"))
        assert (status.code, status.reason) == (3, "INVALID_IDP_RESPONSE")
        assert stub.count("/oidc/jwks") == 0
    finally:
        assert daemon.stop() == 0
        server.shutdown()
