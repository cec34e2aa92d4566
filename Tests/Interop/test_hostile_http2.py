"""Hostile HTTP/2 on the RPC port (ALPN h2): rapid reset, CONTINUATION floods, SETTINGS,
PING and WINDOW_UPDATE floods, a window that never opens, HPACK bombs, oversized header
lists, bad prefaces, cleartext upgrades and too many streams. Each attack gets the answer
docs/security.md documents for it (§ HTTP/2), the daemon stays up, and other clients are
served during or after it: a gRPC health check and a JSON API sign-up, each over a fresh
HTTP/2 connection spoken by hyper-h2 as a stock client would, and a native `anonauth/1`
call.

The attacks' frames are built by hand in h2wire.py (HPACK by hyper's `hpack`, or by hand
for the bomb): hyper-h2 keeps its own side within the limits these tests break (stream
counts, windows, header blocks). They come from loopback addresses of their own
(127.0.0.N), so the per-address limits apply to the attacker and not to the bystander on
127.0.0.1."""

import json
import socket
import ssl
import struct
import time

import h2.config
import h2.connection
import h2.events
import hpack
import pytest

import h2wire
from abuse import PeakRSS, rss_bytes
from conftest import Daemon, TEST_DAEMON_FLAGS, call, call_frame, metrics, read_frame, send_frame
from h2wire import (
    DATA, GOAWAY, HEADERS, PING, RST_STREAM, SETTINGS, ACK, END_STREAM,
    Connection, error_name, grpc_message, grpc_request_headers,
)

SIGN_UP = "/anonauth.v1.AccountService/SignUp"
SLEEP = "/anonauth.test.TestService/Sleep"

# How much the daemon's resident memory may grow while one attack runs: the attacks below
# would take hundreds of MiB (or all of it) if they were not bounded.
MEMORY_BOUND = 64 << 20


# --- the bystander ---------------------------------------------------------------------

def h2_request(daemon, fields, body=b"", timeout=10):
    """One request over a fresh HTTP/2 connection, spoken by hyper-h2 as a stock client
    would: returns (response headers, response body, trailers), headers as dicts."""
    sock = daemon.connect(alpn=("h2",))
    sock.settimeout(timeout)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, fields, end_stream=not body)
    if body:
        conn.send_data(stream, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    headers, payload, trailers = {}, b"", {}
    try:
        ended = False
        while not ended:
            chunk = sock.recv(65536)
            assert chunk, f"the connection closed before the answer ({headers}, {trailers})"
            for event in conn.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived):
                    headers = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    payload += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.TrailersReceived):
                    trailers = dict(event.headers)
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    ended = ended or event.stream_id == stream
                elif isinstance(event, h2.events.ConnectionTerminated):
                    ended = True
            sock.sendall(conn.data_to_send())
    finally:
        sock.close()
    return headers, payload, trailers


