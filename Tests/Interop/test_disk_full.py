"""Disk full, black box: the data dir is a small tmpfs. When it fills, writes answer
UNAVAILABLE with reason STORE_UNAVAILABLE and change nothing, reads keep working,
/readyz says 503 and Health Check NOT_SERVING (gRPC's grpc.health.v1 too, Check and
Watch); once the file system grows again the
daemon is ready by itself and every acknowledged write is intact. Needs root (mount).
A filler file takes most of the space first, and the last bytes once sign-ups fail (a
smaller write could still fit); deleting it is the operator freeing space."""

import os
import sqlite3
import subprocess
import tempfile
import threading
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from conftest import Daemon, call, ops_status
from test_grpc_standard import channel, watch_statuses

ACCOUNT = "/anonauth.v1.AccountService/"


def mount_tmpfs(path, size):
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=700", "tmpfs", path],
                            capture_output=True, text=True)
    return result.returncode == 0


@pytest.fixture
def small_disk():
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    parent = tempfile.mkdtemp(prefix="anonauth-full-")
    data = os.path.join(parent, "data")
    os.mkdir(data, 0o700)
    if not mount_tmpfs(data, "8m"):
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield data
    finally:
        subprocess.run(["umount", "-l", data], check=False)


def fill(path, leave):
    """Grows the filler file until at most `leave` bytes are free (or the disk is full)."""
    with open(path, "ab") as f:
        while True:
            stat = os.statvfs(os.path.dirname(path))
            free = stat.f_bavail * stat.f_frsize
            if free <= leave:
                return
            try:
                f.write(b"\0" * min(free - leave, 1 << 20))
                f.flush()
            except OSError:
                return


