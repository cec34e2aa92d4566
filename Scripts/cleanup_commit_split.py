#!/usr/bin/env python3
"""Where a clean-up deletion's CPU goes as the store grows: the clean-up pass's own SQL
(`CleanupRepository.dueQuery`, then one DELETE per due account, cascading to its
session) run from Python's SQLite on a store of each size, timed apart: the due query,
the deletions, and the COMMIT (WAL frames, plus SQLite's automatic checkpoint, which the
daemon runs on a thread of its own instead).

    python3 Scripts/cleanup_commit_split.py [--sizes 50000,1000000] [--per-commit 20,500]
        [--pragma mmap_size=2147418112]

Each store: the daemon's schema (the migrations' SQL, read from AnonAuthSchema.swift),
filled by load_accounts.py with a fifth of its accounts due, opened as the daemon's
writer is (WAL, synchronous=FULL, foreign keys on, a 16 MiB page cache). Prints process
CPU per deleted account for each size and number of deletions per commit. Needs no
build; a million accounts take about a minute to load."""

import argparse
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DUE_QUERY = """SELECT project_id, local_id FROM accounts
    WHERE scheduled_deletion_at_ms > 0 AND scheduled_deletion_at_ms <= ? AND +is_anonymous = 1
    ORDER BY scheduled_deletion_at_ms LIMIT ?"""
DELETE = "DELETE FROM accounts WHERE project_id = ? AND local_id = ? AND is_anonymous = 1"


def make_store(directory, accounts):
    """A store of `accounts` accounts, a fifth due: the daemon's schema, load_accounts.py's rows."""
    source = (ROOT / "Sources" / "AnonAuthStore" / "Schema" / "AnonAuthSchema.swift").read_text()
    db = sqlite3.connect(os.path.join(directory, "anonauth.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    for sql in re.findall(r'sql: """\n(.*?)\n\s*"""', source, re.S):
        db.executescript(sql)
    db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES ('demo-project', 0)")
    db.close()
    due = accounts // 5
    subprocess.run([sys.executable, str(ROOT / "Scripts" / "load_accounts.py"), directory,
                    str(accounts - due), "--due", str(due)], check=True, stdout=subprocess.DEVNULL)


def run(path, per_commit, pragmas):
    """Deletes every due account, `per_commit` a transaction: (deleted, CPU us per account of
    the due query, the deletions and the commits)."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ["journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON", "cache_size=-16384"] + pragmas:
        db.execute("PRAGMA " + pragma).fetchall()
    now = int(time.time() * 1000)
    spent = [0.0, 0.0, 0.0]
    deleted = 0
    while True:
        db.execute("BEGIN IMMEDIATE")
        start = time.process_time()
        due = db.execute(DUE_QUERY, (now, per_commit)).fetchall()
        found = time.process_time()
        for project, local_id in due:
            db.execute(DELETE, (project, local_id))
        done = time.process_time()
        db.execute("COMMIT")
        committed = time.process_time()
        spent[0] += found - start
        spent[1] += done - found
        spent[2] += committed - done
        deleted += len(due)
        if len(due) < per_commit:
            break
    db.close()
    return deleted, [s * 1e6 / max(1, deleted) for s in spent]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50000,1000000")
    parser.add_argument("--per-commit", default="20,500")
    parser.add_argument("--pragma", action="append", default=[])
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="anonauth-cleanup-split-")
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            directory = os.path.join(work, str(size))
            os.makedirs(directory)
            make_store(directory, size)
            path = os.path.join(directory, "anonauth.db")
            shutil.copy(path, path + ".loaded")
            for per_commit in [int(n) for n in args.per_commit.split(",")]:
                shutil.copy(path + ".loaded", path)
                for suffix in ("-wal", "-shm"):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
                deleted, (query, deletes, commit) = run(path, per_commit, args.pragma)
                print(f"{size:,} accounts, {deleted:,} due, {per_commit} a commit: CPU per deleted account "
                      f"{query + deletes + commit:.1f} us (due query {query:.1f}, deletions {deletes:.1f}, "
                      f"commit {commit:.1f})", flush=True)
            shutil.rmtree(directory)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
