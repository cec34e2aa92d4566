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


def _still_open(held):
    """The sockets of `held` the server has not closed yet; the others are closed here."""
    alive = []
    for sock in held:
        sock.setblocking(False)
        try:
            if sock.recv(4096) == b"":
                sock.close()
                continue
        except (BlockingIOError, ssl.SSLWantReadError):
            pass
        except OSError:  # ssl.SSLError is an OSError
            sock.close()
            continue
        alive.append(sock)
    return alive


def _repeat(stop, tally, label, pause, attempt, errors=(OSError, ssl.SSLError)):
    """Runs `attempt` until `stop`, `pause` seconds apart, counting each as `label`
    whether the server answered it or cut it off (one of `errors`)."""
    while not stop.is_set():
        try:
            attempt()
        except errors:
            pass
        tally.add(label)
        stop.wait(pause)


def garbage_frames(daemon, pb, stop, tally):
    """Connections that send a frame length over the limit, a zero length, or junk."""
    def attempt():
        sock = _tls(daemon, "127.0.0.2")
        sock.sendall(random.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x00\x00\x00\x05junk!"]))
        sock.settimeout(5)
        while sock.recv(4096):
            pass
        sock.close()
    _repeat(stop, tally, "garbage frame", 0.05, attempt)


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
        held = _still_open(held)
    for s in held:
        s.close()


def half_sent_frames(daemon, pb, stop, tally):
    """A frame header promising 1 KiB, then a few bytes, then silence."""
    def attempt():
        sock = _tls(daemon, "127.0.0.3")
        sock.sendall(struct.pack(">I", 1024) + b"\x0a\x05")
        sock.settimeout(40)
        while sock.recv(4096):
            pass
        sock.close()
    _repeat(stop, tally, "half-sent frame", 0.2, attempt)


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

    def attempt():
        nonlocal n
        sock = _tls(daemon, "127.0.0.6", timeout=30)
        for i in range(64):
            n += 1
            request = pb.account.SignUpRequest(email_password=pb.account.EmailPasswordSignUp(
                email=f"abuse-{n}-{random.randrange(1 << 30)}@example.com", password="password123"))
            send_frame(sock, call_frame(pb, i + 1, ACCOUNT + "SignUp", request.SerializeToString(), _api(daemon)))
        for _ in range(64):
            read_frame(sock, pb)
        sock.close()
    _repeat(stop, tally, "over-quota email sign-ups x64", 0.5, attempt, (OSError, EOFError, ssl.SSLError))


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
    def attempt():
        sock = _tls(daemon, "127.0.0.7")
        for i, method in enumerate(methods):
            send_frame(sock, call_frame(pb, i + 1, method, random.choice(payloads), _api(daemon)))
            read_frame(sock, pb)
        sock.close()
    _repeat(stop, tally, "hostile fields x4", 0.2, attempt, (OSError, EOFError, ssl.SSLError))


def forged_tokens(daemon, pb, stop, tally):
    """VerifyIdToken with alg none, HS256, a foreign kid, junk and a 20,000-byte token."""
    tokens = ["eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "a.b.c", "x" * 20000,
              "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
              "eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ.eyJzdWIiOiJ4In0.c2ln"]
    def attempt():
        sock = _tls(daemon, "127.0.0.8")
        for i in range(50):
            call(sock, pb, "/anonauth.v1.TokenService/VerifyIdToken",
                 pb.token.VerifyIdTokenRequest(id_token=random.choice(tokens)), None, _api(daemon), i + 1)
        sock.close()
    _repeat(stop, tally, "forged tokens x50", 0.2, attempt, (OSError, EOFError, ssl.SSLError))


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


# The attacks of the exposure review (the exposure review, docs/security.md): each from one source address of its own,
# with or without the public API key, as described there. Scripts/hostile_probe.py runs
# each beside the well-behaved client and prints that client's p99 and the daemon's peak
# memory; test_hostile_exposure.py checks each one's bystander and memory in `make test`.

MAX_FRAME = 4 << 20
# Field 15, varint 0: two bytes that no AnonAuth message knows. A maximum-size frame of
# them was about 2 million fields that protobuf-c allocated one by one.
UNKNOWN_PAIR = b"\x78\x00"


def _unknown_fields(size):
    return UNKNOWN_PAIR * (size // 2)


def _admin(daemon):
    return {"authorization": "Bearer " + daemon.client_json["admin_key"]}


def _for_ip(daemon, ip):
    """API key, admin key and a trusted end-user IP: set-up calls the attack's own per-IP
    quota does not see."""
    return {**_api(daemon), **_admin(daemon), "x-end-user-ip": ip}


def _drain(sock, stop, seconds):
    """Reads whatever the daemon sends for up to `seconds` (a GoAway, replies) until it closes."""
    sock.settimeout(0.5)
    ends = time.monotonic() + seconds
    while time.monotonic() < ends and not stop.is_set():
        try:
            if not sock.recv(1 << 16):
                return
        except socket.timeout:
            continue


def unknown_field_frames(daemon, pb, stop, tally):
    """No API key: maximum-size frames of two-byte unknown fields on four connections."""
    frame = struct.pack(">I", MAX_FRAME) + _unknown_fields(MAX_FRAME)
    while not stop.is_set():
        socks = []
        for _ in range(4):
            try:
                sock = _tls(daemon, "127.0.3.1")
                sock.sendall(frame)
                socks.append(sock)
                tally.add("unknown-field frame")
            except (OSError, ssl.SSLError):
                tally.add("unknown-field frame refused")
        for sock in socks:
            try:
                _drain(sock, stop, 5)
            except (OSError, ssl.SSLError):
                pass
            sock.close()
        stop.wait(0.1)


def _signup_frame(pb, daemon, call_id, payload, timeout_ms=0):
    body = call_frame(pb, call_id, ACCOUNT + "SignUp", payload, _api(daemon), timeout_ms)
    return struct.pack(">I", len(body)) + body


def unknown_field_payloads(daemon, pb, stop, tally):
    """The public API key: sign-ups whose payload is all two-byte unknown fields, 64 at a
    time, each as large as a frame may be before an admin key (64 KiB; a larger one is
    refused unread)."""
    frames = b"".join(_signup_frame(pb, daemon, n + 1, _unknown_fields(65_000)) for n in range(64))
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.3.2", timeout=30)
            tally.add("unknown-field payloads x64")
            sock.sendall(frames)
            for _ in range(64):
                read_frame(sock, pb)
            sock.close()
        except (OSError, EOFError, ssl.SSLError):
            tally.add("unknown-field payloads cut off")
        stop.wait(0.1)


def expired_calls(daemon, pb, stop, tally):
    """The public API key: 150 sign-ups with `timeout_ms=1` on one connection, every other
    one with a payload of 60,000 bytes of unknown fields (under the 64 KiB a connection
    may send before an admin key), as fast as they go out."""
    heavy = _unknown_fields(60_000)
    light = pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()).SerializeToString()
    n = 0
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.3.3", timeout=30)
            blob = b""
            for i in range(150):
                n += 1
                blob += _signup_frame(pb, daemon, n, heavy if i % 2 else light, timeout_ms=1)
            tally.add("expired sign-ups x150")
            sock.sendall(blob)
            _drain(sock, stop, 2)
            sock.close()
        except (OSError, ssl.SSLError):
            tally.add("expired sign-ups cut off")
        stop.wait(0.1)


def held_frame_bytes(daemon, pb, stop, tally, count=256):
    """No API key: connections that each send all but the last byte of a frame and wait,
    renewed as the daemon closes them. Every other one announces a maximum-size frame
    (refused before an admin key); the rest the largest frame allowed before one."""
    held = []
    small = 64 << 10
    bodies = [struct.pack(">I", size) + b"\x0a" + bytes(size - 2) for size in (MAX_FRAME, small)]
    attempts = 0
    while not stop.is_set():
        refused = 0  # in a row: the maximum-size frames are each refused once
        while len(held) < count and refused < 8 and not stop.is_set():
            attempts += 1
            sock = None
            try:
                sock = _tls(daemon, "127.0.3.4", timeout=2)
                sock.sendall(bodies[attempts % 2])
                held.append(sock)
                tally.add("held frame")
                refused = 0
            except (OSError, ssl.SSLError):
                tally.add("held frame refused")
                refused += 1
                if sock is not None:
                    sock.close()
        stop.wait(1)
        held = _still_open(held)
    for sock in held:
        sock.close()


def _password_accounts(daemon, pb, count, tag):
    """`count` email/password accounts made through the admin key, each from an end-user
    IP of its own; returns their (email, password)."""
    accounts = []
    sock = daemon.connect()
    try:
        for i in range(count):
            email = f"{tag}-{i}-{random.randrange(1 << 30)}@example.com"
            request = pb.account.SignUpRequest(
                email_password=pb.account.EmailPasswordSignUp(email=email, password="password123"))
            status, _ = call(sock, pb, ACCOUNT + "SignUp", request, None, _for_ip(daemon, f"10.200.{i // 250}.{i % 250 + 1}"))
            if status.code == 0:
                accounts.append((email, "password123"))
    finally:
        sock.close()
    return accounts


def _send_and_tally(sock, pb, blob, count, tally, label):
    """Sends pre-built frames at once, counts each of the `count` replies as `label` and
    its reason, and closes the connection."""
    sock.sendall(blob)
    for _ in range(count):
        frame = read_frame(sock, pb)
        tally.add(label + " " + (frame.reply.status.reason or "OK"))
    sock.close()


def password_sign_ins(daemon, pb, stop, tally):
    """One address with ten accounts signs in successfully over and over, 32 calls at a
    time on each of four connections: the password pool's first-come-first-served."""
    accounts = _password_accounts(daemon, pb, 10, "pool")
    frames = b""
    for i in range(32):
        email, password = accounts[i % len(accounts)]
        body = call_frame(pb, i + 1, ACCOUNT + "SignInWithPassword",
                          pb.account.SignInWithPasswordRequest(email=email, password=password).SerializeToString(),
                          _api(daemon))
        frames += struct.pack(">I", len(body)) + body
    while not stop.is_set():
        def one():
            try:
                sock = _tls(daemon, "127.0.3.5", timeout=30)
                _send_and_tally(sock, pb, frames, 32, tally, "password sign-in")
            except (OSError, EOFError, ssl.SSLError):
                pass
        workers = [threading.Thread(target=one) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()


def refresh_loop(daemon, pb, stop, tally):
    """One anonymous account refreshing in a loop, each rotation followed by replays of
    the token before it inside the grace window: rows written, and tokens re-signed."""
    sock = None
    while not stop.is_set():
        try:
            sock = sock or _tls(daemon, "127.0.3.6", timeout=30)
            status, auth = call(sock, pb, ACCOUNT + "SignUp",
                                pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()),
                                pb.account.AuthResponse, _api(daemon))
            if status.code != 0:
                tally.add("refresh loop sign-up " + status.reason)
                stop.wait(1)
                continue
            previous, token = None, auth.refresh_token
            for _ in range(500):
                if stop.is_set():
                    break
                status, auth = call(sock, pb, ACCOUNT + "RefreshToken", pb.account.RefreshTokenRequest(refresh_token=token),
                                    pb.account.AuthResponse, _api(daemon))
                tally.add("refresh " + (status.reason or "OK"))
                if status.code != 0:
                    break
                previous, token = token, auth.refresh_token
                for _ in range(4):  # replays of the rotated token, inside the grace window
                    status, _ = call(sock, pb, ACCOUNT + "RefreshToken",
                                     pb.account.RefreshTokenRequest(refresh_token=previous), None, _api(daemon))
                    tally.add("grace replay " + (status.reason or "OK"))
        except (OSError, EOFError, ssl.SSLError):
            if sock is not None:
                sock.close()
            sock = None
            stop.wait(0.2)
    if sock is not None:
        sock.close()


def email_probes(daemon, pb, stop, tally):
    """One anonymous account links email/password with addresses that exist and that do
    not, and 60 links of one token at once: enumeration around the quota, and hashes
    spent on links that cannot succeed."""
    known = [email for email, _ in _password_accounts(daemon, pb, 5, "probe")]
    n = 0
    while not stop.is_set():
        try:
            sock = _tls(daemon, "127.0.3.7", timeout=30)
            status, auth = call(sock, pb, ACCOUNT + "SignUp",
                                pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()),
                                pb.account.AuthResponse, _api(daemon))
            if status.code != 0:
                tally.add("email probe sign-up " + status.reason)
                sock.close()
                stop.wait(1)
                continue
            blob = b""
            for i in range(60):
                n += 1
                email = known[i % len(known)] if i % 2 else f"probe-{n}-{random.randrange(1 << 30)}@example.com"
                request = pb.account.LinkWithCredentialRequest(
                    id_token=auth.id_token,
                    credential=pb.account.Credential(provider_id="password", email=email, password="password123"))
                body = call_frame(pb, i + 1, ACCOUNT + "LinkWithCredential", request.SerializeToString(), _api(daemon))
                blob += struct.pack(">I", len(body)) + body
            _send_and_tally(sock, pb, blob, 60, tally, "link")
        except (OSError, EOFError, ssl.SSLError):
            pass
        stop.wait(0.2)


