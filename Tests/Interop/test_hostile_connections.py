"""Hostile connections: peers that never read, pipeline without pause, hold many
connections or abandon handshakes, downgrade cipher suites, or resume TLS sessions."""

import os
import pathlib
import socket
import ssl
import struct
import threading
import time

import pytest

from abuse import rss_bytes
from conftest import Daemon, metrics, call, call_frame, ops_get, read_frame, send_frame

CHECK = "/anonauth.v1.HealthService/Check"
PUBLIC_KEYS = "/anonauth.v1.TokenService/GetPublicKeys"


def framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def ping_frame(pb, nonce):
    frame = pb.rpc.Frame()
    frame.ping.nonce = nonce
    return frame.SerializeToString()


def healthy(daemon, pb, timeout=5):
    """A fresh, well-behaved connection gets its Check answered within `timeout`."""
    s = daemon.connect()
    try:
        s.settimeout(timeout)
        status, response = call(s, pb, CHECK, pb.health.CheckRequest(), pb.health.CheckResponse)
        return status.code == 0 and response.status == "SERVING"
    finally:
        s.close()


class BioConnection:
    """TLS over a non-blocking socket through memory BIOs: the test decides when bytes
    are sent and read, keeps what the kernel would not take, and never blocks."""

    def __init__(self, daemon, deadline_s=10):
        self.sock = socket.create_connection(daemon.rpc, timeout=10)
        self.sock.setblocking(False)
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.tls = daemon.context().wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")
        self.unsent = bytearray()
        self.plain = bytearray()
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.pump()
                assert time.monotonic() < deadline, "handshake timed out"
                time.sleep(0.005)
        self.pump()

    def pump(self, receive=True):
        """Moves TLS output to the socket as far as it takes it, and (unless `receive` is
        false: a peer that does not read) socket input into TLS. Returns the bytes the
        kernel accepted."""
        self.unsent += self.outgoing.read()
        sent = 0
        while self.unsent:
            try:
                n = self.sock.send(self.unsent[:1 << 20])
            except (BlockingIOError, InterruptedError):
                break
            del self.unsent[:n]
            sent += n
        while receive:
            try:
                data = self.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                break
            if not data:
                self.incoming.write_eof()
                break
            self.incoming.write(data)
        return sent

    def write(self, data):
        self.tls.write(data)
        return self.pump()

    def read_plain(self):
        """Decrypts what has arrived; returns how many plaintext bytes were added."""
        self.pump()
        added = 0
        while True:
            try:
                data = self.tls.read(1 << 20)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                return added
            if not data:
                return added
            self.plain += data
            added += len(data)

    def frames(self, pb):
        """Pops every complete frame received so far."""
        out = []
        while len(self.plain) >= 4:
            (length,) = struct.unpack(">I", self.plain[:4])
            if len(self.plain) < 4 + length:
                break
            frame = pb.rpc.Frame()
            frame.ParseFromString(bytes(self.plain[4:4 + length]))
            del self.plain[:4 + length]
            out.append(frame)
        return out

    def close(self):
        self.sock.close()


# MARK: 1. Write backpressure


def test_a_peer_that_never_reads_cannot_grow_memory(pb):
    daemon = Daemon()
    try:
        api = {"x-api-key": daemon.client_json["api_key"]}
        assert healthy(daemon, pb)
        abuser = BioConnection(daemon)
        before = rss_bytes(daemon.proc.pid)
        next_id = 1
        written = 0
        stalled_since = None
        last_health = time.monotonic()
        start = time.monotonic()
        # Pings and GetPublicKeys calls (a ~1 KB reply each), never reading a reply.
        while written < 120 << 20 and time.monotonic() - start < 40:
            if len(abuser.unsent) < 4 << 20:
                chunk = bytearray()
                for _ in range(200):
                    chunk += framed(call_frame(pb, next_id, PUBLIC_KEYS, b"", api))
                    chunk += framed(ping_frame(pb, next_id))
                    next_id += 1
                abuser.tls.write(bytes(chunk))
                written += len(chunk)
            if abuser.pump(receive=False) == 0:
                stalled_since = stalled_since or time.monotonic()
                if time.monotonic() - stalled_since > 3:
                    break
                time.sleep(0.01)
            else:
                stalled_since = None
            if time.monotonic() - last_health > 1:
                assert healthy(daemon, pb), "a well-behaved client was not answered during the abuse"
                last_health = time.monotonic()
        time.sleep(1)
        growth = rss_bytes(daemon.proc.pid) - before
        assert growth < 40 << 20, f"RSS grew by {growth >> 20} MB after {written >> 20} MB written unread"
        assert healthy(daemon, pb)

        # Now the abuser reads: the replies come, well formed, and the connection works.
        abuser.tls.write(framed(ping_frame(pb, 1 << 60)))
        got_pong = False
        replies = 0
        deadline = time.monotonic() + 120
        while not got_pong and time.monotonic() < deadline:
            if abuser.read_plain() == 0:
                time.sleep(0.005)
            for frame in abuser.frames(pb):
                kind = frame.WhichOneof("kind")
                assert kind in ("reply", "pong"), frame
                if kind == "reply":
                    replies += 1
                elif frame.pong.nonce == 1 << 60:
                    got_pong = True
        assert replies > 0
        assert got_pong, "the connection did not come back once its peer read"
        abuser.close()
    finally:
        assert daemon.stop() == 0


