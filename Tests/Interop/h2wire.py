"""HTTP/2 frames as raw bytes, for the hostile HTTP/2 suite: what hyper-h2 refuses to send
(a header block that never ends, a window past 2^31-1, a bad preface, hand-made HPACK)
is built here, and everything the server sends back is read here, frame by frame,
whatever state a well-behaved client library would insist on. Frame layout and codes are
RFC 9113 §4.1, §6 and §7; HPACK representations RFC 7541 §6."""

import socket
import ssl
import struct
import time
from collections import namedtuple

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Frame types (RFC 9113 §6).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)

# Flags.
END_STREAM = 0x1
ACK = 0x1
END_HEADERS = 0x4

# SETTINGS identifiers.
HEADER_TABLE_SIZE = 0x1
ENABLE_PUSH = 0x2
MAX_CONCURRENT_STREAMS = 0x3
INITIAL_WINDOW_SIZE = 0x4
MAX_FRAME_SIZE = 0x5
MAX_HEADER_LIST_SIZE = 0x6

# Error codes (RFC 9113 §7).
NO_ERROR = 0x0
PROTOCOL_ERROR = 0x1
INTERNAL_ERROR = 0x2
FLOW_CONTROL_ERROR = 0x3
STREAM_CLOSED = 0x5
FRAME_SIZE_ERROR = 0x6
REFUSED_STREAM = 0x7
CANCEL = 0x8
COMPRESSION_ERROR = 0x9
ENHANCE_YOUR_CALM = 0xB

ERROR_NAMES = {
    0x0: "NO_ERROR", 0x1: "PROTOCOL_ERROR", 0x2: "INTERNAL_ERROR", 0x3: "FLOW_CONTROL_ERROR",
    0x4: "SETTINGS_TIMEOUT", 0x5: "STREAM_CLOSED", 0x6: "FRAME_SIZE_ERROR", 0x7: "REFUSED_STREAM",
    0x8: "CANCEL", 0x9: "COMPRESSION_ERROR", 0xA: "CONNECT_ERROR", 0xB: "ENHANCE_YOUR_CALM",
    0xC: "INADEQUATE_SECURITY", 0xD: "HTTP_1_1_REQUIRED",
}

HEALTH_CHECK = "/anonauth.v1.HealthService/Check"

# A frame read from the server; `fields` is the decoded header block of a HEADERS frame.
Frame = namedtuple("Frame", "kind flags stream payload fields")


