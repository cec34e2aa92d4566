"""gRPC on the RPC port with stock clients: grpcio with stubs that grpcio-tools generates
from Protos/ when the tests start, over TLS with the daemon's dev CA; errors read back
from grpc-status-details-bin with grpcio-status. A raw HTTP/2 client (hyper-h2) checks
what grpcio cannot show: the server's own deadline and its trailers-only answers."""

import base64
import importlib
import pathlib
import socket
import ssl
import struct
import sys
import tempfile
import time

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from conftest import ROOT, TEST_DAEMON_FLAGS, Daemon, eventually

SLEEP = "/anonauth.test.TestService/Sleep"


def generate_stubs():
    """Runs grpc_tools.protoc over Protos/ into a temporary folder and imports the
    messages and stubs. When another test already imported `anonauth.v1` (protoc's plain
    Python output, conftest's `pb`), the stubs are found beside it: same .proto files,
    same messages."""
    import grpc_tools
    from grpc_tools import protoc

    out = pathlib.Path(tempfile.mkdtemp(prefix="anonauth-grpc-"))
    protos = sorted(str(p.relative_to(ROOT / "Protos")) for p in (ROOT / "Protos").rglob("*.proto"))
    include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    status = protoc.main(["grpc_tools.protoc", f"-I{ROOT / 'Protos'}", f"-I{include}", f"--python_out={out}",
                          f"--grpc_python_out={out}", *protos])
    assert status == 0, "grpc_tools.protoc failed"
    for folder in out.rglob("*"):
        if folder.is_dir():
            (folder / "__init__.py").touch()
    sys.path.insert(0, str(out))
    if "anonauth.v1" in sys.modules:
        sys.modules["anonauth.v1"].__path__.append(str(out / "anonauth" / "v1"))
    names = ["account", "token", "admin", "health"]
    return {name: (importlib.import_module(f"anonauth.v1.{name}_pb2"),
                   importlib.import_module(f"anonauth.v1.{name}_pb2_grpc")) for name in names}


class Env:
    def __init__(self, daemon, stubs):
        self.daemon = daemon
        self.account, account_grpc = stubs["account"]
        self.token, token_grpc = stubs["token"]
        self.admin, admin_grpc = stubs["admin"]
        self.health, _ = stubs["health"]
        credentials = grpc.ssl_channel_credentials(pathlib.Path(daemon.ca_file).read_bytes())
        self.channel = grpc.secure_channel(f"localhost:{daemon.rpc[1]}", credentials)
        self.accounts = account_grpc.AccountServiceStub(self.channel)
        self.tokens = token_grpc.TokenServiceStub(self.channel)
        self.admins = admin_grpc.AdminServiceStub(self.channel)
        self.api_key = [("x-api-key", daemon.client_json["api_key"])]
        self.admin_key = [("authorization", "Bearer " + daemon.client_json["admin_key"])]
        self.project = daemon.client_json["project_id"]

    def anonymous(self):
        return self.accounts.SignUp(self.account.SignUpRequest(anonymous=self.account.AnonymousSignUp()),
                                    metadata=self.api_key, timeout=30)


@pytest.fixture(scope="module")
def env():
    stubs = generate_stubs()
    daemon = Daemon(extra=TEST_DAEMON_FLAGS)
    e = Env(daemon, stubs)
    yield e
    e.channel.close()
    assert daemon.stop() == 0


def error_info(error):
    """The google.rpc.Status of a failed call and its one ErrorInfo."""
    status = rpc_status.from_call(error)
    assert status is not None, "no grpc-status-details-bin"
    assert len(status.details) == 1 and status.details[0].Is(error_details_pb2.ErrorInfo.DESCRIPTOR)
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    return status, info


