#!/usr/bin/env python3
"""A complete AnonAuth client in one file: TLS with ALPN `anonauth/1`, length-prefixed
frames, calls matched by id, Ping answered, GoAway obeyed. docs/clients.md walks through
it, and Tests/Interop/test_python_client.py runs it against a real daemon so that the
page cannot drift from what the server does.

It needs Google's protobuf runtime and the modules protoc makes from Protos/:

    protoc --python_out=gen -I Protos $(cd Protos && find . -name '*.proto')
    PYTHONPATH=gen python3 Tests/Interop/clients/python_client.py anonauth-data/client.json

It signs in anonymously, verifies the ID token, refreshes it and reads the account back,
printing one JSON object with what it saw."""

import json
import socket
import ssl
import struct
import sys

from anonauth.rpc.v1 import rpc_pb2
from anonauth.v1 import account_pb2, health_pb2, token_pb2

ACCOUNT = "/anonauth.v1.AccountService/"
TOKEN = "/anonauth.v1.TokenService/"
HEALTH = "/anonauth.v1.HealthService/"


class CallFailed(Exception):
    """A reply whose status is not OK: `code` is gRPC's, `reason` the stable name."""

    def __init__(self, status):
        super().__init__(f"{status.code} {status.reason}: {status.message}")
        self.code = status.code
        self.reason = status.reason
        self.details = dict(status.details)


class Connection:
    """One TLS connection to anonauthd. Calls are sent one at a time here, but each has
    its own id, so a client with threads or an event loop can keep many in flight."""

    def __init__(self, host, port, ca_file, server_name="localhost", timeout_s=30):
        context = ssl.create_default_context(cafile=ca_file)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["anonauth/1"])
        raw = socket.create_connection((host, port), timeout=timeout_s)
        self.sock = context.wrap_socket(raw, server_hostname=server_name)
        if self.sock.selected_alpn_protocol() != "anonauth/1":
            raise ConnectionError("the server did not select ALPN anonauth/1")
        self.next_id = 1
        self.closing = False

    def close(self):
        self.sock.close()

    def _send(self, frame):
        body = frame.SerializeToString()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def _read_exact(self, count):
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError("the server closed the connection")
            data += chunk
        return bytes(data)

    def _receive(self):
        (length,) = struct.unpack(">I", self._read_exact(4))
        frame = rpc_pb2.Frame()
        frame.ParseFromString(self._read_exact(length))
        return frame

    def call(self, method, request, response_type, metadata=None, timeout_ms=0):
        """Sends one Call and waits for the Reply with its id."""
        if self.closing:
            raise ConnectionError("the server said GoAway: open a new connection")
        call_id = self.next_id
        self.next_id += 1
        frame = rpc_pb2.Frame()
        frame.call.id = call_id
        frame.call.method = method
        frame.call.timeout_ms = timeout_ms  # 0: the server's default deadline
        frame.call.payload = request.SerializeToString()
        for key, value in (metadata or {}).items():
            frame.call.metadata[key] = value  # keys are lowercase
        self._send(frame)
        while True:
            frame = self._receive()
            kind = frame.WhichOneof("kind")
            if kind == "ping":  # answer with the same nonce
                pong = rpc_pb2.Frame()
                pong.pong.nonce = frame.ping.nonce
                self._send(pong)
            elif kind == "go_away":
                # No new calls on this connection; calls up to last_call_id still get replies.
                self.closing = True
                if frame.go_away.last_call_id < call_id:
                    raise ConnectionError(f"GoAway {frame.go_away.reason} before call {call_id}")
            elif kind == "reply" and frame.reply.id == call_id:
                if frame.reply.status.code != 0:
                    raise CallFailed(frame.reply.status)
                return response_type.FromString(frame.reply.payload)


def main(client_json_path):
    with open(client_json_path) as f:
        client = json.load(f)  # written by `anonauthd --dev` into its data dir
    host, port = client["rpc"].rsplit(":", 1)
    key = {"x-api-key": client["api_key"]}
    conn = Connection(host, int(port), client["ca_file"])
    try:
        health = conn.call(HEALTH + "Check", health_pb2.CheckRequest(), health_pb2.CheckResponse)

        sign_up = account_pb2.SignUpRequest(anonymous=account_pb2.AnonymousSignUp())
        auth = conn.call(ACCOUNT + "SignUp", sign_up, account_pb2.AuthResponse, key)

        verify = token_pb2.VerifyIdTokenRequest(id_token=auth.id_token, check_revoked=True)
        verified = conn.call(TOKEN + "VerifyIdToken", verify, token_pb2.VerifyIdTokenResponse, key)

        refresh = account_pb2.RefreshTokenRequest(refresh_token=auth.refresh_token)
        refreshed = conn.call(ACCOUNT + "RefreshToken", refresh, account_pb2.AuthResponse, key)

        info_request = account_pb2.GetAccountInfoRequest(id_token=refreshed.id_token)
        info = conn.call(ACCOUNT + "GetAccountInfo", info_request, account_pb2.AccountInfo, key)

        try:  # a failure carries a code and a stable reason
            conn.call(ACCOUNT + "SignUp", sign_up, account_pb2.AuthResponse, {"x-api-key": "not-a-key"})
            refused = None
        except CallFailed as error:
            refused = {"code": error.code, "reason": error.reason}
    finally:
        conn.close()
    print(json.dumps({
        "health": health.status,
        "uid": auth.local_id,
        "is_anonymous": auth.is_anonymous,
        "verified_uid": verified.uid,
        "refreshed_uid": refreshed.local_id,
        "refresh_token_rotated": refreshed.refresh_token != auth.refresh_token,
        "account_uid": info.local_id,
        "bad_key": refused,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
