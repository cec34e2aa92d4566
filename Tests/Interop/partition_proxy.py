"""A TCP proxy the test controls in front of each node's cluster port, to cut links
between nodes instead of stopping processes.

Each node of a proxied cluster has a loopback address of its own (127.0.0.11, .12, ...;
Linux routes all of 127/8 to lo), listens on one port of it and advertises its proxy, on
another port of the same address. The daemon's outgoing Raft and store connections leave
from its listen address (the dialer binds it: `OutgoingSource`), so a proxy knows which
node each connection comes from, and a link i -> j is cut at j's proxy by i's source
address. The test's own connections come from 127.0.0.1 and are never cut.

Per source the proxy is `open` (bytes forwarded), `cut` (existing connections reset, new
ones reset at once) or `blackhole` (connections accepted, nothing read or forwarded until
healed, as a network that drops every packet while TCP keeps retrying). It only forwards
bytes, so it works with and without TLS between nodes."""

import random
import select
import socket
import struct
import threading
import time

OPEN, CUT, BLACKHOLE = "open", "cut", "blackhole"


def _reset(sock):
    """Closes with a RST, as a link that went away does to its peer's next send."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class NodeProxy:
    """Listens on `listen` (host, port) and forwards each connection to `target`."""

    def __init__(self, listen, target):
        self.target = target
        self.modes = {}
        self.pairs = set()
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.closed = False
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(listen)
        self.server.listen(128)
        threading.Thread(target=self._accept, daemon=True).start()

    def mode(self, source):
        with self.lock:
            return self.modes.get(source, OPEN)

    def set(self, source, mode):
        """Sets the link from `source` (a host); a cut resets its open connections."""
        with self.lock:
            self.modes[source] = mode
            doomed = [p for p in self.pairs if p[0] == source] if mode == CUT else []
            self.changed.notify_all()
        for _, client, upstream in doomed:
            for sock in (client, upstream):
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    def heal(self):
        with self.lock:
            self.modes.clear()
            self.changed.notify_all()

    def close(self):
        self.closed = True
        self.heal()
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()

    def _accept(self):
        while not self.closed:
            try:
                client, (source, _) = self.server.accept()
            except OSError:
                return
            if self.mode(source) == CUT:
                _reset(client)
                continue
            threading.Thread(target=self._pump, args=(client, source), daemon=True).start()

    def _wait_while_blackholed(self, source):
        """Holds a link while it is blackholed; returns its mode after."""
        with self.lock:
            while self.modes.get(source, OPEN) == BLACKHOLE and not self.closed:
                self.changed.wait(0.5)
            return self.modes.get(source, OPEN)

    def _pump(self, client, source):
        upstream = None
        entry = None
        try:
            if self._wait_while_blackholed(source) == CUT:
                return
            upstream = socket.create_connection(self.target, timeout=10)
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            entry = (source, client, upstream)
            with self.lock:
                self.pairs.add(entry)
            other = {client: upstream, upstream: client}
            live = [client, upstream]
            while live:
                mode = self._wait_while_blackholed(source)
                if mode == CUT or self.closed:
                    return
                ready, _, _ = select.select(live, [], [], 0.2)
                for sock in ready:
                    if self.mode(source) != OPEN:
                        break  # cut or blackholed since select: forward nothing more
                    data = sock.recv(65536)
                    if not data:
                        live.remove(sock)
                        try:
                            other[sock].shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        continue
                    other[sock].sendall(data)
        except OSError:
            pass
        finally:
            if entry is not None:
                with self.lock:
                    self.pairs.discard(entry)
            _reset(client)
            if upstream is not None:
                _reset(upstream)


class Network:
    """The proxies of a cluster's nodes, by node id, and the links between them.
    `hosts[i]` is node i's own loopback address (its connections' source)."""

    def __init__(self, hosts, proxies):
        self.hosts, self.proxies = hosts, proxies

    def cut(self, i, j, mode=CUT):
        """Cuts the link between nodes i and j, both ways."""
        self.proxies[j].set(self.hosts[i], mode)
        self.proxies[i].set(self.hosts[j], mode)

    def isolate(self, i, mode=CUT):
        """Cuts node i from every other node (its clients still reach it)."""
        for j in self.proxies:
            if j != i:
                self.cut(i, j, mode)

    def heal(self):
        for proxy in self.proxies.values():
            proxy.heal()

    def close(self):
        for proxy in self.proxies.values():
            proxy.close()


class Flapper:
    """Isolates a random node, heals, again, on a schedule, until stopped: links that go
    and come back, cut and blackholed in turn. Records (node, mode, when) per flap."""

    def __init__(self, network, cut_seconds=2.0, healed_seconds=3.0, modes=(CUT, BLACKHOLE)):
        self.network = network
        self.cut_seconds, self.healed_seconds = cut_seconds, healed_seconds
        self.modes = modes
        self.done = threading.Event()
        self.history = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.done.set()
        self.thread.join(timeout=30)
        self.network.heal()

    def _run(self):
        while not self.done.is_set():
            node = random.choice(sorted(self.network.proxies))
            mode = self.modes[len(self.history) % len(self.modes)]
            self.history.append((node, mode, time.monotonic()))
            self.network.isolate(node, mode)
            self.done.wait(self.cut_seconds)
            self.network.heal()
            self.done.wait(self.healed_seconds)