def test_sign_up_link_sign_in_refresh_and_verify(env):
    anon = env.anonymous()
    assert anon.is_anonymous and anon.local_id and anon.id_token
    # An admin call turns email and password sign-in on for the project.
    config = env.admin.ProjectConfig(project_id=env.project, email_password_enabled=True)
    updated = env.admins.UpdateProjectConfig(
        env.admin.UpdateProjectConfigRequest(config=config, update_mask=["email_password_enabled"]),
        metadata=env.admin_key, timeout=30)
    assert updated.email_password_enabled

    credential = env.account.Credential(provider_id="password", email="grpc@example.com", password="grpc-pass-1")
    linked = env.accounts.LinkWithCredential(
        env.account.LinkWithCredentialRequest(id_token=anon.id_token, credential=credential),
        metadata=env.api_key, timeout=30)
    assert linked.local_id == anon.local_id and not linked.is_anonymous

    signed_in = env.accounts.SignInWithPassword(
        env.account.SignInWithPasswordRequest(email="grpc@example.com", password="grpc-pass-1"),
        metadata=env.api_key, timeout=30)
    assert signed_in.local_id == anon.local_id

    refreshed = env.accounts.RefreshToken(
        env.account.RefreshTokenRequest(refresh_token=signed_in.refresh_token), metadata=env.api_key, timeout=30)
    assert refreshed.id_token and refreshed.refresh_token != signed_in.refresh_token

    verified = env.tokens.VerifyIdToken(env.token.VerifyIdTokenRequest(id_token=refreshed.id_token),
                                        metadata=env.api_key, timeout=30)
    assert verified.uid == anon.local_id and verified.project_id == env.project

    # A second account cannot take the same email: the reason and its details come back.
    other = env.anonymous()
    with pytest.raises(grpc.RpcError) as caught:
        env.accounts.LinkWithCredential(
            env.account.LinkWithCredentialRequest(id_token=other.id_token, credential=credential),
            metadata=env.api_key, timeout=30)
    status, info = error_info(caught.value)
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS and status.code == 6
    assert info.domain == "anonauth"
    assert info.reason in ("EMAIL_EXISTS", "CREDENTIAL_ALREADY_IN_USE"), info
    if info.reason == "CREDENTIAL_ALREADY_IN_USE":
        assert dict(info.metadata) == {"provider_id": "password", "email": "grpc@example.com"}


def test_an_admin_page_with_the_admin_key_and_its_reason_without(env):
    env.anonymous()
    page = env.admins.ListAccounts(env.admin.ListAccountsRequest(project_id=env.project, page_size=5),
                                   metadata=env.admin_key, timeout=30)
    assert 1 <= len(page.accounts) <= 5 and page.total >= 1
    with pytest.raises(grpc.RpcError) as caught:
        env.admins.ListAccounts(env.admin.ListAccountsRequest(project_id=env.project),
                                metadata=[("authorization", "Bearer wrong")], timeout=30)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    _, info = error_info(caught.value)
    assert info.reason == "ADMIN_KEY_INVALID"


