"""Three real daemons on loopback ports, each with its own data dir and dqlite node, one
replicated store: the harness of test_cluster.py and Scripts/cluster_proof.py. Their
clients retry a call that failed for want of a leader or a node, on the next node, as the
docs/replicated-store.md asks of clients of a cluster."""

import os
import pathlib
import random
import socket
import sys
import tempfile
import threading
import time

import cluster_certs
import dqlite_wire
from conftest import Daemon, call
from partition_proxy import Network, NodeProxy

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Scripts"))
from bench import ONE_SOURCE_FLAGS  # noqa: E402

PROJECT = "demo-project"
ACCOUNT = "/anonauth.v1.AccountService/"
ADMIN = "/anonauth.v1.AdminService/"
UNAVAILABLE = 14


_handed_out = set()


def free_port(host="127.0.0.1"):
    """A free loopback port below the kernel's ephemeral range: a node restarted on its
    address needs the port back, and one from that range can be taken meanwhile as an
    outgoing connection's source port, even by the other nodes' own reconnects to it (a
    connection to itself). Ports outside the range are never picked as sources. Each
    port is handed out once: two nodes given one port both bind it (libdqlite sets
    SO_REUSEADDR) and the second one's start then waits for ever."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = random.randrange(10000, max(10001, low))
        if port in _handed_out:
            continue
        _handed_out.add(port)
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port below {low}")


def split(address):
    host, port = address.rsplit(":", 1)
    return host, int(port)


class Cluster:
    """Nodes 1..3; node 1 bootstraps and the others join it. The cluster port speaks
    mutual TLS with certificates from a CA of the test's own (tls="files"); tls="dev"
    leaves them to --dev, tls="insecure" runs --cluster-insecure."""

    def __init__(self, size=3, extra=(), tls="files", listen=None, proxied=False):
        """proxied: each node on its own loopback address behind a proxy the test
        controls (`self.network`, partition_proxy.py), which it advertises."""
        self.root = tempfile.mkdtemp(prefix="anonauth-cluster-")
        self.tls = tls
        if tls == "files":
            self.authority = cluster_certs.Authority(os.path.join(self.root, "cluster-ca"))
            self.node_certs = {}
            cert, key = self.authority.node("test-client")
            dqlite_wire.TLS = cluster_certs.client_context(self.authority.ca_file, cert, key)
        else:
            dqlite_wire.TLS = None
        self.master_key = os.path.join(self.root, "master.key")
        with open(self.master_key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(self.master_key, 0o600)
        self.extra = list(extra)
        # Node i listens on listen[i] and advertises addresses[i] (a test's proxy in front).
        self.listen, self.network = dict(listen or {}), None
        if proxied:
            hosts = {i: f"127.0.0.{10 + i}" for i in range(1, size + 1)}
            self.listen = {i: f"{h}:{free_port(h)}" for i, h in hosts.items()}
            self.addresses = {i: f"{h}:{free_port(h)}" for i, h in hosts.items()}
            self.network = Network(hosts, {
                i: NodeProxy(split(self.addresses[i]), split(self.listen[i])) for i in hosts})
        else:
            self.addresses = {i: f"127.0.0.1:{free_port()}" for i in range(1, size + 1)}
        self.dirs = {i: os.path.join(self.root, f"node-{i}") for i in self.addresses}
        self.daemons = {}
        for i in self.addresses:
            self.start(i)

    def start(self, i):
        os.makedirs(self.dirs[i], mode=0o700, exist_ok=True)
        # The daemon's log is rewritten at each start: the earlier run's is kept beside it.
        log = os.path.join(self.root, os.path.basename(self.dirs[i]) + ".log")
        if os.path.exists(log):
            os.replace(log, f"{log}.{int(time.time() * 1000)}")
        others = [a for j, a in self.addresses.items() if j != i]
        self.daemons[i] = Daemon(data_dir=self.dirs[i], extra=[
            "--master-key-file", self.master_key, "--cluster-id", str(i),
            "--cluster-listen", self.listen.get(i, self.addresses[i]), "--cluster-advertise", self.addresses[i],
            "--cluster-join", ",".join(others), *self.tls_flags(i),
            # The load comes from one address: what is measured is the store, not admission.
            *ONE_SOURCE_FLAGS, *self.extra])
        if self.tls == "dev" and dqlite_wire.TLS is None:
            # --dev wrote its cluster CA and node certificate: the harness's client uses them.
            tls_dir = os.path.join(self.dirs[i], "dev-cluster-tls")
            dqlite_wire.TLS = cluster_certs.client_context(
                os.path.join(tls_dir, "ca.crt"), os.path.join(tls_dir, "node.crt"), os.path.join(tls_dir, "node.key"))
        return self.daemons[i]

    def tls_flags(self, i):
        """The cluster TLS flags node i starts with."""
        if self.tls == "insecure":
            return ["--cluster-insecure"]
        if self.tls != "files":
            return []
        if i not in self.node_certs:
            self.node_certs[i] = self.authority.node(f"node-{i}")
        cert, key = self.node_certs[i]
        return ["--cluster-ca-file", self.authority.ca_file, "--cluster-cert-file", cert, "--cluster-key-file", key]

    def kill(self, i):
        daemon = self.daemons.pop(i)
        self.killed_rpc = daemon.rpc
        daemon.proc.kill()
        daemon.proc.wait(timeout=10)

    def stop(self, i):
        return self.daemons.pop(i).stop()

    def stop_all(self):
        codes = [self.stop(i) for i in sorted(self.daemons)]
        if self.network:
            self.network.close()
        return codes

    def leader(self, within=15):
        """The id of the node that leads, once one does."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            found = dqlite_wire.find_leader([self.addresses[i] for i in sorted(self.daemons)])
            if found:
                return next(i for i, a in self.addresses.items() if a == found[1])
            time.sleep(0.1)
        raise AssertionError("no leader")

    def lead(self, i):
        """Hands leadership to node i (through the Python dqlite client)."""
        current = self.leader()
        if current != i:
            node = dqlite_wire.Node(self.addresses[current])
            try:
                node.transfer(i)
            finally:
                node.close()

    def accounts_on(self, i):
        """Accounts in node i's own copy: leadership is handed to it first, since only a
        leader answers queries."""
        deadline = time.monotonic() + 20
        while True:
            try:
                self.lead(i)
                node = dqlite_wire.Node(self.addresses[i])
                try:
                    return node.count("anonauth", "accounts")
                finally:
                    node.close()
            except (OSError, dqlite_wire.DqliteError, AssertionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


class RetryingClient:
    """Calls any live node; a call that failed for want of a leader (UNAVAILABLE) or of a
    node (connection lost) is tried again, on the next node for the latter."""

    def __init__(self, cluster, pb, start=0):
        self.cluster, self.pb = cluster, pb
        self.turn = start
        self.sock = None
        self.retries = 0

    def _connect(self):
        ids = sorted(self.cluster.daemons)
        if not ids:
            raise OSError("no daemon runs")
        self.turn += 1
        daemon = self.cluster.daemons[ids[self.turn % len(ids)]]
        self.sock = daemon.connect()
        self.sock.settimeout(15)
        self.api = {"x-api-key": daemon.client_json["api_key"]}
        self.admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def call(self, method, request, response, admin=False, give_up=30):
        """(status, reply). `self.lost` tells afterwards whether an attempt may have been
        processed without its answer arriving (a lost connection, or STORE_UNAVAILABLE from
        a leader lost during the commit)."""
        deadline = time.monotonic() + give_up
        self.lost = False
        while True:
            try:
                if self.sock is None:
                    self._connect()
                status, reply = call(self.sock, self.pb, method, request, response,
                                     metadata=self.admin if admin else self.api)
                if status.code != UNAVAILABLE:
                    return status, reply
                # STORE_UNAVAILABLE: a write cut off when the leader went may have committed.
                self.lost = True
                last = f"{status.reason}: {status.message}"
            except (OSError, EOFError, KeyError, ValueError, AssertionError) as error:
                # A dead node, or a GoAway from a draining one instead of the reply.
                last = repr(error)
                self.lost = self.sock is not None
                self.close()
            if time.monotonic() > deadline:
                raise AssertionError(f"{method} failed for {give_up} s; last: {last}")
            self.retries += 1
            time.sleep(0.05)

    def account(self, method, request, response=None):
        return self.call(ACCOUNT + method, request, response or self.pb.account.AuthResponse)

    def admin_call(self, method, request, response):
        return self.call(ADMIN + method, request, response, admin=True)

    def list_accounts(self):
        """{local_id: email} of every account of the project, all pages of ListAccounts."""
        pb = self.pb
        listed, page = {}, ""
        while True:
            status, reply = self.admin_call("ListAccounts", pb.admin.ListAccountsRequest(
                project_id=PROJECT, page_size=1000, page_token=page), pb.admin.ListAccountsResponse)
            assert status.code == 0, status
            listed.update((a.local_id, a.email) for a in reply.accounts)
            page = reply.next_page_token
            if not page:
                return listed


class Load:
    """Sign-ups, links and refreshes from several clients until stopped; what was
    acknowledged is kept, and when the last write succeeded."""

    def __init__(self, cluster, pb, clients=4):
        self.cluster, self.pb = cluster, pb
        self.lock = threading.Lock()
        self.anonymous, self.email, self.families = [], {}, {}
        self.failures = []
        self.last_write = time.monotonic()
        self.stop = threading.Event()
        self.serial = iter(range(1, 10**9))
        self.tag = os.urandom(4).hex()  # emails unique across loads on one cluster
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(clients)]

    def start(self):
        # The per-IP sign-up quota would stop a load that all comes from 127.0.0.1.
        client = RetryingClient(self.cluster, self.pb)
        config = self.pb.admin.ProjectConfig(project_id=PROJECT, sign_up_quota_per_hour=1_000_000)
        status, _ = client.admin_call("UpdateProjectConfig", self.pb.admin.UpdateProjectConfigRequest(
            config=config, update_mask=["sign_up_quota_per_hour"]), self.pb.admin.ProjectConfig)
        client.close()
        assert status.code == 0, status
        self._wait_for_quota(1_000_000)
        for t in self.threads:
            t.start()

    def _wait_for_quota(self, quota, within=15):
        """Other nodes learn a project change at their next reload (every 2 s): until
        then they count sign-ups against the old quota, and a node cut off from the
        leader keeps the old one until it can reload. The load starts once all serve it."""
        deadline = time.monotonic() + within
        for i in sorted(self.cluster.daemons):
            daemon = self.cluster.daemons[i]
            admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
            while True:
                sock = daemon.connect()
                try:
                    status, config = call(sock, self.pb, ADMIN + "GetProjectConfig",
                                          self.pb.admin.GetProjectConfigRequest(project_id=PROJECT),
                                          self.pb.admin.ProjectConfig, metadata=admin)
                finally:
                    sock.close()
                if status.code == 0 and config.sign_up_quota_per_hour == quota:
                    break
                assert time.monotonic() < deadline, f"node {i} still serves {config}"
                time.sleep(0.1)

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in self.threads)
        assert self.failures == [], self.failures[:3]

    def _acked(self):
        with self.lock:
            self.last_write = time.monotonic()

    def _run(self, n):
        pb = self.pb
        client = RetryingClient(self.cluster, pb, start=n)
        try:
            while not self.stop.is_set():
                with self.lock:
                    k = next(self.serial)
                kind = random.choice(["anonymous", "refresh", "refresh", "link"])
                if kind == "refresh" and not self.families:
                    kind = "anonymous"
                if kind == "anonymous":
                    status, reply = client.account("SignUp", pb.account.SignUpRequest(
                        anonymous=pb.account.AnonymousSignUp()))
                    self._check(status)
                    with self.lock:
                        self.anonymous.append(reply.local_id)
                        self.families[reply.local_id] = reply.refresh_token
                    self._acked()
                elif kind == "refresh":
                    with self.lock:
                        uid = random.choice(sorted(self.families))
                        token = self.families.pop(uid)  # one client at a time per family
                    status, reply = client.account("RefreshToken", pb.account.RefreshTokenRequest(
                        refresh_token=token))
                    self._check(status)
                    with self.lock:
                        self.families[uid] = reply.refresh_token if status.code == 0 else token
                    self._acked()
                else:
                    status, reply = client.account("SignUp", pb.account.SignUpRequest(
                        anonymous=pb.account.AnonymousSignUp()))
                    self._check(status)
                    with self.lock:
                        self.anonymous.append(reply.local_id)
                    credential = pb.account.Credential(provider_id="password", email=f"c{n}-{k}-{self.tag}@example.com",
                                                       password="correct horse")
                    status, linked = client.account("LinkWithCredential", pb.account.LinkWithCredentialRequest(
                        id_token=reply.id_token, credential=credential))
                    if status.code != 0 and client.lost:
                        continue  # the first attempt was processed, its answer lost: not acknowledged
                    self._check(status)
                    with self.lock:
                        self.email[linked.local_id] = credential.email
                    self._acked()
        except AssertionError as error:
            with self.lock:
                self.failures.append(str(error))
        finally:
            client.close()

    def _check(self, status):
        if status.code != 0:
            raise AssertionError(f"call failed: {status}")

    def verify(self):
        """Every acknowledged sign-up and link is there, and every family's last
        acknowledged refresh token still refreshes."""
        pb = self.pb
        client = RetryingClient(self.cluster, pb)
        try:
            listed = client.list_accounts()
            missing = [uid for uid in self.anonymous if uid not in listed]
            assert missing == [], f"{len(missing)} acknowledged sign-ups lost: {missing[:5]}"
            for uid, email in self.email.items():
                assert listed.get(uid) == email, f"acknowledged link lost: {uid} {email}"
            for uid, token in list(self.families.items()):
                status, reply = client.account("RefreshToken", pb.account.RefreshTokenRequest(refresh_token=token))
                assert status.code == 0, f"{uid}: its last acknowledged refresh token fails: {status}"
                self.families[uid] = reply.refresh_token
            return len(listed)
        finally:
            client.close()


def rolling_restart(cluster, pb, clients=3):
    """SIGTERM and start again each node in turn under load from retrying clients; every
    call must succeed and every acknowledged write be there. Returns the load."""
    load = Load(cluster, pb, clients=clients)
    load.start()
    time.sleep(1)
    for i in sorted(cluster.addresses):
        assert cluster.stop(i) == 0
        cluster.start(i)
        time.sleep(1)
    load.finish()
    load.verify()
    return load
