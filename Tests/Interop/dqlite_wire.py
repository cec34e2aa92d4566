"""A few dozen lines of dqlite's client protocol in Python, independent of the Swift
client: the cluster tests use it to find the leader, hand leadership over and count rows
on one node directly, and it cross-checks that the Swift side speaks the protocol as
dqlite documents it."""

import socket
import struct

LEADER, OPEN, QUERY_SQL, CLUSTER, TRANSFER = 0, 3, 9, 16, 17
FAILURE, SERVER, SERVERS, DB, ROWS, EMPTY = 0, 1, 3, 4, 7, 8


def _text(s):
    raw = s.encode() + b"\0"
    return raw + b"\0" * (-len(raw) % 8)


def _read_text(body, offset):
    end = body.index(b"\0", offset)
    return body[offset:end].decode(), end + 1 + (-(end + 1) % 8)


# The cluster port speaks mutual TLS unless the daemons run --cluster-insecure: the
# harness sets this to a client context with a cluster certificate (cluster.py).
TLS = None


class DqliteError(Exception):
    pass


class Node:
    """One connection to one node."""

    def __init__(self, address, timeout=2.0, tls=None):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        tls = tls or TLS
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock)
        self.sock.sendall(struct.pack("<Q", 1))  # protocol version 1

    def close(self):
        self.sock.close()

    def _recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise DqliteError("closed")
            data += chunk
        return data

    def request(self, kind, body, expect):
        self.sock.sendall(struct.pack("<IBBH", len(body) // 8, kind, 0, 0) + body)
        words, rtype, _, _ = struct.unpack("<IBBH", self._recv(8))
        reply = self._recv(words * 8)
        if rtype == FAILURE:
            code, = struct.unpack_from("<Q", reply)
            raise DqliteError(f"failure {code}: {_read_text(reply, 8)[0]}")
        if rtype != expect:
            raise DqliteError(f"response type {rtype}, expected {expect}")
        return reply

    def leader(self):
        reply = self.request(LEADER, struct.pack("<Q", 0), SERVER)
        node_id, = struct.unpack_from("<Q", reply)
        return node_id, _read_text(reply, 8)[0]

    def cluster(self):
        reply = self.request(CLUSTER, struct.pack("<Q", 1), SERVERS)
        count, = struct.unpack_from("<Q", reply)
        offset, nodes = 8, []
        for _ in range(count):
            node_id, = struct.unpack_from("<Q", reply, offset)
            address, offset = _read_text(reply, offset + 8)
            role, = struct.unpack_from("<Q", reply, offset)
            offset += 8
            nodes.append((node_id, address, role))
        return nodes

    def transfer(self, node_id):
        self.request(TRANSFER, struct.pack("<Q", node_id), EMPTY)

    def count(self, database, table):
        """SELECT count(*) on this node, which must lead (only the leader runs queries)."""
        reply = self.request(OPEN, _text(database) + struct.pack("<Q", 0) + _text(""), DB)
        db_id, = struct.unpack_from("<I", reply)
        reply = self.request(QUERY_SQL, struct.pack("<Q", db_id) + _text(f"SELECT count(*) FROM {table}"), ROWS)
        columns, = struct.unpack_from("<Q", reply)
        assert columns == 1
        _, offset = _read_text(reply, 8)
        kind = reply[offset] & 0x0F
        assert kind == 1, f"value type {kind}"
        value, = struct.unpack_from("<q", reply, offset + 8)
        return value


def find_leader(addresses):
    """(id, address) of the leader as some node in `addresses` knows it, or None."""
    for address in addresses:
        try:
            node = Node(address)
        except OSError:
            continue
        try:
            node_id, leader = node.leader()
            if leader:
                return node_id, leader
        except (OSError, DqliteError):
            pass
        finally:
            node.close()
    return None