def test_errors_carry_their_reason_and_message(env):
    with pytest.raises(grpc.RpcError) as caught:
        env.accounts.SignUp(env.account.SignUpRequest(anonymous=env.account.AnonymousSignUp()),
                            metadata=[("x-api-key", "no such key")], timeout=30)
    error = caught.value
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    status, info = error_info(error)
    assert (status.code, info.reason, info.domain) == (16, "API_KEY_INVALID", "anonauth")
    assert error.details() == status.message and status.message

    with pytest.raises(grpc.RpcError) as caught:
        env.accounts.SignUp(env.account.SignUpRequest(), metadata=env.api_key, timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(caught.value)[1].reason == "MISSING_SIGN_UP_METHOD"


def test_an_unknown_method_is_unimplemented_with_its_reason(env):
    nope = env.channel.unary_unary("/anonauth.v1.AccountService/NoSuchMethod",
                                   request_serializer=lambda m: m, response_deserializer=lambda b: b)
    with pytest.raises(grpc.RpcError) as caught:
        nope(b"", metadata=env.api_key, timeout=30)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert error_info(caught.value)[1].reason == "UNKNOWN_METHOD"


def test_a_gzip_compressed_call_is_unimplemented(env):
    with pytest.raises(grpc.RpcError) as caught:
        env.accounts.SignUp(env.account.SignUpRequest(anonymous=env.account.AnonymousSignUp()),
                            metadata=env.api_key, timeout=30, compression=grpc.Compression.Gzip)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
    # The same channel works uncompressed.
    assert env.anonymous().local_id


def test_the_request_id_is_echoed(env):
    request = env.account.SignUpRequest(anonymous=env.account.AnonymousSignUp())
    _, call = env.accounts.SignUp.with_call(request, metadata=env.api_key + [("x-request-id", "grpc-req-1")],
                                            timeout=30)
    assert ("x-request-id", "grpc-req-1") in [(m.key, m.value) for m in call.initial_metadata()]
    with pytest.raises(grpc.RpcError) as caught:
        env.accounts.SignUp(request, metadata=[("x-api-key", "bad"), ("x-request-id", "grpc-req-2")], timeout=30)
    # A trailers-only answer: grpcio reports its headers as trailing metadata.
    metadata = list(caught.value.initial_metadata()) + list(caught.value.trailing_metadata())
    assert ("x-request-id", "grpc-req-2") in [(m.key, m.value) for m in metadata]
    assert any('"request_id":"grpc-req-1"' in line and '"code":0' in line for line in env.daemon.log_lines())


def test_grpcios_timeout_is_deadline_exceeded(env):
    sleep = env.channel.unary_unary(SLEEP, request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=env.health.CheckResponse.FromString)
    with pytest.raises(grpc.RpcError) as caught:
        sleep(env.health.CheckRequest(), metadata=[("x-sleep-ms", "20000")], timeout=0.3)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert sleep(env.health.CheckRequest(), metadata=[("x-sleep-ms", "1")], timeout=30).status == "SLEPT"


def test_concurrent_calls_share_one_channel(env):
    anon = env.anonymous()
    request = env.token.VerifyIdTokenRequest(id_token=anon.id_token)
    futures = [env.tokens.VerifyIdToken.future(request, metadata=env.api_key, timeout=60) for _ in range(64)]
    sleep = env.channel.unary_unary(SLEEP, request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=env.health.CheckResponse.FromString)
    sleepers = [sleep.future(env.health.CheckRequest(), metadata=[("x-sleep-ms", "200")], timeout=60)
                for _ in range(16)]
    assert {f.result().uid for f in futures} == {anon.local_id}
    assert [s.result().status for s in sleepers] == ["SLEPT"] * 16


# A raw HTTP/2 client: what the server itself sends.

def raw_call(daemon, path, body, headers=(), end=True):
    """One gRPC request with hyper-h2; returns (response headers, data, trailers): for a
    trailers-only answer the status is in the response headers and trailers are empty."""
    import h2.config
    import h2.connection
    import h2.events

    ctx = ssl.create_default_context(cafile=daemon.ca_file)
    ctx.set_alpn_protocols(["h2"])
    sock = ctx.wrap_socket(socket.create_connection(daemon.rpc, timeout=30), server_hostname="localhost")
    assert sock.selected_alpn_protocol() == "h2"
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.send_headers(1, [(":method", "POST"), (":scheme", "https"), (":path", path),
                          (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
                          *headers], end_stream=False)
    conn.send_data(1, body, end_stream=end)
    sock.sendall(conn.data_to_send())
    response, data, trailers = None, b"", []
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            for event in conn.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived):
                    response = {k.decode(): v.decode() for k, v in event.headers}
                elif isinstance(event, h2.events.DataReceived):
                    data += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, 1)
                elif isinstance(event, h2.events.TrailersReceived):
                    trailers = {k.decode(): v.decode() for k, v in event.headers}
                if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    return response, data, trailers
            sock.sendall(conn.data_to_send())
    finally:
        sock.close()
    return response, data, trailers


def reason_of(details_bin):
    """The ErrorInfo reason of a grpc-status-details-bin value (unpadded base64)."""
    status = status_pb2.Status.FromString(base64.b64decode(details_bin + "=" * (-len(details_bin) % 4)))
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    return info.reason


def message(payload=b""):
    return struct.pack(">BI", 0, len(payload)) + payload


def test_the_grpc_timeout_is_the_servers_deadline(env):
    response, data, trailers = raw_call(env.daemon, SLEEP, message(),
                                        [("grpc-timeout", "200m"), ("x-sleep-ms", "20000"),
                                         ("x-request-id", "raw-deadline")])
    assert response[":status"] == "200" and response["grpc-status"] == "4" and not data and not trailers
    assert response["x-request-id"] == "raw-deadline"
    # This client set no deadline of its own: the answer is the server's, with its reason.
    assert reason_of(response["grpc-status-details-bin"]) == "DEADLINE_EXCEEDED"
    assert eventually(lambda: any('"request_id":"raw-deadline"' in line for line in env.daemon.log_lines()))


def test_a_served_call_has_headers_a_message_and_trailers(env):
    request = env.account.SignUpRequest(anonymous=env.account.AnonymousSignUp()).SerializeToString()
    response, data, trailers = raw_call(env.daemon, "/anonauth.v1.AccountService/SignUp", message(request),
                                        list(env.api_key))
    assert response[":status"] == "200" and response["content-type"] == "application/grpc"
    assert "grpc-status" not in response and trailers["grpc-status"] == "0"
    flag, length = struct.unpack(">BI", data[:5])
    assert flag == 0 and length == len(data) - 5
    assert env.account.AuthResponse.FromString(data[5:]).is_anonymous