EXPOSURE = [unknown_field_frames, unknown_field_payloads, expired_calls, held_frame_bytes, password_sign_ins,
            refresh_loop, email_probes]


ALL = [garbage_frames, abandoned_handshakes, half_sent_frames, never_reads, slow_reader, over_quota_email,
       hostile_fields, forged_tokens, ops_slowloris, *EXPOSURE]


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


# What the well-behaved client does: VerifyIdToken with check_revoked at 200 calls/s, or
# password sign-ins of its own account once a second (the bystander of the password
# pool: a person signing in, well inside the per-address password rate of 2 a second).
BYSTANDERS = {
    "verify": ["verify", "--check-revoked", "--rate", "200", "--accounts", "32"],
    "password": ["password", "--rate", "1"],
}


def well_behaved(cli, daemon, seconds, kind="verify"):
    """The client measured beside the abusers (the hostile suite and Scripts/hostile_probe.py),
    open loop on 2 connections from 127.0.0.1, through the CLI at `cli`. Returns its
    `--json` report."""
    result = subprocess.run(
        [cli, "bench", *BYSTANDERS[kind], "--connections", "2", "--seconds", str(seconds), "--json",
         "--allow-failures", "--data-dir", daemon.dir,
         # No RSA measurement of its own: it would burn a core beside the abusers.
         "--rsa-signs-per-second", "1"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def bystander_of(abuser):
    """The well-behaved client that shows what `abuser` takes from others."""
    return "password" if abuser is password_sign_ins else "verify"


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class PeakRSS:
    """Samples a process's resident bytes every 50 ms on a thread of its own until `stop`;
    `peak` is the largest sample."""

    def __init__(self, pid):
        self.pid, self.peak, self.done = pid, rss_bytes(pid), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.wait(0.05):
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except OSError:
                return

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


def run_beside(daemon, pb, abusers, measure, settle=1.0):
    """Starts `abusers`, waits for their first answer, lets them go on for `settle` more
    seconds, runs `measure()` and stops them, whatever happens. Returns what `measure`
    returned, the daemon's peak resident bytes meanwhile, and the abusers' tally."""
    peak = PeakRSS(daemon.proc.pid)
    stop, threads, tally = start(daemon, pb, abusers)
    try:
        # An abuser's set-up (accounts, connections) may outlast `settle` and the whole
        # measure on a busy machine: the attack has begun once something came back. The
        # 120 s only bounds a hang; the callers assert the tally.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and any(t.is_alive() for t in threads):
            with tally.lock:
                if sum(tally.counts.values()) > 0:
                    break
            time.sleep(0.05)
        time.sleep(settle)
        result = measure()
        assert daemon.proc.poll() is None, "the daemon died under attack"
    finally:
        peak_rss = peak.stop()
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert all(not t.is_alive() for t in threads)
    return result, peak_rss, tally


def start(daemon, pb, abusers=ALL):
    """Starts each abuser on a thread of its own; returns (stop event, threads, tally)."""
    stop = threading.Event()
    tally = Tally()
    threads = [threading.Thread(target=_demoted, args=(a, daemon, pb, stop, tally), daemon=True) for a in abusers]
    for t in threads:
        t.start()
    return stop, threads, tally
