"""Operator safety against the real binaries: a client.json planted in the current
directory does not get the operator's admin key; the daemon runs without core dumps;
exports list each provider once; and export then import round-trips every account the
service's own doors made (anonymous, email/password with a display name, OIDC sign-in
and link, custom claims, a disabled account), field by field, into a fresh daemon."""

import json
import os
import resource
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import signal
import time
import urllib.request

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import ROOT, Daemon, call, der_fingerprint, make_certificate
from test_operations import Deployment, peer_fingerprint, wait_for_log

CLI = os.environ.get("ANONAUTH_CLI", str(ROOT / ".build/debug/anonauth"))
ANONAUTHD = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))
ACCOUNT = "/anonauth.v1.AccountService/"
ADMIN = "/anonauth.v1.AdminService/"


class Listener:
    """A TLS server posing as a daemon, run by the test: it records every byte any
    client sends it (the CLI's admin key would arrive in a call's metadata)."""

    def __init__(self, directory):
        self.cert, key = make_certificate(directory, "hostile", cn="127.0.0.1")
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(self.cert, key)
        self.context.set_alpn_protocols(["anonauth/1"])
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.address = "127.0.0.1:%d" % self.server.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while self.running:
            try:
                raw, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            raw.settimeout(10)
            try:
                with self.context.wrap_socket(raw, server_side=True) as conn:
                    while True:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        self.received.extend(chunk)
            except (OSError, ssl.SSLError):
                pass

    def close(self):
        self.running = False
        self.thread.join(timeout=10)
        self.server.close()


