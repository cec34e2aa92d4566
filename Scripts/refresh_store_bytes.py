#!/usr/bin/env python3
"""What refresh sessions cost on disk: a fresh daemon, N anonymous accounts refreshed M
times each (4 connections), then one account refreshed R times; the store's size and rows
after each step, and bytes per B-tree after a clean stop (SQLite's dbstat).

    ANONAUTHD=.build/debug/anonauthd python3 Scripts/refresh_store_bytes.py N M R

Before migration 8 every refresh added a row; since, the rows and bytes after the R
refreshes are those before them."""

import contextlib
import os
import pathlib
import sqlite3
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Tests" / "Interop"))
from conftest import TEST_DAEMON_FLAGS, Daemon, call, load_pb  # noqa: E402

ACCOUNT = "/anonauth.v1.AccountService/"
TREES = ("accounts", "refresh_sessions", "refresh_sessions_by_account", "refresh_sessions_sealed",
         "refresh_tokens", "refresh_tokens_by_account_family", "refresh_tokens_rotated")


def sizes(path):
    """(bytes in use, refresh rows) as a read-only connection sees the store."""
    with contextlib.closing(sqlite3.connect("file:" + path + "?mode=ro", uri=True)) as db:
        size = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
        names = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        table = "refresh_sessions" if "refresh_sessions" in names else "refresh_tokens"
        return size, db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def worker(daemon, pb, user, accounts, refreshes, ip_of=None):
    with daemon.connect() as sock:
        for n in range(accounts):
            headers = dict(user, **{"x-end-user-ip": ip_of(n)}) if ip_of else user
            request = pb.account.SignUpRequest()
            request.anonymous.SetInParent()
            status, auth = call(sock, pb, ACCOUNT + "SignUp", request, pb.account.AuthResponse, headers)
            assert status.code == 0, status
            token = auth.refresh_token
            for _ in range(refreshes):
                status, auth = call(sock, pb, ACCOUNT + "RefreshToken",
                                    pb.account.RefreshTokenRequest(refresh_token=token), pb.account.AuthResponse,
                                    headers)
                assert status.code == 0, status
                token = auth.refresh_token


def main():
    n, m, r = map(int, sys.argv[1:4])
    pb = load_pb()
    daemon = Daemon(extra=TEST_DAEMON_FLAGS)
    # The admin key beside the API key makes x-end-user-ip trusted: each account its own
    # address, so the per-IP sign-up quota is never the limit.
    user = {"x-api-key": daemon.client_json["api_key"],
            "authorization": "Bearer " + daemon.client_json["admin_key"]}
    path = os.path.join(daemon.dir, "anonauth.db")
    empty, _ = sizes(path)
    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(daemon, pb, user, n // 4, m,
                                                     lambda k, i=i: f"10.{i}.{k // 50}.{k % 50 + 1}"))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    loaded, rows = sizes(path)
    middle = time.monotonic()
    worker(daemon, pb, dict(user, **{"x-end-user-ip": "10.9.9.9"}), 1, r)
    looped, looped_rows = sizes(path)
    print(f"{n:,} accounts x {m} refreshes in {middle - started:.1f} s; then one account x {r:,} refreshes "
          f"in {time.monotonic() - middle:.1f} s")
    print(f"empty store {empty:,} B; after the accounts {loaded:,} B ({(loaded - empty) / max(1, n):.1f} B an "
          f"account), {rows:,} refresh rows")
    print(f"after the one account's refreshes {looped:,} B ({looped - loaded:+,}), {looped_rows:,} refresh rows")
    assert daemon.stop() == 0
    with contextlib.closing(sqlite3.connect("file:" + path + "?mode=ro", uri=True)) as db:
        for name, cells, size in db.execute(
                "SELECT name, sum(ncell), sum(pgsize) FROM dbstat WHERE pagetype = 'leaf' GROUP BY name"):
            if name in TREES and cells:
                print(f"  {name:34s} {cells:8,} leaf cells, {size / cells:6.1f} B of leaf pages a cell")


if __name__ == "__main__":
    main()
