"""Hostile inputs for the operations side: extreme numbers in admin requests, a slowloris
on the ops port, store files and the data dir's permissions, and where the first --dev
start's secrets go."""

import os
import socket
import stat
import time

import pytest

from conftest import Daemon, call

INVALID_ARGUMENT = 3


def admin_md(d):
    return {"authorization": "Bearer " + d.client_json["admin_key"]}


def healthz(d, timeout=5.0):
    """One probe on a fresh connection: the status line's code, or None on no answer."""
    with socket.create_connection(d.ops, timeout=timeout) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else None


# 1. Extreme numbers in ScheduleSignUpQuota.

@pytest.mark.parametrize("start,duration", [
    (2**63 - 1, 2**63 - 1),
    (2**63 - 1, 3600),
    (2**63 - 1, -2**63),
    (2**63 - 1000, 1),
    (-2**63, 3600),
    (1, 2**63 - 1),
    (0, -2**63),
])
def test_schedule_quota_extremes_are_refused_and_the_daemon_lives(pb, start, duration):
    d = Daemon()
    try:
        project = d.client_json["project_id"]
        with d.connect() as s:
            status, _ = call(s, pb, "/anonauth.v1.AdminService/ScheduleSignUpQuota",
                             pb.admin.ScheduleSignUpQuotaRequest(
                                 project_id=project, quota=5, start_time_ms=start, duration_seconds=duration),
                             None, admin_md(d))
            assert status.code == INVALID_ARGUMENT, status
            # The same connection and the daemon go on.
            status, _ = call(s, pb, "/anonauth.v1.AdminService/ScheduleSignUpQuota",
                             pb.admin.ScheduleSignUpQuotaRequest(
                                 project_id=project, quota=5, start_time_ms=0, duration_seconds=3600),
                             None, admin_md(d), call_id=2)
            assert status.code == 0, status
        assert d.proc.poll() is None
        assert healthz(d) == 200
    finally:
        assert d.stop() == 0


# 2. Slowloris on the ops port.

def open_idle(d, count, source=None):
    socks = []
    for _ in range(count):
        try:
            s = socket.create_connection(d.ops, timeout=2, source_address=(source, 0) if source else None)
            s.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head that never ends
            socks.append(s)
        except OSError:
            break
    return socks


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def test_probes_answer_while_a_slowloris_renews_128_idle_sockets():
    d = Daemon()
    idle = []
    try:
        # Three rounds of 140 fresh idle sockets, ten probes each: before the fix a probe got
        # no answer at all. Counted in probes, not seconds, so a busy machine only makes it
        # slower; the probe's 30 s timeout only bounds a hang.
        for _ in range(3):
            close_all(idle)
            idle = open_idle(d, 140)
            for _ in range(10):
                assert healthz(d, timeout=30) == 200
                time.sleep(0.2)
        assert d.proc.poll() is None
    finally:
        close_all(idle)
        assert d.stop() == 0


def test_probes_answer_while_answered_sockets_are_left_open():
    """Complete requests whose client never reads nor closes: each lingers after its
    answer, and they must not keep a probe out either."""
    d = Daemon()
    held = []
    try:
        # Three rounds, counted rather than fitted into seconds.
        for _ in range(3):
            close_all(held)
            held = []
            for _ in range(140):
                try:
                    # From the probe's own address, so the per-address cap is what is full.
                    s = socket.create_connection(d.ops, timeout=2)
                    s.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
                    held.append(s)
                except OSError:
                    break
            code = healthz(d, timeout=30)  # the timeout bounds a hang only
            assert code == 200, code
    finally:
        close_all(held)
        assert d.stop() == 0


def test_one_address_holds_at_most_16_ops_connections():
    d = Daemon()
    idle = []
    try:
        idle = open_idle(d, 40, source="127.0.0.2")
        assert len(idle) == 40  # accepted: the oldest ones are closed to make room
        time.sleep(0.5)
        open_count = 0
        for s in idle:
            s.settimeout(0.05)
            try:
                if s.recv(1) == b"":
                    continue  # closed by the server
            except (socket.timeout, BlockingIOError):
                open_count += 1
            except OSError:
                continue
        assert open_count <= 16, open_count
        assert open_count >= 1
        assert healthz(d) == 200
    finally:
        close_all(idle)
        assert d.stop() == 0


def test_a_head_that_never_ends_is_closed():
    d = Daemon()
    try:
        # The server closes it (2 s for the whole head, OpsServer.headTimeoutNanos) with no
        # answer; the 60 s socket timeout only bounds a hang and raises if it never fires.
        with socket.create_connection(d.ops, timeout=60) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert s.recv(4096) == b""
    finally:
        assert d.stop() == 0


# 3. Store files and the data dir.

def modes(directory):
    found = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, directory)] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def test_files_are_owner_only_under_umask_000(pb):
    old = os.umask(0)
    try:
        d = Daemon()
    finally:
        os.umask(old)
    try:
        with d.connect() as s:
            status, _ = call(s, pb, "/anonauth.v1.AdminService/Backup", pb.admin.BackupRequest(name="b1"), None,
                             admin_md(d))
            assert status.code == 0, status
        found = modes(d.dir)
        assert "anonauth.db" in found and "anonauth.db-wal" in found and "client.json" in found
        assert os.path.join("backups", "b1") in found
        for path, mode in found.items():
            wanted = 0o700 if os.path.isdir(os.path.join(d.dir, path)) else 0o600
            assert mode == wanted, (path, oct(mode))
        assert stat.S_IMODE(os.stat(d.dir).st_mode) == 0o700
    finally:
        assert d.stop() == 0


def test_an_open_data_dir_is_tightened_and_logged():
    d = Daemon()
    assert d.stop() == 0
    os.chmod(d.dir, 0o755)
    os.chmod(os.path.join(d.dir, "client.json"), 0o644)
    os.chmod(os.path.join(d.dir, "anonauth.db"), 0o644)
    os.chmod(os.path.join(d.dir, "tls"), 0o755)
    again = Daemon(data_dir=d.dir)
    try:
        assert stat.S_IMODE(os.stat(d.dir).st_mode) == 0o700
        for path, mode in modes(d.dir).items():
            assert mode & 0o077 == 0, (path, oct(mode))
        log = again.log_lines_text()
        assert "data dir permissions tightened" in log
        assert "client.json" in log
    finally:
        assert again.stop() == 0


# 4. The first --dev start's output.

def test_first_dev_start_does_not_print_the_admin_key():
    d = Daemon()
    code = d.stop()
    rest = d.proc.stdout.read()
    assert code == 0
    admin_key = d.client_json["admin_key"]
    assert len(admin_key) >= 16
    stderr = d.log_lines_text()
    assert admin_key not in rest and admin_key not in stderr
    client_json = os.path.join(d.dir, "client.json")
    assert client_json in rest
    # Nor the API key: stdout tells where the file is, not what is in it.
    assert d.client_json["api_key"] not in rest