# MARK: 2. Work budget


def test_a_pipelining_peer_does_not_starve_others(pb):
    daemon = Daemon()
    try:
        api = {"x-api-key": daemon.client_json["api_key"]}
        calls = 5000
        busy = BioConnection(daemon)
        busy.tls.write(b"".join(framed(call_frame(pb, i + 1, CHECK, b"", api)) for i in range(calls)))
        pings = b"".join(framed(ping_frame(pb, i)) for i in range(20000))
        results = []
        stop = threading.Event()

        def probe():
            while not stop.is_set() and len(results) < 40:
                started = time.monotonic()
                try:
                    ok = healthy(daemon, pb, timeout=5)
                except OSError:
                    ok = False
                results.append((ok, time.monotonic() - started))
                time.sleep(0.2)

        prober = threading.Thread(target=probe)
        prober.start()
        replies = 0
        pongs = 0
        sent_pings = 0
        flood_until = time.monotonic() + 8
        deadline = time.monotonic() + 180
        while (time.monotonic() < flood_until or replies < calls or pongs < sent_pings) \
                and time.monotonic() < deadline:
            if time.monotonic() < flood_until and len(busy.unsent) < 1 << 20:
                busy.tls.write(pings)
                sent_pings += 20000
            busy.read_plain()
            for frame in busy.frames(pb):
                kind = frame.WhichOneof("kind")
                if kind == "reply":
                    # Some calls may meet the in-flight limit; each still gets its reply.
                    replies += 1
                elif kind == "pong":
                    pongs += 1
        stop.set()
        prober.join(timeout=30)
        assert results and all(ok for ok, _ in results), f"another connection starved: {results}"
        assert replies == calls and pongs == sent_pings, (replies, calls, pongs, sent_pings)
        busy.close()
    finally:
        assert daemon.stop() == 0


# MARK: 3. Connection limits


