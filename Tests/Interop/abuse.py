"""Abusive clients, each a loop that runs until its `stop` event is set: the hostile-client
suite runs them beside a well-behaved client, and Scripts/soak.py for minutes. Every
connection goes to the daemon on loopback, from a source address of the abuser's own
(127.0.0.N: Linux routes all of 127/8 on lo), as attackers come from their own
addresses: the per-IP limits apply to them and not to the well-behaved client on
127.0.0.1. Every loop sleeps between rounds so the attack loads the daemon, not the
test's own CPU. `tally` counts what each one did."""

import json
import os
import random
import socket
import ssl
import subprocess
import struct
import threading
import time
from collections import Counter

from conftest import call, call_frame, read_frame, send_frame

ACCOUNT = "/anonauth.v1.AccountService/"


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = Counter()

    def add(self, what, n=1):
        with self.lock:
            self.counts[what] += n


def _api(daemon):
    return {"x-api-key": daemon.client_json["api_key"]}


def _tcp(address, source, timeout=2):
    return socket.create_connection(address, timeout=timeout, source_address=(source, 0))


def _tls(daemon, source, timeout=10):
    return daemon.context().wrap_socket(_tcp(daemon.rpc, source, timeout), server_hostname="localhost")


def garbage_frames(daemon, pb, stop, tally):
    """Connections that send a frame length over the limit, a zero length, or junk."""
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.0.2")
            sock.sendall(random.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x00\x00\x00\x05junk!"]))
            sock.settimeout(5)
            while sock.recv(4096):
                pass
            sock.close()
        except (OSError, ssl.SSLError):
            pass
        tally.add("garbage frame")
        stop.wait(0.05)


def abandoned_handshakes(daemon, pb, stop, tally, count=1600):
    """Thousands of TCP connections that send half a ClientHello and never finish, from
    eight addresses (127.0.1.1 to 127.0.1.8)."""
    held = []
    hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(20)
    while not stop.is_set():
        while len(held) < count and not stop.is_set():
            try:
                s = _tcp(daemon.rpc, f"127.0.1.{len(held) % 8 + 1}")
                s.sendall(hello)
                held.append(s)
                tally.add("abandoned handshake")
            except OSError:
                tally.add("abandoned handshake refused")
                break
        stop.wait(1)
        alive = []
        for s in held:  # keep those the server has not closed yet
            s.setblocking(False)
            try:
                if s.recv(4096) == b"":
                    s.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                continue
            alive.append(s)
        held = alive
    for s in held:
        s.close()


def half_sent_frames(daemon, pb, stop, tally):
    """A frame header promising 1 KiB, then a few bytes, then silence."""
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.0.3")
            sock.sendall(struct.pack(">I", 1024) + b"\x0a\x05")
            sock.settimeout(40)
            while sock.recv(4096):
                pass
            sock.close()
        except (OSError, ssl.SSLError):
            pass
        tally.add("half-sent frame")
        stop.wait(0.2)


def never_reads(daemon, pb, stop, tally):
    """Sends Pings and GetPublicKeys calls and never reads the answers, 10 s at a time.
    Frames go out in pre-built blobs (a thousand Pings and 32 calls each), so the test's
    own CPU stays free for the daemon and the well-behaved client, as an attacker's tool
    would send them."""
    ping = pb.rpc.Frame()
    ping.ping.nonce = 1
    body = ping.SerializeToString()
    pings = (struct.pack(">I", len(body)) + body) * 1000
    n = 0
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.0.4")
            sock.settimeout(2)
            ends = time.monotonic() + 10
            while time.monotonic() < ends and not stop.is_set():
                calls = b""
                for _ in range(32):
                    n += 1
                    frame = call_frame(pb, n, "/anonauth.v1.TokenService/GetPublicKeys", b"", _api(daemon))
                    calls += struct.pack(">I", len(frame)) + frame
                sock.sendall(pings + calls)
            sock.close()
        except (OSError, ssl.SSLError):
            pass  # the send timed out: the server stopped reading us, as it should
        tally.add("non-reading connection")
        stop.wait(0.5)


def slow_reader(daemon, pb, stop, tally):
    """Asks for public keys over and over but reads one byte a second."""
    while not stop.is_set():
        try:
            raw = socket.socket()
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            raw.settimeout(5)
            raw.bind(("127.0.0.5", 0))
            raw.connect(daemon.rpc)
            sock = daemon.context().wrap_socket(raw, server_hostname="localhost")
            for i in range(200):
                send_frame(sock, call_frame(pb, i + 1, "/anonauth.v1.TokenService/GetPublicKeys", b"", _api(daemon)))
            ends = time.monotonic() + 15
            while time.monotonic() < ends and not stop.is_set():
                sock.recv(1)
                stop.wait(1)
            sock.close()
        except (OSError, ssl.SSLError):
            pass
        tally.add("one-byte-a-second reader")


def over_quota_email(daemon, pb, stop, tally):
    """Email sign-ups from the raw peer address, far past its quota, 64 pipelined."""
    n = 0
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.0.6", timeout=30)
            for i in range(64):
                n += 1
                request = pb.account.SignUpRequest(email_password=pb.account.EmailPasswordSignUp(
                    email=f"abuse-{n}-{random.randrange(1 << 30)}@example.com", password="password123"))
                send_frame(sock, call_frame(pb, i + 1, ACCOUNT + "SignUp", request.SerializeToString(), _api(daemon)))
            for _ in range(64):
                read_frame(sock, pb)
            sock.close()
        except (OSError, EOFError, ssl.SSLError):
            pass
        tally.add("over-quota email sign-ups x64")
        stop.wait(0.5)


def hostile_fields(daemon, pb, stop, tally):
    """1 MiB strings, invalid UTF-8, unknown and repeated fields in request payloads."""
    big = "x" * (1 << 20)
    payloads = [
        pb.account.SignInWithPasswordRequest(email=big, password=big).SerializeToString(),
        pb.account.RefreshTokenRequest(refresh_token=big).SerializeToString(),
        b"\x0a\x04\xff\xfe\xfd\xfc",  # field 1 (a string) with invalid UTF-8
        b"\x0a\x01a\x0a\x01b\xf8\x07\x01\xfa\x07\x03abc",  # field 1 twice, unknown fields 127
    ]
    methods = [ACCOUNT + "SignInWithPassword", ACCOUNT + "RefreshToken", ACCOUNT + "GetAccountInfo",
               "/anonauth.v1.TokenService/VerifyIdToken"]
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.0.7")
            for i, method in enumerate(methods):
                send_frame(sock, call_frame(pb, i + 1, method, random.choice(payloads), _api(daemon)))
                read_frame(sock, pb)
            sock.close()
        except (OSError, EOFError, ssl.SSLError):
            pass
        tally.add("hostile fields x4")
        stop.wait(0.2)


def forged_tokens(daemon, pb, stop, tally):
    """VerifyIdToken with alg none, HS256, a foreign kid, junk and a 20,000-byte token."""
    tokens = ["eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "a.b.c", "x" * 20000,
              "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
              "eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ.eyJzdWIiOiJ4In0.c2ln"]
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.0.8")
            for i in range(50):
                call(sock, pb, "/anonauth.v1.TokenService/VerifyIdToken",
                     pb.token.VerifyIdTokenRequest(id_token=random.choice(tokens)), None, _api(daemon), i + 1)
            sock.close()
        except (OSError, EOFError, ssl.SSLError):
            pass
        tally.add("forged tokens x50")
        stop.wait(0.2)


def ops_slowloris(daemon, pb, stop, tally, count=40):
    """Half-sent HTTP heads on the ops port, renewed every second."""
    held = []
    while not stop.is_set():
        while len(held) < count:
            try:
                s = _tcp(daemon.ops, f"127.0.2.{len(held) % 4 + 1}")
                s.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
                held.append(s)
                tally.add("ops slow head")
            except OSError:
                break
        stop.wait(1)
        for s in held:
            s.close()
        held = []


ALL = [garbage_frames, abandoned_handshakes, half_sent_frames, never_reads, slow_reader, over_quota_email,
       hostile_fields, forged_tokens, ops_slowloris]


def _demoted(abuser, *args):
    """Runs `abuser` (this thread only) under SCHED_IDLE: it gets a core only when nothing
    else wants it. Attackers run on machines of their own; on a shared two-core test
    machine their Python would otherwise take the CPU the daemon and the well-behaved
    client need, and the figure would measure the kernel's sharing of a core, not the
    daemon's. The daemon still does all the work they cause (Scripts/hostile_probe.py
    shows the same daemon CPU and attack count either way). `ABUSE_SCHED=nice` runs them
    at nice 19 instead, which wakes them ahead of the measured client now and then."""
    try:
        if os.environ.get("ABUSE_SCHED") == "nice":
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        else:
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_IDLE, os.sched_param(0))
    except OSError:
        pass
    abuser(*args)


def well_behaved(cli, daemon, seconds):
    """The client measured beside the abusers (the hostile suite and Scripts/hostile_probe.py):
    VerifyIdToken with check_revoked at 200 calls/s on 2 connections, open loop, through
    the CLI at `cli`. Returns its `--json` report."""
    result = subprocess.run(
        [cli, "bench", "verify", "--check-revoked", "--rate", "200", "--connections", "2", "--seconds",
         str(seconds), "--accounts", "32", "--json", "--allow-failures", "--data-dir", daemon.dir,
         # No RSA measurement of its own: it would burn a core beside the abusers.
         "--rsa-signs-per-second", "1"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def start(daemon, pb, abusers=ALL):
    """Starts each abuser on a thread of its own; returns (stop event, threads, tally)."""
    stop = threading.Event()
    tally = Tally()
    threads = [threading.Thread(target=_demoted, args=(a, daemon, pb, stop, tally), daemon=True) for a in abusers]
    for t in threads:
        t.start()
    return stop, threads, tally