def clean_env(**extra):
    """The environment without the operator's ANONAUTH_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANONAUTH_")}
    env.update(extra)
    return env


def plant(cwd, **client):
    """./anonauth-data/client.json in `cwd`, as someone who can write there would leave it."""
    data = os.path.join(cwd, "anonauth-data")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "client.json"), "w") as f:
        json.dump(client, f)


def operator_key(directory):
    path = os.path.join(directory, "operator-admin.key")
    with open(path, "w") as f:
        f.write("operator-secret-admin-key-0123456789abcdef\n")
    os.chmod(path, 0o600)
    return path, "operator-secret-admin-key-0123456789abcdef"


@pytest.mark.parametrize("how", ["flag", "env", "rpc-flag-ca-from-file"])
def test_cli_never_sends_its_admin_key_to_a_planted_client_json(tmp_path, how):
    """A client.json in the current directory names the test's listener (and its CA): the
    operator's key from --admin-key-file or ANONAUTH_ADMIN_KEY_FILE never reaches it, and
    the CLI says what to pass instead (exit 2)."""
    listener = Listener(str(tmp_path))
    try:
        cwd = tmp_path / "cloned-repo"
        cwd.mkdir()
        plant(str(cwd), rpc=listener.address, ca_file=listener.cert, api_key="k", project_id="p")
        key_file, key = operator_key(str(tmp_path))
        args, env = ["admin", "usage", "--timeout-ms", "3000"], clean_env()
        if how == "env":
            env["ANONAUTH_ADMIN_KEY_FILE"] = key_file
        else:
            args += ["--admin-key-file", key_file]
        if how == "rpc-flag-ca-from-file":
            args += ["--rpc", listener.address]
        result = subprocess.run([CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
        time.sleep(0.5)  # anything sent would have arrived: the CLI has exited
        assert key.encode() not in bytes(listener.received)
        assert listener.connections == 0
        assert result.returncode == 2, result
        assert "--rpc" in result.stderr and "--data-dir" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    finally:
        listener.close()


def test_cli_admin_key_still_goes_where_the_operator_says(tmp_path):
    """With the planted file still in the current directory: a key from --admin-key-file
    reaches a daemon named by --rpc and --ca-file; `make run`'s own client.json (found by
    default, with its own admin key) still works with no flags."""
    cwd = tmp_path / "work"
    (cwd / "anonauth-data").mkdir(parents=True)
    daemon = Daemon(data_dir=str(cwd / "anonauth-data"))
    try:
        key_file = str(tmp_path / "admin.key")
        with open(key_file, "w") as f:
            f.write(daemon.client_json["admin_key"] + "\n")
        os.chmod(key_file, 0o600)
        rpc = "%s:%d" % daemon.rpc
        # The dev daemon's own client.json, found by default: its key goes to its daemon.
        plain = subprocess.run([CLI, "admin", "usage"], cwd=cwd, env=clean_env(), capture_output=True,
                               text=True, timeout=60)
        assert plain.returncode == 0, plain.stderr
        named = subprocess.run([CLI, "admin", "usage", "--admin-key-file", key_file, "--rpc", rpc, "--ca-file",
                                daemon.ca_file, "--project", daemon.client_json["project_id"]],
                               cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=60)
        assert named.returncode == 0, named.stderr
        # The same file named by --data-dir is the operator's choice.
        chosen = subprocess.run([CLI, "admin", "usage", "--admin-key-file", key_file, "--data-dir", daemon.dir],
                                env=clean_env(), capture_output=True, text=True, timeout=60)
        assert chosen.returncode == 0, chosen.stderr
        # And a key of the operator's own with only the default file: refused before connecting.
        refused = subprocess.run([CLI, "admin", "usage", "--admin-key-file", key_file], cwd=cwd,
                                 env=clean_env(), capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "--rpc" in refused.stderr, refused
    finally:
        assert daemon.stop() == 0


def proc_owner(pid):
    """The owner the kernel gives /proc/PID's private files (environ, mem, fd/): the
    process's user while it is dumpable, root once it is not. (/proc/PID itself keeps
    the user either way.)"""
    return os.stat(f"/proc/{pid}/environ").st_uid


def test_daemon_runs_without_core_dumps(tmp_path):
    """RLIMIT_CORE is 0 whatever limit the daemon was started with, and the process is not
    dumpable: /proc/PID/environ then belongs to root instead of the daemon's user (so the daemon
    runs as nobody when the test is root). The daemon still counts its own descriptors."""
    data = tempfile.mkdtemp(prefix="anonauth-nodump-")
    user = os.geteuid()
    kwargs = {}
    if user == 0:
        user = 65534
        os.chown(data, user, user)
        kwargs = dict(user=user, group=user, extra_groups=[])
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]

    def allow_cores():
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))

    proc = subprocess.Popen([ANONAUTHD, "--dev", "--data-dir", data, "--listen", "127.0.0.1:0", "--ops-listen",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=allow_cores, **kwargs)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        ready = json.loads(line)
        assert ready["event"] == "ready"
        with open(f"/proc/{proc.pid}/limits") as f:
            core = next(row for row in f if row.startswith("Max core file size"))
        assert core.split()[4:6] == ["0", "0"], core
        with open(f"/proc/{proc.pid}/status") as f:
            uids = next(row for row in f if row.startswith("Uid:")).split()[1:]
        assert int(uids[1]) == user and user != 0
        assert proc_owner(proc.pid) == 0, "the daemon is dumpable"
        host, port = ready["ops"].rsplit(":", 1)
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as r:
            metrics = r.read().decode()
        fds = [row for row in metrics.splitlines() if row.startswith("anonauth_process_open_fds ")
               or row.startswith("process_open_fds ")]
        assert fds and int(float(fds[0].split()[1])) > 0, fds
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
        shutil.rmtree(data, ignore_errors=True)


def test_a_renewed_tls_key_open_to_others_is_not_loaded(pb, tmp_path):
    """SIGHUP with a new key that group or others may read: the reload is refused (its log
    line says the chmod to run) and the daemon keeps serving the current certificate."""
    dep = Deployment(tmp_path)
    d = dep.start()
    try:
        dep.install(dep.second)
        os.chmod(dep.key, 0o644)
        d.proc.send_signal(signal.SIGHUP)
        failed = wait_for_log(d, "tls reload failed; keeping the current certificate", timeout=30)
        assert f"chmod 600 {dep.key}" in failed["error"], failed
        with d.connect() as s:
            assert peer_fingerprint(s) == der_fingerprint(dep.first[0])
    finally:
        assert d.stop() == 0