def test_a_message_over_the_limit_is_resource_exhausted(env):
    # Only the prefix is sent: the server answers from the announced length, before the body.
    over = struct.pack(">BI", 0, 64 * 1024 + 1)
    response, _, _ = raw_call(env.daemon, "/anonauth.v1.AccountService/SignUp", over, list(env.api_key), end=False)
    assert response["grpc-status"] == "8"
    assert "grpc-status-details-bin" not in response


def test_grpc_message_is_percent_encoded(env):
    response, _, _ = raw_call(env.daemon, SLEEP, message(), [("grpc-timeout", "50%")])
    assert response[":status"] == "400" and response["grpc-status"] == "13"
    assert response["grpc-message"] == 'malformed grpc-timeout "50%25"'


def test_x_end_user_ip_is_believed_only_from_a_trusted_caller():
    """The sign-up quota counts the end user's address when an admin key comes beside the
    API key, and the socket's address otherwise, as on the native transport; the refusal's
    retry_after_seconds arrives in the ErrorInfo metadata."""
    stubs = generate_stubs()
    daemon = Daemon(extra=TEST_DAEMON_FLAGS)
    e = Env(daemon, stubs)
    try:
        config = e.admin.ProjectConfig(project_id=e.project, sign_up_quota_per_hour=2)
        e.admins.UpdateProjectConfig(
            e.admin.UpdateProjectConfigRequest(config=config, update_mask=["sign_up_quota_per_hour"]),
            metadata=e.admin_key, timeout=30)
        request = e.account.SignUpRequest(anonymous=e.account.AnonymousSignUp())

        def sign_up(metadata):
            try:
                e.accounts.SignUp(request, metadata=e.api_key + metadata, timeout=30)
                return "OK"
            except grpc.RpcError as error:
                status, info = error_info(error)
                assert int(info.metadata["retry_after_seconds"]) >= 1, info
                return info.reason

        trusted_a = e.admin_key + [("x-end-user-ip", "203.0.113.1")]
        trusted_b = e.admin_key + [("x-end-user-ip", "203.0.113.2")]
        untrusted_b = [("x-end-user-ip", "203.0.113.2")]
        assert [sign_up(trusted_a) for _ in range(3)] == ["OK", "OK", "TOO_MANY_ATTEMPTS_TRY_LATER"]
        # Another end user behind the same trusted caller has a quota of its own.
        assert sign_up(trusted_b) == "OK"
        # Without the admin key the claim is ignored: the socket's address (127.0.0.1)
        # counts, and it has its own two sign-ups left.
        assert [sign_up(untrusted_b) for _ in range(3)] == ["OK", "OK", "TOO_MANY_ATTEMPTS_TRY_LATER"]
    finally:
        e.channel.close()
        assert daemon.stop() == 0


def test_a_password_reset_over_grpc(env):
    """The email actions over gRPC: a reset mailed (in --dev, into DATA_DIR/mail), its code
    checked and used, used twice refused with INVALID_OOB_CODE."""
    import glob
    import re
    signup = env.account.SignUpRequest(email_password=env.account.EmailPasswordSignUp(
        email="grpc-reset@example.com", password="grpc-password-1"))
    env.accounts.SignUp(signup, metadata=env.api_key, timeout=30)
    sent = env.accounts.SendOobCode(
        env.account.SendOobCodeRequest(request_type="PASSWORD_RESET", email="grpc-reset@example.com"),
        metadata=env.api_key, timeout=30)
    assert sent.email == "grpc-reset@example.com" and not sent.oob_code
    code = None
    for _ in range(600):
        for path in glob.glob(f"{env.daemon.dir}/mail/*.eml"):
            text = pathlib.Path(path).read_text()
            if "To: grpc-reset@example.com" in text:
                code = re.search(r"oobCode=([A-Za-z0-9_-]+)", text).group(1)
        if code:
            break
        time.sleep(0.05)
    assert code, "no mail in the data dir"
    reset = env.account.ResetPasswordRequest(oob_code=code, new_password="grpc-password-2")
    assert env.accounts.ResetPassword(reset, metadata=env.api_key, timeout=30).request_type == "PASSWORD_RESET"
    with pytest.raises(grpc.RpcError) as caught:
        env.accounts.ResetPassword(reset, metadata=env.api_key, timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(caught.value)[1].reason == "INVALID_OOB_CODE"