def frame(kind, flags, stream, payload=b""):
    """One frame: 24-bit length, type, flags, 31-bit stream id, payload."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(pairs=(), ack=False):
    return frame(SETTINGS, ACK if ack else 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def ping(data=b"\0" * 8, ack=False):
    return frame(PING, ACK if ack else 0, 0, data)


def rst_stream(stream, code=CANCEL):
    return frame(RST_STREAM, 0, stream, struct.pack(">I", code))


def window_update(stream, increment):
    return frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", increment))


def headers(stream, block, end_stream=False, end_headers=True):
    return frame(HEADERS, (END_STREAM if end_stream else 0) | (END_HEADERS if end_headers else 0), stream, block)


def continuation(stream, block, end_headers=False):
    return frame(CONTINUATION, END_HEADERS if end_headers else 0, stream, block)


def data(stream, payload, end_stream=False):
    return frame(DATA, END_STREAM if end_stream else 0, stream, payload)


def grpc_message(body=b""):
    """A gRPC length-prefixed message: not compressed, 4-byte length, the bytes."""
    return b"\0" + struct.pack(">I", len(body)) + body


def grpc_request_headers(path=HEALTH_CHECK, extra=()):
    return [(":method", "POST"), (":scheme", "https"), (":path", path), (":authority", "localhost"),
            ("content-type", "application/grpc"), ("te", "trailers"), *extra]


# HPACK by hand (RFC 7541 §6): what an encoder library would never choose to send.

def hpack_int(value, prefix_bits, first_byte_flags):
    """An HPACK integer with an N-bit prefix (RFC 7541 §5.1)."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte_flags | value])
    out = [first_byte_flags | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_string(raw):
    """A string literal without Huffman coding."""
    return hpack_int(len(raw), 7, 0) + raw


def hpack_literal_indexed(name, value):
    """A literal field with incremental indexing and a new name: it enters the dynamic
    table at index 62."""
    return b"\x40" + hpack_string(name) + hpack_string(value)


def hpack_indexed(index):
    """A field by its index in the static (1-61) or dynamic (62 on) table: one byte for
    62, however long the field it names."""
    return hpack_int(index, 7, 0x80)


def encode(fields):
    """A header block from a fresh encoder (one per connection: HPACK state is per
    connection, and these helpers send one block per fresh encoder's connection)."""
    return hpack.Encoder().encode(fields)


class Connection:
    """A TLS connection that chose ALPN h2, spoken by hand: `send` raw frames, `frames`
    reads what the server sent until a condition, EOF or a timeout."""

    def __init__(self, daemon, source=None, preface=True, server_settings_ack=True, timeout=10, rcvbuf=None):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            # A small receive buffer: what the server sends and the test does not read
            # stays in the server, not in the kernel.
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout)
        if source:
            raw.bind((source, 0))
        raw.connect(daemon.rpc)
        self.sock = daemon.context(alpn=("h2",)).wrap_socket(raw, server_hostname="localhost")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.buf = b""
        self.closed = False
        self.received = []
        self.decoder = hpack.Decoder()
        if preface:
            self.send(PREFACE + settings())
        self.server_settings_ack = server_settings_ack

    def send(self, raw):
        self.sock.sendall(raw)

    def try_send(self, raw):
        """Sends `raw`; False when the server has closed or reset the connection."""
        try:
            self.sock.sendall(raw)
            return True
        except (OSError, ssl.SSLError):
            return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self, deadline):
        self.sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = self.sock.recv(65536)
        except (socket.timeout, TimeoutError, ssl.SSLWantReadError):
            return False
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError):
            chunk = b""
        if not chunk:
            self.closed = True
            return False
        self.buf += chunk
        return True

    def _parse(self):
        if len(self.buf) < 9:
            return None
        length = struct.unpack(">I", b"\0" + self.buf[:3])[0]
        if len(self.buf) < 9 + length:
            return None
        kind, flags = self.buf[3], self.buf[4]
        stream = struct.unpack(">I", self.buf[5:9])[0] & 0x7FFFFFFF
        payload = self.buf[9:9 + length]
        self.buf = self.buf[9 + length:]
        fields = self._header_fields(payload, flags) if kind == HEADERS else None
        return Frame(kind, flags, stream, payload, fields)

    def next_frame(self, deadline):
        """The next whole frame, or None at EOF or the deadline. The server's SETTINGS is
        acknowledged as it comes, as RFC 9113 asks, unless the test says otherwise; every
        header block is decoded as it comes, so HPACK state stays in step."""
        while True:
            got = self._parse()
            if got is not None:
                self.received.append(got)
                if got.kind == SETTINGS and not got.flags & ACK and self.server_settings_ack:
                    self.try_send(settings(ack=True))
                return got
            if self.closed or time.monotonic() >= deadline:
                return None
            self._fill(deadline)

    def frames(self, until=lambda f: False, seconds=10):
        """Frames read until `until(frame)` is true (that frame included), EOF, or
        `seconds`."""
        deadline = time.monotonic() + seconds
        out = []
        while True:
            got = self.next_frame(deadline)
            if got is None:
                return out
            out.append(got)
            if until(got):
                return out

    def goaway(self, seconds=10):
        """The server's GOAWAY as (last stream id, error code, debug data), or None if the
        connection ended (or `seconds` passed) without one."""
        for f in self.frames(lambda f: f.kind == GOAWAY, seconds):
            if f.kind == GOAWAY:
                last, code = struct.unpack(">II", f.payload[:8])
                return last & 0x7FFFFFFF, code, f.payload[8:]
        return None

    def wait_closed(self, seconds=10):
        """Reads and drops frames until the server closes; True if it did within
        `seconds`."""
        deadline = time.monotonic() + seconds
        while not self.closed and time.monotonic() < deadline:
            self.next_frame(deadline)
        return self.closed

    def _header_fields(self, payload, flags):
        """A HEADERS payload's block, decoded (the server under test sends no CONTINUATION
        for its small blocks)."""
        if flags & 0x8:
            pad = payload[0]
            payload = payload[1:len(payload) - pad]
        if flags & 0x20:
            payload = payload[5:]
        return dict((_text(k), _text(v)) for k, v in self.decoder.decode(payload))


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def error_name(code):
    return ERROR_NAMES.get(code, hex(code))
