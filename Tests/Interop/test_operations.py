"""Operations against the real daemon: /readyz while draining, SIGHUP reloading the TLS
certificate with a connection open across it, and a deployment-style start (no --dev)
whose admin key comes from --admin-key-file."""

import json
import os
import secrets
import signal
import time

from conftest import Daemon, call, call_frame, der_fingerprint, make_certificate, ops_status, read_frame, send_frame

HEALTH = "/anonauth.v1.HealthService/Check"


def test_readyz_is_503_while_a_slow_call_drains(pb):
    d = Daemon(extra=["--test-hooks", "--shutdown-grace-ms", "10000"])
    assert ops_status(d, "/readyz") == 200
    with d.connect() as s:
        send_frame(s, call_frame(pb, 7, "/anonauth.test.TestService/Sleep", pb.health.CheckRequest().SerializeToString(),
                                 {"x-sleep-ms": "2500"}))
        time.sleep(0.3)  # the call is in flight
        d.proc.send_signal(signal.SIGTERM)
        deadline = time.time() + 2
        statuses = []
        while time.time() < deadline:
            statuses.append(ops_status(d, "/readyz"))
            if statuses[-1] == 503:
                break
            time.sleep(0.05)
        assert statuses[-1] == 503, statuses
        assert ops_status(d, "/healthz") == 200  # alive, just not ready
        assert d.proc.poll() is None  # still draining: the call has not finished
        # The GoAway first, then the slow call's reply: it finished despite the SIGTERM.
        frames = [read_frame(s, pb), read_frame(s, pb)]
    kinds = [f.WhichOneof("kind") for f in frames]
    assert kinds == ["go_away", "reply"], frames
    assert frames[0].go_away.reason == "SHUTTING_DOWN"
    assert frames[1].reply.id == 7 and frames[1].reply.status.code == 0
    assert pb.health.CheckResponse.FromString(frames[1].reply.payload).status == "SLEPT"
    assert d.proc.wait(timeout=15) == 0



def test_a_call_past_the_drain_deadline_is_cut_and_the_daemon_still_exits_0(pb):
    """The service group's drain deadline (--shutdown-grace-ms from the signal): the RPC
    server closes the connection a call still holds, and every later part still stops."""
    d = Daemon(extra=["--test-hooks", "--shutdown-grace-ms", "300"])
    with d.connect() as s:
        send_frame(s, call_frame(pb, 9, "/anonauth.test.TestService/Sleep", pb.health.CheckRequest().SerializeToString(),
                                 {"x-sleep-ms": "60000"}))
        time.sleep(0.3)  # the call is in flight
        d.proc.send_signal(signal.SIGTERM)
        assert read_frame(s, pb).WhichOneof("kind") == "go_away"
        assert s.recv(1) == b""  # closed with the call unanswered
    assert d.proc.wait(timeout=30) == 0
    messages = [json.loads(line).get("msg") for line in d.log_lines() if line.startswith("{")]
    assert "grace period over; closing connections" in messages
    assert messages.index("draining") < messages.index("grace period over; closing connections")
    assert messages[-1] == "stopped"

def write_atomically(path, data):
    """Through a temporary file and a rename, 0600 (the daemon refuses a key others may read)."""
    tmp = path + ".new"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def peer_fingerprint(sock):
    import hashlib
    return hashlib.sha256(sock.getpeercert(binary_form=True)).hexdigest()


