"""Decoding costs little whatever the shape of the bytes (the exposure review's first finding).

A 4 MiB frame of two million two-byte unknown fields (`78 00`) used to cost the daemon
about 1.4 s of its I/O loop and 300 MB, and the same bytes as a request payload about
0.7 s per call. Every decode is now pre-scanned and refused before it allocates:

- a frame: GoAway MALFORMED_FRAME, and the connection is closed;
- a payload: status 3 MALFORMED_REQUEST, and the connection keeps serving.

Meanwhile a bystander's Health checks on another connection are answered, and the daemon
stays up. No latency is asserted (the machine running the tests may be busy).

The attacker first makes one admin call on its connection, so that a frame of 4 MiB is
allowed wherever a smaller limit applies before a connection's first credential check:
these tests are about the decoder, not that limit.
"""

import threading

import pytest

from conftest import call, call_frame, read_frame, send_frame
from test_hostile_frames import expect_go_away, healthy

MAX_FRAME = 4 * 1024 * 1024
UNKNOWN = b"\x78\x00"  # field 15, varint 0: unknown to every message
ADMIN = "/anonauth.v1.AdminService/"


def admin_metadata(daemon):
    return {"authorization": "Bearer " + daemon.client_json["admin_key"]}


def credentialed(daemon, pb):
    """A connection that has passed a credential check (one admin call answered OK)."""
    sock = daemon.connect()
    request = pb.admin.ListApiKeysRequest(project_id=daemon.client_json["project_id"])
    status, _ = call(sock, pb, ADMIN + "ListApiKeys", request, None, admin_metadata(daemon), call_id=1)
    assert status.code == 0, status
    return sock


class Bystander:
    """Health checks on a connection of its own, one after another, until stopped."""

    def __init__(self, daemon, pb):
        self.daemon, self.pb = daemon, pb
        self.stop = threading.Event()
        self.answered = 0
        self.failures = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        with self.daemon.connect() as sock:
            sock.settimeout(120)
            call_id = 1
            while not self.stop.is_set():
                try:
                    healthy(self.daemon, self.pb, sock, call_id)
                    self.answered += 1
                except Exception as error:  # noqa: BLE001 - reported by the test
                    self.failures.append(repr(error))
                    return
                call_id += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=120)
        assert not self.thread.is_alive(), "the bystander's Health check was never answered"


@pytest.mark.parametrize("with_call", [False, True], ids=["unknown-only", "health-call-then-unknown"])
def test_a_frame_of_two_byte_unknown_fields_is_malformed(daemon, pb, with_call):
    """The issue's frame, and the same after a valid Health call (which would otherwise
    be answered): the whole frame is refused."""
    head = call_frame(pb, 2, "/anonauth.v1.HealthService/Check") if with_call else b""
    body = head + UNKNOWN * ((MAX_FRAME - len(head)) // 2)
    assert MAX_FRAME - 1 <= len(body) <= MAX_FRAME
    with Bystander(daemon, pb) as bystander:
        for _ in range(4):
            sock = credentialed(daemon, pb)
            with sock:
                sock.settimeout(60)
                send_frame(sock, body)
                expect_go_away(sock, pb, "MALFORMED_FRAME")
    assert bystander.failures == []
    assert bystander.answered > 0
    assert daemon.proc.poll() is None
    healthy(daemon, pb)


@pytest.mark.parametrize("method, key", [("AccountService/SignUp", "api"), ("AdminService/ImportAccounts", "admin")])
def test_a_payload_of_two_byte_unknown_fields_is_malformed_request(daemon, pb, method, key):
    metadata = {"x-api-key": daemon.client_json["api_key"]} if key == "api" else admin_metadata(daemon)
    path = "/anonauth.v1." + method
    envelope = len(call_frame(pb, 2, path, b"", metadata))
    payload = UNKNOWN * ((MAX_FRAME - envelope - 16) // 2)
    frame = call_frame(pb, 2, path, payload, metadata)
    assert MAX_FRAME - 32 <= len(frame) <= MAX_FRAME
    with Bystander(daemon, pb) as bystander:
        with credentialed(daemon, pb) as sock:
            sock.settimeout(60)
            for call_id in range(2, 6):
                send_frame(sock, call_frame(pb, call_id, path, payload, metadata))
                reply = read_frame(sock, pb)
                assert reply.WhichOneof("kind") == "reply", reply
                assert reply.reply.id == call_id
                assert reply.reply.status.code == 3, reply.reply.status
                assert reply.reply.status.reason == "MALFORMED_REQUEST", reply.reply.status
            # The connection itself is fine: the next call on it is served.
            healthy(daemon, pb, sock, 10)
    assert bystander.failures == []
    assert bystander.answered > 0
    assert daemon.proc.poll() is None


def test_empty_strings_filling_a_payload_are_malformed_request(daemon, pb):
    """Known repeated fields are the same attack: two million empty `local_ids`."""
    metadata = admin_metadata(daemon)
    path = ADMIN + "DeleteAccounts"
    envelope = len(call_frame(pb, 2, path, b"", metadata))
    payload = b"\x12\x00" * ((MAX_FRAME - envelope - 16) // 2)
    with credentialed(daemon, pb) as sock:
        sock.settimeout(60)
        send_frame(sock, call_frame(pb, 2, path, payload, metadata))
        reply = read_frame(sock, pb)
        assert reply.reply.status.reason == "MALFORMED_REQUEST", reply.reply.status
        healthy(daemon, pb, sock, 3)
    assert daemon.proc.poll() is None


def test_a_thousand_uids_to_delete_still_decode(daemon, pb):
    """The largest legitimate DeleteAccounts passes the pre-scan (unknown uids are skipped)."""
    request = pb.admin.DeleteAccountsRequest(
        project_id=daemon.client_json["project_id"], local_ids=[f"uid-{n:04d}-nobody" for n in range(1000)])
    with credentialed(daemon, pb) as sock:
        status, response = call(
            sock, pb, ADMIN + "DeleteAccounts", request, pb.admin.DeleteAccountsResponse, admin_metadata(daemon), 2)
        assert status.code == 0, status
        assert response.deleted == 0