def closed_at_once(daemon, source="127.0.0.1", timeout=5):
    """A TCP connection the server closes without a handshake: the TLS handshake fails."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.settimeout(timeout)
    raw.bind((source, 0))
    raw.connect(daemon.rpc)
    try:
        s = daemon.context().wrap_socket(raw, server_hostname="localhost")
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError, ConnectionAbortedError):
        return True
    except socket.timeout:
        return False
    s.close()
    return False


def connect_from(daemon, source):
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.settimeout(10)
    raw.bind((source, 0))
    raw.connect(daemon.rpc)
    return daemon.context().wrap_socket(raw, server_hostname="localhost")


def check(sock, pb):
    status, response = call(sock, pb, CHECK, pb.health.CheckRequest(), pb.health.CheckResponse)
    return status.code == 0 and response.status == "SERVING"


def healthz(daemon, timeout=5):
    return ops_get(daemon, "/healthz", timeout=timeout).startswith(b"HTTP/1.1 200")


def metric(daemon, name):
    return metrics(daemon)[name]


def test_per_ip_limit_closes_the_extra_connection(pb):
    daemon = Daemon(extra=["--max-connections-per-ip", "20"])
    held = []
    try:
        for _ in range(20):
            held.append(daemon.connect())
        for s in held:
            assert check(s, pb)
        assert closed_at_once(daemon), "the 21st connection from one IP was served"
        # Another address is not affected, and the first 20 still work.
        other = connect_from(daemon, "127.0.0.2")
        assert check(other, pb)
        other.close()
        for s in held:
            assert check(s, pb)
        assert metric(daemon, "anonauth_connections_rejected_total") >= 1
        # A closed connection gives its place back.
        held.pop().close()
        deadline = time.monotonic() + 60  # bounds a hang only
        while True:
            try:
                s = daemon.connect()
                held.append(s)
                assert check(s, pb)
                break
            except (ssl.SSLError, OSError):
                assert time.monotonic() < deadline, "a freed place was not given back"
                time.sleep(0.1)
    finally:
        for s in held:
            s.close()
        assert daemon.stop() == 0


def test_per_ip_limit_exempts_trusted_proxies(pb):
    daemon = Daemon(extra=["--max-connections-per-ip", "5", "--trusted-proxies", "127.0.0.3/32"])
    held = []
    try:
        for _ in range(8):
            s = connect_from(daemon, "127.0.0.3")
            held.append(s)
            assert check(s, pb)
        assert closed_at_once(daemon, source="127.0.0.3") is False
    finally:
        for s in held:
            s.close()
        assert daemon.stop() == 0


def test_ops_port_answers_while_rpc_is_full(pb, monkeypatch, tmp_path):
    # A small descriptor limit (soft 128, hard 256): the daemon raises the soft limit to
    # the hard one, keeps a reserve, and closes RPC connections beyond what is left.
    real = os.environ.get("ANONAUTHD", str(pathlib.Path(__file__).resolve().parents[2] / ".build/debug/anonauthd"))
    wrapper = tmp_path / "anonauthd-nofile"
    wrapper.write_text(f'#!/bin/sh\nulimit -Sn 128 && ulimit -Hn 256 || exit 99\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("ANONAUTHD", str(wrapper))
    daemon = Daemon()
    held = []
    try:
        with open(f"/proc/{daemon.proc.pid}/limits") as f:
            assert any(line.startswith("Max open files") and line.split()[3] == "256" for line in f)
        assert any("connection limits" in line and '"nofile":256' in line.replace(" ", "")
                   for line in daemon.log_lines()), daemon.log_lines_text()
        deadline = time.monotonic() + 60
        for i in range(300):
            assert time.monotonic() < deadline
            raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            raw.bind((f"127.0.0.{10 + i % 4}", 0))
            raw.settimeout(5)
            raw.connect(daemon.rpc)
            held.append(raw)
        assert healthz(daemon), "/healthz did not answer with the RPC side full"
        assert closed_at_once(daemon, source="127.0.0.20")
        assert metric(daemon, "anonauth_connections_rejected_total") >= 50
    finally:
        for s in held:
            s.close()
    # Once the idle connections are gone, the server serves again.
    recover_and_stop(daemon, pb)


def recover_and_stop(daemon, pb):
    """Waits until the daemon serves again after a flood and stops it cleanly."""
    try:
        deadline = time.monotonic() + 60  # bounds a hang only
        while not_ok(daemon, pb):
            assert time.monotonic() < deadline, "the server did not recover"
            time.sleep(0.2)
    finally:
        assert daemon.stop() == 0


def not_ok(daemon, pb):
    try:
        return not healthy(daemon, pb, timeout=3)
    except (OSError, ssl.SSLError, EOFError):
        return True


def test_abandoned_handshakes_do_not_exhaust_the_server(pb):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))
    daemon = Daemon(extra=["--handshake-timeout-ms", "2000"])
    held = []
    try:
        flood = min(3000, min(hard, 8192) - 200)
        start = time.monotonic()
        for i in range(flood):
            if time.monotonic() - start > 60:
                break
            raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            raw.setblocking(False)
            raw.connect_ex(daemon.rpc)
            held.append(raw)
            if i % 500 == 0:
                s = connect_from(daemon, "127.0.0.2")
                assert check(s, pb), "a well-behaved client was not served during the flood"
                s.close()
        assert healthz(daemon)
        s = connect_from(daemon, "127.0.0.2")
        assert check(s, pb)
        s.close()
    finally:
        for s in held:
            s.close()
    recover_and_stop(daemon, pb)


# MARK: 4. TLS 1.2 cipher suites


def tls12_context(daemon, ciphers):
    ctx = daemon.context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(ciphers + ":@SECLEVEL=0")
    return ctx


@pytest.mark.parametrize("suite", ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "AES256-SHA",
                                   "AES128-SHA", "ECDHE-ECDSA-AES128-SHA256", "AES128-GCM-SHA256"])
def test_tls12_refuses_cbc_and_static_rsa_suites(daemon, suite):
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        with daemon.connect(ctx=tls12_context(daemon, suite)):
            pass


@pytest.mark.parametrize("suite", ["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                                   "ECDHE-ECDSA-CHACHA20-POLY1305"])
def test_tls12_accepts_ecdhe_aead_suites(daemon, pb, suite):
    with daemon.connect(ctx=tls12_context(daemon, suite)) as s:
        assert s.version() == "TLSv1.2" and s.cipher()[0] == suite
        assert check(s, pb)


def test_tls13_still_works(daemon, pb):
    ctx = daemon.context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    with daemon.connect(ctx=ctx) as s:
        assert s.version() == "TLSv1.3"
        assert check(s, pb)


# MARK: 5. Session resumption with mutual TLS


@pytest.fixture(scope="module")
def mtls_daemon():
    import tempfile
    from test_mutual_tls import make_ca, make_client
    directory = tempfile.mkdtemp(prefix="anonauth-resume-")
    ca_key, ca_cert, ca_path = make_ca(directory, "services-ca")
    client = make_client(directory, ca_key, ca_cert, "billing-service")
    daemon = Daemon(extra=["--client-ca-file", ca_path, "--admin-requires-client-cert"])
    yield daemon, client
    assert daemon.stop() == 0


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
@pytest.mark.parametrize("with_certificate", [False, True])
def test_sessions_resume_with_client_ca_and_keep_the_identity(mtls_daemon, pb, version, with_certificate):
    daemon, client = mtls_daemon
    ctx = daemon.context()
    ctx.minimum_version = version
    ctx.maximum_version = version
    if with_certificate:
        ctx.load_cert_chain(*client)
    admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
    usage = pb.admin.GetUsageRequest(project_id="demo-project")

    def admin_reason(sock):
        send_frame(sock, call_frame(pb, 7, "/anonauth.v1.AdminService/GetUsage", usage.SerializeToString(), admin))
        return read_frame(sock, pb).reply.status.reason

    expected = "" if with_certificate else "CLIENT_CERTIFICATE_REQUIRED"
    with daemon.connect(ctx=ctx) as first:
        assert check(first, pb)  # reads past the handshake, so a TLS 1.3 ticket has arrived
        assert admin_reason(first) == expected
        session = first.session
    assert session is not None
    for _ in range(2):
        raw = socket.create_connection(daemon.rpc, timeout=10)
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as again:
            assert check(again, pb)
            assert again.session_reused, "the session was not resumed"
            # The client certificate's identity is still known on the resumed session.
            assert admin_reason(again) == expected
            session = again.session


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_sessions_resume_without_client_ca(daemon, pb, version):
    ctx = daemon.context()
    ctx.minimum_version = version
    ctx.maximum_version = version
    with daemon.connect(ctx=ctx) as first:
        assert check(first, pb)
        session = first.session
    raw = socket.create_connection(daemon.rpc, timeout=10)
    with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as again:
        assert check(again, pb)
        assert again.session_reused


def test_complete_frames_held_back_by_backpressure_are_not_a_partial_frame(daemon, pb):
    """The frame timeout (500 ms here) is for an unfinished frame: a client that sends
    many complete calls and then reads slowly has its frames held while its output is
    over the cap, for longer than the frame timeout, and keeps its connection."""
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # our kernel takes little
    raw.settimeout(10)
    raw.connect(daemon.rpc)
    sock = daemon.context().wrap_socket(raw, server_hostname="localhost")
    api = {"x-api-key": daemon.client_json["api_key"]}
    count = 1500  # ~3 KB replies each: far past the 1 MiB output cap and the buffers
    blob = b"".join(framed(call_frame(pb, i + 1, "/anonauth.v1.TokenService/GetPublicKeys", b"", api))
                    for i in range(count))
    sock.settimeout(10)
    sock.sendall(blob)
    time.sleep(2)  # four frame timeouts while the server holds our frames
    replies = 0
    while replies < count:
        frame = read_frame(sock, pb)
        assert frame.WhichOneof("kind") == "reply", frame
        replies += 1
        if replies % 100 == 0:
            time.sleep(0.2)  # a slow reader
    send_frame(sock, ping_frame(pb, 77))
    assert read_frame(sock, pb).pong.nonce == 77
    sock.close()


def test_connection_rate_per_ip_paces_a_flood_of_new_connections(pb):
    # A burst as large as the per-IP cap, then 1 new connection a second: a flood of
    # short-lived connections is closed at accept, other addresses are not affected,
    # and credit comes back with time.
    daemon = Daemon(extra=["--max-connections-per-ip", "10", "--max-connection-rate-per-ip", "1"])
    try:
        served = 0
        while not closed_at_once(daemon):
            served += 1
            # The burst of 10, and at most one more if the burst took over a second.
            assert served <= 11, "a flood of new connections from one address was never paced"
        assert served >= 9, f"paced after {served} connections, before the burst of 10 was used"
        other = connect_from(daemon, "127.0.0.2")
        assert check(other, pb)
        other.close()
        assert metric(daemon, "anonauth_connections_rejected_total") >= 1
        assert any("connections refused: over a limit" in line and "max-connection-rate-per-ip 1" in line
                   for line in daemon.log_lines()), daemon.log_lines_text()
        time.sleep(1.1)  # one connection's worth of credit
        s = daemon.connect()
        assert check(s, pb)
        s.close()
    finally:
        assert daemon.stop() == 0