class Deployment:
    """Files as a deployment gives them: a TLS certificate and key, a master key and an
    admin key, in a directory of their own; the CA bundle trusts `certs` made here."""

    def __init__(self, tmp_path):
        self.dir = str(tmp_path)
        self.first = make_certificate(self.dir, "first")
        self.second = make_certificate(self.dir, "second")
        self.cert = os.path.join(self.dir, "tls.crt")
        self.key = os.path.join(self.dir, "tls.key")
        self.install(self.first)
        self.ca = os.path.join(self.dir, "ca.pem")
        with open(self.ca, "w") as out:
            for cert, _ in (self.first, self.second):
                out.write(open(cert).read())
        self.master = os.path.join(self.dir, "master.key")
        with open(self.master, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
        self.admin_key = secrets.token_hex(32)
        self.admin = os.path.join(self.dir, "admin.key")
        with open(self.admin, "w") as f:
            f.write(self.admin_key + "\n")
        os.chmod(self.master, 0o600)
        os.chmod(self.admin, 0o600)

    def install(self, pair):
        cert, key = pair
        write_atomically(self.key, open(key, "rb").read())
        write_atomically(self.cert, open(cert, "rb").read())

    def flags(self):
        return ["--tls-cert", self.cert, "--tls-key", self.key, "--master-key-file", self.master,
                "--admin-key-file", self.admin]

    def start(self, data_dir=None):
        return Daemon(extra=self.flags(), dev=False, ca_file=self.ca, data_dir=data_dir)


def wait_for_log(d, message, timeout=5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for line in d.log_lines():
            entry = json.loads(line)
            if entry["msg"] == message:
                return entry
        time.sleep(0.05)
    raise AssertionError(f"no {message!r} log line in: {d.log_lines()}")


def health(s, pb, call_id):
    status, response = call(s, pb, HEALTH, pb.health.CheckRequest(), pb.health.CheckResponse, call_id=call_id)
    assert status.code == 0 and response.status == "SERVING", status


def test_sighup_reloads_the_certificate_and_keeps_open_connections(pb, tmp_path):
    dep = Deployment(tmp_path)
    d = dep.start()
    try:
        old = d.connect()
        health(old, pb, 1)
        assert peer_fingerprint(old) == der_fingerprint(dep.first[0])

        dep.install(dep.second)
        d.proc.send_signal(signal.SIGHUP)
        reloaded = wait_for_log(d, "tls reloaded")
        assert reloaded["tls_sha256"] == der_fingerprint(dep.second[0])
        with d.connect() as new:
            assert peer_fingerprint(new) == der_fingerprint(dep.second[0])
            health(new, pb, 1)
        # The connection opened before the reload was not dropped and still works.
        health(old, pb, 2)
        assert peer_fingerprint(old) == der_fingerprint(dep.first[0])

        # A botched renewal: the reload fails, the server keeps the second certificate.
        write_atomically(dep.cert, b"-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
        d.proc.send_signal(signal.SIGHUP)
        failed = wait_for_log(d, "tls reload failed; keeping the current certificate")
        assert failed["level"] == "error"
        assert failed["tls_sha256"] == der_fingerprint(dep.second[0])
        with d.connect() as new:
            assert peer_fingerprint(new) == der_fingerprint(dep.second[0])
            health(new, pb, 1)
        health(old, pb, 3)
        old.close()
    finally:
        assert d.stop() == 0


def test_deployment_start_with_admin_key_file_and_rotation(pb, tmp_path):
    dep = Deployment(tmp_path)
    d = dep.start()
    data_dir = d.dir
    admin = {"authorization": "Bearer " + dep.admin_key}
    try:
        assert not os.path.exists(os.path.join(data_dir, "client.json"))  # nothing written outside --dev
        assert not os.path.exists(os.path.join(data_dir, "master.key"))
        with d.connect() as s:
            st, config = call(s, pb, "/anonauth.v1.AdminService/CreateProject",
                              pb.admin.CreateProjectRequest(project_id="prod-project"), pb.admin.ProjectConfig, admin)
            assert st.code == 0 and config.project_id == "prod-project", st
    finally:
        assert d.stop() == 0
    stat = os.stat(data_dir)
    assert stat.st_mode & 0o077 == 0  # the data dir is 0700

    # A new key in the file and a restart: the new key works, the old one no longer does.
    old_key = dep.admin_key
    dep.admin_key = secrets.token_hex(32)
    with open(dep.admin, "w") as f:
        f.write(dep.admin_key)
    d = dep.start(data_dir=data_dir)
    try:
        with d.connect() as s:
            st, _ = call(s, pb, "/anonauth.v1.AdminService/GetProjectConfig",
                         pb.admin.GetProjectConfigRequest(project_id="prod-project"), None,
                         {"authorization": "Bearer " + old_key})
            assert st.reason == "ADMIN_KEY_INVALID", st
            st, config = call(s, pb, "/anonauth.v1.AdminService/GetProjectConfig",
                              pb.admin.GetProjectConfigRequest(project_id="prod-project"), pb.admin.ProjectConfig,
                              {"authorization": "Bearer " + dep.admin_key}, call_id=2)
            assert st.code == 0 and config.project_id == "prod-project", st
        for line in d.log_lines():
            assert dep.admin_key not in line and old_key not in line
    finally:
        assert d.stop() == 0
