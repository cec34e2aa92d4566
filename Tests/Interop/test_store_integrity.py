"""The daemon checks its store's integrity in the background once it serves (a store of
millions of accounts would take seconds to check before the ready line). A damaged store:
the daemon still starts, then logs the failure, turns unready and refuses writes with
STORE_UNAVAILABLE instead of writing on top of the damage."""

import contextlib
import os
import sqlite3
import time
import urllib.error
import urllib.request

from conftest import Daemon, call


def ready_status(daemon):
    try:
        with urllib.request.urlopen(f"http://{daemon.ops[0]}:{daemon.ops[1]}/readyz", timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def sign_up(daemon, pb, sock, n):
    meta = {"x-api-key": daemon.client_json["api_key"],
            "authorization": "Bearer " + daemon.client_json["admin_key"], "x-end-user-ip": f"10.0.{n >> 8}.{n & 255}"}
    return call(sock, pb, "/anonauth.v1.AccountService/SignUp",
                pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()), pb.account.AuthResponse,
                metadata=meta, call_id=n + 1)


def test_a_damaged_store_is_found_after_start_and_refuses_writes(pb):
    first = Daemon()
    sock = first.connect()
    for n in range(400):
        status, _ = sign_up(first, pb, sock, n)
        assert status.code == 0, status
    sock.close()
    assert first.stop() == 0  # a clean stop folds the WAL into the file
    path = os.path.join(first.dir, "anonauth.db")
    # Garbage over a page of an index that nothing reads at start (the start counts the
    # accounts, and which pages that reads depends on the random uids): the damage must be
    # found by the background check, not by chance.
    with contextlib.closing(sqlite3.connect(path)) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = [n for (n,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'refresh_sessions_by_account' ORDER BY pageno")]
    assert pages
    with open(path, "r+b") as f:
        f.seek((pages[-1] - 1) * page_size)
        f.write(bytes((i * 7 + 13) & 255 for i in range(page_size)))

    daemon = Daemon(data_dir=first.dir)
    try:
        deadline = time.monotonic() + 30
        while "store integrity check failed" not in daemon.log_lines_text():
            assert time.monotonic() < deadline, daemon.log_lines_text()[-2000:]
            time.sleep(0.1)
        assert ready_status(daemon) == 503
        sock = daemon.connect()
        status, _ = sign_up(daemon, pb, sock, 999)
        assert (status.code, status.reason) == (14, "STORE_UNAVAILABLE"), status
        assert "integrity check" in status.message
        sock.close()
    finally:
        daemon.stop()


def test_a_sound_store_passes_the_background_check(daemon):
    deadline = time.monotonic() + 30
    while "store integrity check passed" not in daemon.log_lines_text():
        assert time.monotonic() < deadline, daemon.log_lines_text()[-2000:]
        time.sleep(0.1)
    assert ready_status(daemon) == 200