def test_a_full_disk_refuses_writes_keeps_reads_and_recovers_by_itself(pb, small_disk):
    daemon = Daemon(data_dir=small_disk)
    sock = daemon.connect()
    sock.settimeout(15)
    api = {"x-api-key": daemon.client_json["api_key"]}
    admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
    ids = iter(range(1, 1 << 30))

    def account(method, request, response=None):
        return call(sock, pb, ACCOUNT + method, request, response or pb.account.AuthResponse, metadata=api,
                    call_id=next(ids))

    def sign_up():
        return account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))

    def health():
        status, reply = call(sock, pb, "/anonauth.v1.HealthService/Check", pb.health.CheckRequest(),
                             pb.health.CheckResponse, call_id=next(ids))
        assert status.code == 0, status
        return reply.status

    # gRPC health over HTTP/2 on the same port, watched from the start to the stop.
    grpc_channel = channel(daemon)
    grpc_health = health_pb2_grpc.HealthStub(grpc_channel)
    watched = []
    watch = grpc_health.Watch(health_pb2.HealthCheckRequest())
    watcher = threading.Thread(target=watch_statuses, args=(watch, watched))
    watcher.start()
    # The watch's first answer comes once the channel has connected: wait for it, or on a
    # busy machine the disk may be full before the watcher has seen it serving.
    deadline = time.monotonic() + 30
    while not watched:
        assert time.monotonic() < deadline, "the health watch never answered"
        time.sleep(0.05)

    def grpc_check():
        return grpc_health.Check(health_pb2.HealthCheckRequest(), timeout=10).status

    try:
        config = pb.admin.ProjectConfig(project_id="demo-project", sign_up_quota_per_hour=1_000_000)
        status, _ = call(sock, pb, "/anonauth.v1.AdminService/UpdateProjectConfig",
                         pb.admin.UpdateProjectConfigRequest(config=config, update_mask=["sign_up_quota_per_hour"]),
                         pb.admin.ProjectConfig, metadata=admin, call_id=next(ids))
        assert status.code == 0, status
        status, first = sign_up()
        assert status.code == 0, status
        acked = [first.local_id]

        # Most of the disk goes to a filler, the rest to sign-ups until one is refused.
        filler = os.path.join(small_disk, "filler")
        fill(filler, leave=1 << 20)
        for _ in range(100_000):
            status, reply = sign_up()
            if status.code != 0:
                break
            acked.append(reply.local_id)
        assert (status.code, status.reason) == (14, "STORE_UNAVAILABLE"), status
        assert "disk is full" in status.message
        assert len(acked) > 10
        fill(filler, leave=0)

        # A refresh writes fewer pages than a sign-up and may still fit in the WAL's space:
        # then it is durable and its token is the family's; refused, it changed nothing.
        status, refreshed = account("RefreshToken", pb.account.RefreshTokenRequest(refresh_token=first.refresh_token))
        if status.code == 0:
            family_token = refreshed.refresh_token
        else:
            assert (status.code, status.reason) == (14, "STORE_UNAVAILABLE"), status
            family_token = first.refresh_token

        # Some sign-ups may still fit: once a background checkpoint has copied the WAL
        # back, the WAL starts over inside the space its file already holds. They are
        # durable (in the WAL, fsynced) and counted. The checkpoint that would let it start
        # over again needs the database file to grow, which it cannot: refusals become
        # steady (three in a row here).
        refused_in_a_row = 0
        for _ in range(10_000):
            status, reply = sign_up()
            if status.code != 0:
                assert (status.code, status.reason) == (14, "STORE_UNAVAILABLE"), status
                refused_in_a_row += 1
                if refused_in_a_row == 3:
                    break
                continue
            refused_in_a_row = 0
            acked.append(reply.local_id)
        assert refused_in_a_row == 3

        # Writes keep being refused with the same answer, and change nothing.
        status, _ = sign_up()
        assert (status.code, status.reason) == (14, "STORE_UNAVAILABLE"), status
        # Reads work.
        status, info = account("GetAccountInfo", pb.account.GetAccountInfoRequest(id_token=first.id_token),
                               pb.account.AccountInfo)
        assert status.code == 0 and info.local_id == first.local_id, status
        status, verified = call(sock, pb, "/anonauth.v1.TokenService/VerifyIdToken",
                                pb.token.VerifyIdTokenRequest(id_token=first.id_token),
                                pb.token.VerifyIdTokenResponse, metadata=api, call_id=next(ids))
        assert status.code == 0 and verified.uid == first.local_id, status
        # Probes: alive, not ready.
        assert ops_status(daemon, "/healthz") == 200
        assert ops_status(daemon, "/readyz") == 503
        assert health() == "NOT_SERVING"
        assert grpc_check() == health_pb2.HealthCheckResponse.NOT_SERVING

        # Space returns: no client write is needed for the daemon to be ready again.
        os.remove(filler)
        deadline = time.monotonic() + 10
        while ops_status(daemon, "/readyz") != 200:
            assert time.monotonic() < deadline, "not ready 10 s after space returned"
            time.sleep(0.2)
        assert health() == "SERVING"
        assert grpc_check() == health_pb2.HealthCheckResponse.SERVING
        # The watcher reads the store's health again each second: it sees the recovery.
        while watched[-1:] != [health_pb2.HealthCheckResponse.SERVING]:
            assert time.monotonic() < deadline + 10, f"the watcher never saw SERVING again: {watched}"
            time.sleep(0.2)
        status, reply = sign_up()
        assert status.code == 0, status
        acked.append(reply.local_id)
        # The family's current token works, once space is back.
        status, refreshed = account("RefreshToken", pb.account.RefreshTokenRequest(refresh_token=family_token))
        assert status.code == 0, status
    finally:
        sock.close()
        assert daemon.stop() == 0
        watcher.join(timeout=30)
        grpc_channel.close()
    # The watcher saw the store go unwritable and come back (it may have seen it flap
    # while the last writes still fitted), then the drain.
    serving, not_serving = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    assert watched[0] == serving, watched
    first_down = watched.index(not_serving)
    assert serving in watched[first_down:], watched
    assert watched[-2:] == [not_serving, grpc.StatusCode.UNAVAILABLE], watched

    db = sqlite3.connect(os.path.join(small_disk, "anonauth.db"))
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        present = {row[0] for row in db.execute("SELECT local_id FROM accounts")}
    finally:
        db.close()
    missing = [uid for uid in acked if uid not in present]
    assert missing == [], f"acknowledged sign-ups lost: {missing[:5]}"


def test_a_start_on_a_full_disk_exits_2_and_says_the_disk_is_full(small_disk):
    """SQLite reports only 'disk I/O error' when it cannot create the WAL's index: the
    daemon's message names the free space, so the operator knows what to fix."""
    daemon = Daemon(data_dir=small_disk)
    assert daemon.stop() == 0
    fill(os.path.join(small_disk, "filler"), 0)
    binary = os.environ.get("ANONAUTHD", os.path.join(os.path.dirname(__file__), "../../.build/debug/anonauthd"))
    result = subprocess.run([binary, "--dev", "--data-dir", small_disk, "--listen", "127.0.0.1:0",
                             "--ops-listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "bytes free; the store needs room for its WAL" in result.stderr, result.stderr
    os.remove(os.path.join(small_disk, "filler"))
    daemon = Daemon(data_dir=small_disk)  # space back: it starts, with what it had
    try:
        assert daemon.client_json["api_key"]
    finally:
        daemon.stop()