def assert_served(daemon, pb):
    """Another client is served: a gRPC health check and a JSON API sign-up over HTTP/2,
    and a native call."""
    headers, payload, trailers = h2_request(daemon, grpc_request_headers(), grpc_message())
    status = trailers.get("grpc-status", headers.get("grpc-status"))
    assert headers.get(":status") == "200" and status == "0", (headers, trailers)
    assert pb.health.CheckResponse.FromString(payload[5:]).status == "SERVING"
    headers, payload, _ = h2_request(daemon, [
        (":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
        (":path", "/v1/accounts:signUp?key=" + daemon.client_json["api_key"]),
        ("content-type", "application/json")], b'{"returnSecureToken":true}')
    assert headers.get(":status") == "200" and json.loads(payload)["idToken"], (headers, payload)
    with daemon.connect() as s:
        got, _ = call(s, pb, h2wire.HEALTH_CHECK, pb.health.CheckRequest())
        assert got.code == 0


def api_key(daemon):
    return ("x-api-key", daemon.client_json["api_key"])


def handlers_settle(daemon, seconds=30):
    """Waits until no call handler is running (the attacker's calls all ended); returns
    the most that ran at once since the daemon started."""
    deadline = time.monotonic() + seconds
    while True:
        m = metrics(daemon)
        if m["anonauth_rpc_handlers_running"] == 0 or time.monotonic() > deadline:
            assert m["anonauth_rpc_handlers_running"] == 0, "call handlers still running after the attack"
            return m["anonauth_rpc_handlers_running_peak"]
        time.sleep(0.1)


def server_settings(conn):
    """The server's first SETTINGS frame as {identifier: value}."""
    for f in conn.frames(lambda f: f.kind == SETTINGS and not f.flags & ACK):
        if f.kind == SETTINGS and not f.flags & ACK:
            return {k: v for k, v in (struct.unpack(">HI", f.payload[i:i + 6]) for i in range(0, len(f.payload), 6))}
    raise AssertionError("no SETTINGS from the server")


def flood(conn, blob, limit):
    """Sends `blob` again and again, never reading, until `limit` bytes went out, the server
    stopped reading (the send times out) or closed the connection. Returns (bytes sent,
    why it stopped: "limit", "stalled" or "closed")."""
    conn.sock.settimeout(3)
    sent = 0
    try:
        while sent < limit:
            conn.sock.sendall(blob)
            sent += len(blob)
        return sent, "limit"
    except (socket.timeout, TimeoutError):
        return sent, "stalled"
    except (OSError, ssl.SSLError):
        return sent, "closed"


# --- CVE-2023-44487: rapid reset --------------------------------------------------------

def send_until_goaway(conn, batches):
    """Sends each batch of `batches` in turn, looking for the server's answer between
    them: stops at a GOAWAY, or when the connection is closed. Returns (the GOAWAY as
    (last stream id, error code) or None, batches sent). Reading as it goes matters: a
    peer that goes on sending to a closed connection gets a TCP reset, and the reset
    throws away the GOAWAY still unread in the kernel."""
    sent = 0
    for batch in batches:
        if not conn.try_send(batch):
            break
        sent += 1
        for f in conn.frames(lambda f: f.kind == GOAWAY, seconds=0.01):
            if f.kind == GOAWAY:
                return struct.unpack(">II", f.payload[:8]), sent
        if conn.closed:
            break
    goaway = conn.goaway()
    return (goaway[:2] if goaway else None), sent


def test_rapid_reset_gets_goaway_and_handlers_do_not_pile_up(daemon, pb):
    # HEADERS, the request's DATA and RST_STREAM, again and again: each stream is closed
    # by the client before the server answers, so MAX_CONCURRENT_STREAMS never binds.
    # nghttp2's reset rate limit (a burst of 200, then 33 a second) ends the connection
    # with GOAWAY INTERNAL_ERROR; the call slots bound the handlers meanwhile (a
    # sleeping handler would pile up if a reset stream let go of its slot).
    attacker = Connection(daemon, source="127.0.0.61")
    encoder = hpack.Encoder()
    sleep = grpc_request_headers(SLEEP, [("x-sleep-ms", "2000")])
    sign_up = grpc_request_headers(SIGN_UP, [api_key(daemon)])

    def batches():
        stream = 1
        while stream < 2 * 20000:
            batch = b""
            for _ in range(50):
                fields = sleep if stream % 4 == 1 else sign_up
                batch += (h2wire.headers(stream, encoder.encode(fields))
                          + h2wire.data(stream, grpc_message(), end_stream=True) + h2wire.rst_stream(stream))
                stream += 2
            yield batch

    goaway, sent = send_until_goaway(attacker, batches())
    attacker.close()
    assert goaway is not None, f"no GOAWAY after {sent * 50} reset streams"
    last, code = goaway
    assert error_name(code) == "INTERNAL_ERROR", goaway
    assert last >= 2 * 200 - 1, f"GOAWAY before the burst of 200 resets was spent ({last})"
    peak = handlers_settle(daemon)
    assert peak <= 128, f"{peak} handlers ran at once for one connection's reset streams"
    assert_served(daemon, pb)


# --- CVE-2024-28182: CONTINUATION flood --------------------------------------------------

def continuation_piece(end_headers=False):
    """A CONTINUATION frame of one small header field (x-c: 1, not indexed)."""
    return h2wire.continuation(1, b"\x00" + h2wire.hpack_string(b"x-c") + h2wire.hpack_string(b"1"), end_headers)


def test_a_header_block_of_eight_continuations_is_served(daemon, pb):
    # The configured count, 8 CONTINUATION frames after HEADERS, is still a request.
    client = Connection(daemon, source="127.0.0.62", server_settings_ack=False)
    block = h2wire.headers(1, h2wire.encode(grpc_request_headers()), end_headers=False)
    client.send(block + continuation_piece() * 7 + continuation_piece(end_headers=True)
                + h2wire.data(1, grpc_message(), end_stream=True))
    frames = client.frames(lambda f: f.kind == HEADERS and f.flags & END_STREAM or f.kind == GOAWAY)
    client.close()
    assert frames and frames[-1].kind == HEADERS and frames[-1].fields.get("grpc-status") == "0", frames[-1:]


def test_continuation_flood_is_cut_at_the_configured_count(daemon, pb):
    # A HEADERS frame without END_HEADERS, then CONTINUATION frames without end, each
    # carrying one small header field: the ninth makes libnghttp2 end the session
    # (max_continuations 8), long before the header-list limit would; the daemon closes
    # the connection (libnghttp2 queues no GOAWAY for this error) and logs why.
    attacker = Connection(daemon, source="127.0.0.62", server_settings_ack=False)
    before = rss_bytes(daemon.proc.pid)
    attacker.send(h2wire.headers(1, h2wire.encode(grpc_request_headers()), end_headers=False))
    goaway, sent = send_until_goaway(attacker, (continuation_piece() * 100 for _ in range(100000)))
    closed = attacker.wait_closed()
    attacker.close()
    assert closed, "the connection outlived an endless header block"
    assert sent < 1000, f"{sent * 100} CONTINUATION frames were read"
    assert goaway is None or error_name(goaway[1]) == "ENHANCE_YOUR_CALM", goaway
    assert rss_bytes(daemon.proc.pid) - before < MEMORY_BOUND
    assert any("Too many CONTINUATION frames" in line for line in daemon.log_lines())
    assert_served(daemon, pb)


# --- slow headers, slow bodies, no preface ----------------------------------------------

def test_a_header_block_never_finished_is_cut_at_the_frame_timeout(daemon, pb):
    # HEADERS without END_HEADERS, then silence: past --frame-timeout-ms (the fixture's
    # 500 ms) the session ends with GOAWAY ENHANCE_YOUR_CALM. (The server's SETTINGS is
    # not acknowledged: an ACK inside the header block would be a protocol error.)
    attacker = Connection(daemon, source="127.0.0.72", server_settings_ack=False)
    attacker.send(h2wire.headers(1, h2wire.encode(grpc_request_headers()), end_headers=False))
    goaway = attacker.goaway(seconds=30)
    assert attacker.wait_closed()
    attacker.close()
    assert goaway is not None and error_name(goaway[1]) == "ENHANCE_YOUR_CALM", goaway
    assert_served(daemon, pb)


def test_a_request_body_never_finished_is_reset_and_the_connection_kept(daemon, pb):
    # A gRPC request whose body never comes: past --frame-timeout-ms its stream is reset
    # (CANCEL); the connection serves the next stream.
    client = Connection(daemon, source="127.0.0.72")
    encoder = hpack.Encoder()
    client.send(h2wire.headers(1, encoder.encode(grpc_request_headers())))
    frames = client.frames(lambda f: f.kind in (RST_STREAM, GOAWAY), seconds=30)
    assert frames and frames[-1].kind == RST_STREAM and frames[-1].stream == 1, frames[-3:]
    assert error_name(struct.unpack(">I", frames[-1].payload)[0]) == "CANCEL"
    client.send(h2wire.headers(3, encoder.encode(grpc_request_headers())) + h2wire.data(3, grpc_message(), True))
    frames = client.frames(lambda f: f.stream == 3 and f.flags & END_STREAM or f.kind == GOAWAY)
    client.close()
    assert frames[-1].kind == HEADERS and frames[-1].fields.get("grpc-status") == "0", frames[-1:]
    assert_served(daemon, pb)


def test_no_preface_is_closed_at_the_handshake_timeout(daemon, pb):
    # TLS done, ALPN h2, then nothing: closed at --handshake-timeout-ms (500 ms here).
    attacker = Connection(daemon, source="127.0.0.72", preface=False)
    assert attacker.wait_closed(30)
    attacker.close()
    assert_served(daemon, pb)


# --- SETTINGS, PING and WINDOW_UPDATE floods ----------------------------------------------

def test_settings_with_too_many_entries_is_enhance_your_calm(daemon, pb):
    attacker = Connection(daemon, source="127.0.0.63")
    attacker.send(h2wire.settings([(h2wire.INITIAL_WINDOW_SIZE, 65535)] * 100))
    goaway = attacker.goaway()
    assert goaway is not None and error_name(goaway[1]) == "ENHANCE_YOUR_CALM", goaway
    assert attacker.wait_closed()
    attacker.close()
    assert_served(daemon, pb)


@pytest.mark.parametrize("kind", ["settings", "ping"])
@pytest.mark.parametrize("per_send", [4096, 16])
def test_a_flood_whose_acks_are_never_read_is_bounded(daemon, pb, kind, per_send):
    # Every SETTINGS and PING must be acknowledged; the attacker never reads the ACKs
    # (and its receive buffer is small). libnghttp2 keeps at most 100 ACKs unsent
    # (max_outbound_ack): a burst of thousands in one read ends the session at once, and
    # a trickle does once the server stops writing to a peer that does not read. Either
    # way the connection is closed ("Flooding was detected", logged) or no longer read,
    # and memory stays bounded.
    attacker = Connection(daemon, source="127.0.0.64", rcvbuf=4096)
    before = rss_bytes(daemon.proc.pid)
    peak = PeakRSS(daemon.proc.pid)
    one = h2wire.settings([(h2wire.INITIAL_WINDOW_SIZE, 65535)]) if kind == "settings" else h2wire.ping(b"flooding")
    try:
        sent, outcome = flood(attacker, one * per_send, 256 << 20)
        assert_served(daemon, pb)
    finally:
        growth = peak.stop() - before
        attacker.close()
    assert outcome in ("stalled", "closed"), f"the server read {sent >> 20} MiB of {kind} frames whose ACKs went unread"
    if outcome == "closed":
        assert any("Flooding was detected" in line for line in daemon.log_lines())
    assert growth < MEMORY_BOUND, f"{growth >> 20} MiB for {sent >> 20} MiB of {kind} frames ({outcome})"


def test_window_update_flood_is_absorbed(daemon, pb):
    # 100,000 one-byte WINDOW_UPDATEs on the connection: each costs the server an
    # addition, no answer; a PING after them is answered, so the connection kept up.
    attacker = Connection(daemon, source="127.0.0.65")
    attacker.send(h2wire.window_update(0, 1) * 100000 + h2wire.ping(b"afterall"))
    frames = attacker.frames(lambda f: f.kind in (PING, GOAWAY) and (f.kind == GOAWAY or f.flags & ACK), 30)
    attacker.close()
    assert frames and frames[-1].kind == PING and frames[-1].payload == b"afterall", frames[-3:]
    assert_served(daemon, pb)


def test_connection_window_overflow_is_flow_control_error(daemon, pb):
    attacker = Connection(daemon, source="127.0.0.66")
    attacker.send(h2wire.window_update(0, 0x7FFFFFFF))
    goaway = attacker.goaway()
    attacker.close()
    assert goaway is not None and error_name(goaway[1]) == "FLOW_CONTROL_ERROR", goaway
    assert_served(daemon, pb)


def test_stream_window_overflow_resets_that_stream_only(daemon, pb):
    attacker = Connection(daemon, source="127.0.0.66")
    encoder = hpack.Encoder()
    attacker.send(h2wire.headers(1, encoder.encode(grpc_request_headers())))  # body still to come
    attacker.send(h2wire.window_update(1, 0x7FFFFFFF))
    frames = attacker.frames(lambda f: f.kind in (RST_STREAM, GOAWAY))
    assert frames and frames[-1].kind == RST_STREAM and frames[-1].stream == 1, frames[-3:]
    assert error_name(struct.unpack(">I", frames[-1].payload)[0]) == "FLOW_CONTROL_ERROR"
    # The connection goes on: the next stream is a health check, answered.
    attacker.send(h2wire.headers(3, encoder.encode(grpc_request_headers())) + h2wire.data(3, grpc_message(), True))
    frames = attacker.frames(lambda f: f.stream == 3 and f.flags & END_STREAM or f.kind == GOAWAY)
    attacker.close()
    trailers = [f.fields for f in frames if f.kind == HEADERS and f.stream == 3][-1]
    assert trailers.get("grpc-status") == "0", frames
    assert_served(daemon, pb)


# --- a window that never opens -----------------------------------------------------------

def test_a_zero_window_never_opened_is_bounded_and_closed(pb):
    # INITIAL_WINDOW_SIZE 0: the server may send headers but no DATA. 100 calls for the
    # public keys (a few KB each) whose answers can never be sent: their handlers end, the answers wait in a bounded
    # queue, and the connection is closed once it has made no progress for the idle
    # timeout. Meanwhile others are served.
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--idle-timeout-ms", "2000"])
    try:
        attacker = Connection(d, source="127.0.0.67", preface=False)
        before = rss_bytes(d.proc.pid)
        peak = PeakRSS(d.proc.pid)
        encoder = hpack.Encoder()
        blob = h2wire.PREFACE + h2wire.settings([(h2wire.INITIAL_WINDOW_SIZE, 0)])
        keys = grpc_request_headers("/anonauth.v1.TokenService/GetPublicKeys", [api_key(d)])
        for i in range(100):
            stream = 2 * i + 1
            blob += h2wire.headers(stream, encoder.encode(keys)) + h2wire.data(stream, grpc_message(), True)
        attacker.send(blob)
        handlers_settle(d)
        assert_served(d, pb)
        growth = peak.stop() - before
        assert growth < MEMORY_BOUND, f"{growth >> 20} MiB for 100 answers that cannot be sent"
        frames = attacker.frames(seconds=60, until=lambda f: f.kind == GOAWAY)
        closed = attacker.wait_closed(60)
        attacker.close()
        assert closed, "a connection that can never make progress was kept"
        assert not [f for f in frames if f.kind == DATA and f.payload], "DATA sent into a zero window"
        goaway = frames[-1] if frames and frames[-1].kind == GOAWAY else None
        assert goaway and struct.unpack(">II", goaway.payload[:8]) == (199, h2wire.NO_ERROR), frames[-1:]
        assert_served(d, pb)
    finally:
        assert d.stop() == 0


# --- HPACK bomb and oversized header lists -----------------------------------------------

def assert_431(frames):
    """The stream was answered 431 (the header list over SETTINGS_MAX_HEADER_LIST_SIZE,
    16 KiB, as HTTP/1.1's head limit) with END_STREAM, and nothing more was done."""
    assert frames and frames[-1].kind == HEADERS and frames[-1].flags & END_STREAM, frames[-3:]
    assert frames[-1].fields == {":status": "431"}, frames[-1]


def test_hpack_bomb_is_refused_with_bounded_memory(daemon, pb):
    # One 4,000-byte field enters the dynamic table, then 16,000 one-byte references to
    # it: a 16 KB header block that decodes to 64 MB. The header-list limit refuses it.
    attacker = Connection(daemon, source="127.0.0.68")
    before = rss_bytes(daemon.proc.pid)
    block = h2wire.encode(grpc_request_headers()) + h2wire.hpack_literal_indexed(b"x-bomb", b"a" * 4000)
    block += h2wire.hpack_indexed(62) * (16384 - 9 - len(block))
    attacker.send(h2wire.headers(1, block, end_stream=True))
    frames = attacker.frames(lambda f: f.stream == 1 and f.kind in (RST_STREAM,) or f.kind == GOAWAY
                             or f.kind == HEADERS and f.stream == 1 and f.flags & END_STREAM)
    attacker.frames(seconds=0.5)
    attacker.close()
    assert rss_bytes(daemon.proc.pid) - before < MEMORY_BOUND
    assert_431(frames)
    assert not attacker.closed, "the connection was closed for one stream's header list"
    assert_served(daemon, pb)


@pytest.mark.parametrize("extra", [[("x-big", "b" * 40000)], [(f"x-f{i}", "1") for i in range(100)]],
                         ids=["40 KB field", "100 fields"])
def test_oversized_header_list_is_refused(daemon, pb, extra):
    attacker = Connection(daemon, source="127.0.0.69", server_settings_ack=False)
    block = h2wire.encode(grpc_request_headers() + extra)
    pieces = [block[i:i + 16000] for i in range(0, len(block), 16000)]
    raw = h2wire.headers(1, pieces[0], end_stream=True, end_headers=len(pieces) == 1)
    for i, piece in enumerate(pieces[1:], start=2):
        raw += h2wire.continuation(1, piece, end_headers=i == len(pieces))
    attacker.send(raw)
    frames = attacker.frames(lambda f: f.stream == 1 and f.kind in (RST_STREAM,) or f.kind == GOAWAY
                             or f.kind == HEADERS and f.stream == 1 and f.flags & END_STREAM)
    attacker.close()
    assert_431(frames)
    assert_served(daemon, pb)


# --- prefaces, upgrades and the wrong ALPN ----------------------------------------------

def test_bad_client_preface_closes_the_connection(daemon, pb):
    attacker = Connection(daemon, source="127.0.0.70", preface=False)
    attacker.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    frames = attacker.frames(lambda f: f.kind == GOAWAY)
    assert attacker.wait_closed()
    attacker.close()
    # libnghttp2 ends the session on the bad magic before any frame of the client's:
    # the connection is closed without a GOAWAY, and the daemon logs why.
    assert not [f for f in frames if f.kind == GOAWAY], frames
    assert any("bad client magic" in line for line in daemon.log_lines())
    assert_served(daemon, pb)


def test_h2_preface_on_the_native_alpn_is_frame_too_large(daemon, pb):
    # "PRI " read as a length prefix is 1.3 GB: over the frame limit, as any junk is.
    with daemon.connect(alpn=("anonauth/1",)) as s:
        s.sendall(h2wire.PREFACE + h2wire.settings())
        s.settimeout(10)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data[4:].endswith(b"FRAME_TOO_LARGE"), data
    assert_served(daemon, pb)


def _read_http1(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
    while len(rest) < length:
        rest += sock.recv(65536)
    return head.decode(), rest


def test_h2_preface_on_http11_and_the_emulator_listener_is_505(pb):
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--firebase-emulator-listen", "127.0.0.1:0"])
    try:
        for sock in (d.connect(alpn=("http/1.1",)), socket.create_connection(d.emulator, timeout=10)):
            with sock:
                sock.settimeout(10)
                sock.sendall(h2wire.PREFACE + h2wire.settings())
                head, _ = _read_http1(sock)
                assert head.startswith("HTTP/1.1 505 "), head
                assert "connection: close" in head.lower()
        assert_served(d, pb)
    finally:
        assert d.stop() == 0


UPGRADE = (b"GET /v1/x HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade, HTTP2-Settings\r\n"
           b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n")


def test_h2c_upgrade_is_ignored(pb):
    # HTTP/2 is offered by ALPN only: an Upgrade to h2c is answered as plain HTTP/1.1
    # (no 101), on the TLS port and on the emulator listener, and the connection stays
    # HTTP/1.1.
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--firebase-emulator-listen", "127.0.0.1:0"])
    try:
        for sock in (d.connect(alpn=("http/1.1",)), socket.create_connection(d.emulator, timeout=10)):
            with sock:
                sock.settimeout(10)
                for _ in range(2):
                    sock.sendall(UPGRADE)
                    head, _ = _read_http1(sock)
                    assert head.startswith("HTTP/1.1 404 "), head
                    assert "upgrade" not in head.lower()
        assert_served(d, pb)
    finally:
        assert d.stop() == 0


# --- more streams than MAX_CONCURRENT_STREAMS ----------------------------------------------

def over_the_limit(conn, encoder, count=12):
    """`count` requests whose bodies never come, at once: streams 1, 3, 5, ..."""
    conn.send(b"".join(h2wire.headers(2 * i + 1, encoder.encode(grpc_request_headers())) for i in range(count)))


def test_streams_over_max_concurrent_streams_are_refused_and_the_connection_kept(pb):
    # A client that opens streams before it has acknowledged the server's SETTINGS (as
    # stock gRPC clients may, right after their preface): past the limit (the call limit,
    # --max-concurrent-calls) libnghttp2 refuses each extra stream with REFUSED_STREAM,
    # safe to retry, and the connection goes on.
    # The held streams' bodies may take their time here (a busy machine): the fixture's
    # 500 ms for an unfinished body would reset them (RST_STREAM CANCEL).
    d = Daemon(extra=["--handshake-timeout-ms", "500", "--frame-timeout-ms", "30000", "--max-concurrent-calls", "8"])
    try:
        client = Connection(d, source="127.0.0.71", server_settings_ack=False)
        encoder = hpack.Encoder()
        over_the_limit(client, encoder)
        resets = []

        def four_resets(f):
            if f.kind == RST_STREAM:
                resets.append(f)
            return f.kind == GOAWAY or len(resets) == 4

        frames = client.frames(four_resets)
        refused = {f.stream for f in resets if error_name(struct.unpack(">I", f.payload)[0]) == "REFUSED_STREAM"}
        settings = [f for f in frames if f.kind == SETTINGS and not f.flags & ACK][0]
        announced = dict(struct.unpack(">HI", settings.payload[i:i + 6]) for i in range(0, len(settings.payload), 6))
        assert announced[h2wire.MAX_CONCURRENT_STREAMS] == 8
        assert refused == {17, 19, 21, 23}, frames
        # The connection is kept: a held stream gets its body and is answered.
        client.send(h2wire.settings(ack=True) + h2wire.data(1, grpc_message(), end_stream=True))
        frames = client.frames(lambda f: f.stream == 1 and f.flags & END_STREAM or f.kind == GOAWAY)
        client.close()
        trailers = [f.fields for f in frames if f.kind == HEADERS and f.stream == 1][-1]
        assert trailers.get("grpc-status") == "0", frames
        assert_served(d, pb)
    finally:
        assert d.stop() == 0


def test_streams_over_an_acknowledged_limit_end_the_connection(pb):
    # Once the client has acknowledged MAX_CONCURRENT_STREAMS, a stream past it is a
    # connection error for libnghttp2 (RFC 9113 §5.1.2 allows a stream error, §5.4.1
    # lets an endpoint treat it as a connection error): GOAWAY PROTOCOL_ERROR naming the
    # last stream it took. Only a client that ignores the limit it acknowledged meets it.
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--max-concurrent-calls", "8"])
    try:
        attacker = Connection(d, source="127.0.0.71")
        assert server_settings(attacker)[h2wire.MAX_CONCURRENT_STREAMS] == 8
        over_the_limit(attacker, hpack.Encoder())
        goaway = attacker.goaway()
        assert attacker.wait_closed()
        attacker.close()
        assert goaway is not None and error_name(goaway[1]) == "PROTOCOL_ERROR", goaway
        assert goaway[0] == 15, goaway  # the eighth stream
        assert_served(d, pb)
    finally:
        assert d.stop() == 0


# --- answers queued behind closed windows, refusals that cost nothing, the log budget ---

REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


def reflection_request(symbol=b"anonauth.v1.AdminService"):
    """A ServerReflectionRequest asking for the file that holds `symbol` (field 4): the
    admin service's, whose answer is about 12 KB."""
    return grpc_message(b"\x22" + bytes([len(symbol)]) + symbol)


def buffered(daemon):
    return metrics(daemon)["anonauth_rpc_buffered_bytes"]


def test_zero_window_reflection_streams_hold_one_answer_each_within_the_budget(pb):
    # The review's attack: INITIAL_WINDOW_SIZE 0, 120 reflection streams (no key needed),
    # 8 requests of 31 bytes on each. Every answer is held until the peer reads: one per
    # stream (the next requests wait), charged to the byte budgets; the connection over
    # its output budget takes no new stream, and is ended (GOAWAY ENHANCE_YOUR_CALM) when
    # nothing has drained for the frame timeout.
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--frame-timeout-ms", "4000"])
    try:
        attacker = Connection(d, source="127.0.0.71", preface=False)
        before = rss_bytes(d.proc.pid)
        encoder = hpack.Encoder()
        blob = h2wire.PREFACE + h2wire.settings([(h2wire.INITIAL_WINDOW_SIZE, 0)])
        fields = grpc_request_headers(REFLECTION)
        for i in range(120):
            stream = 2 * i + 1
            blob += h2wire.headers(stream, encoder.encode(fields)) + h2wire.data(stream, reflection_request() * 8)
        attacker.send(blob)
        deadline = time.monotonic() + 30
        while metrics(d)["anonauth_http2_output_over_budget_total"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert metrics(d)["anonauth_http2_output_over_budget_total"] == 1, "the answers were never queued"
        # A new stream on it is refused (REFUSED_STREAM): no new work while over.
        attacker.send(h2wire.headers(241, encoder.encode(fields)) + h2wire.data(241, reflection_request(), True))
        frames = attacker.frames(lambda f: f.kind == RST_STREAM and f.stream == 241, seconds=10)
        assert frames and frames[-1].kind == RST_STREAM and frames[-1].stream == 241, frames[-3:]
        assert struct.unpack(">I", frames[-1].payload)[0] == h2wire.REFUSED_STREAM
        held = buffered(d)
        # One answer a stream: under 120 x 16 KiB (eight a stream would be about 12 MB).
        assert 1 << 20 < held < 120 * 16 * 1024, held
        assert rss_bytes(d.proc.pid) - before < MEMORY_BOUND
        assert_served(d, pb)
        goaway = attacker.goaway(seconds=20)
        assert goaway and goaway[1] == h2wire.ENHANCE_YOUR_CALM, goaway
        assert attacker.wait_closed(10)
        assert not [f for f in attacker.received if f.kind == DATA and f.payload], "DATA sent into a zero window"
        attacker.close()
        # The charge is given back with the connection.
        deadline = time.monotonic() + 20
        while buffered(d) > 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert buffered(d) == 0
        assert metrics(d)["anonauth_http2_connections_calmed_total"] == 1
    finally:
        assert d.stop() == 0


def bomb_block():
    """A 16 KB header block: a 4,000-byte field into the dynamic table, then about
    12,000 one-byte references to it (48 MB decoded)."""
    block = h2wire.encode(grpc_request_headers()) + h2wire.hpack_literal_indexed(b"x-bomb", b"a" * 4000)
    return block + h2wire.hpack_indexed(62) * (16384 - 9 - len(block))


def test_repeated_refused_header_lists_end_the_connection_with_enhance_your_calm(daemon, pb):
    # Stream after stream of HPACK bombs on one connection: each is answered 431 without
    # being decoded into fields; past a small burst the connection is ended, and its
    # reconnections meet the address's connection rate limit.
    attacker = Connection(daemon, source="127.0.0.72")
    block = bomb_block()
    goaway, sent = send_until_goaway(attacker, (h2wire.headers(2 * i + 1, block, end_stream=True) for i in range(64)))
    assert goaway and goaway[1] == h2wire.ENHANCE_YOUR_CALM, (goaway, sent)
    refused = [f for f in attacker.received if f.kind == HEADERS and f.fields == {":status": "431"}]
    assert 1 <= len(refused) <= 9, len(refused)
    assert attacker.wait_closed(10)
    m = metrics(daemon)
    assert m["anonauth_http2_header_lists_refused_total"] >= len(refused)
    assert m["anonauth_http2_connections_calmed_total"] == 1
    assert_served(daemon, pb)


def test_call_log_lines_have_a_budget_and_every_call_is_counted(pb):
    # 300 calls to an unknown path as fast as one connection goes: a burst of log lines,
    # then the rate; the rest only counted, and the next line written says how many.
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--max-call-log-lines-per-second", "5"])
    try:
        started = time.monotonic()
        with d.connect() as s:
            for i in range(300):
                send_frame(s, call_frame(pb, i + 1, "/nowhere.Service/Flood"))
            for _ in range(300):
                read_frame(s, pb)
            time.sleep(1.5)  # earns more lines
            send_frame(s, call_frame(pb, 1000, "/nowhere.Service/Flood"))
            read_frame(s, pb)
        lines = [json.loads(line) for line in d.log_lines() if line.startswith("{")]
        calls = [entry for entry in lines if entry.get("msg") == "call"]
        elapsed = time.monotonic() - started
        # A burst of 10, then 5 a second: far fewer lines than calls.
        assert 10 <= len(calls) <= 10 + 5 * elapsed + 1, (len(calls), elapsed)
        # Every call is either written or counted in the next line written.
        suppressed = sum(entry.get("suppressed", 0) for entry in calls)
        assert len(calls) + suppressed == 301, (len(calls), suppressed)
        m = metrics(d)
        assert m["anonauth_call_log_lines_suppressed_total"] == suppressed
        answered = sum(v for k, v in m.items() if k.startswith("anonauth_rpc_calls_total{"))
        assert answered == 301, {k: v for k, v in m.items() if k.startswith("anonauth_rpc_calls_total{")}
    finally:
        assert d.stop() == 0
