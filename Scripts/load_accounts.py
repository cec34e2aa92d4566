#!/usr/bin/env python3
"""Loads a large store for benchmarks, in minutes: N anonymous accounts of the project,
each with one refresh session, written straight into a stopped daemon's SQLite file.

    python3 Scripts/load_accounts.py DATA_DIR N [--due M] [--project demo-project]

Uids are 28 random characters of [A-Za-z0-9] and session (token family) ids a 6-byte
start time in ms then 10 random bytes, as the daemon makes them (migration 8), so the
B-trees are keyed as in production. Accounts were created over
the last 29 days (none due for clean-up yet); `--due M` adds M more that were created 40
days ago and are due now, for the clean-up benchmark. The daemon's indexes are dropped
for the load and made again after it (same SQL, from sqlite_master)."""

import argparse
import os
import random
import sqlite3
import string
import time

ALPHABET = (string.ascii_letters + string.digits).encode()
DAY_MS = 86_400_000
CHUNK = 250_000


def uids(count, rng):
    """`count` distinct random uids, sorted (sorted inserts fill pages densely)."""
    seen = set()
    while len(seen) < count:
        raw = rng.randbytes(28 * (count - len(seen)))
        for i in range(0, len(raw), 28):
            seen.add(bytes(ALPHABET[b % 62] for b in raw[i:i + 28]).decode())
    return sorted(seen)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("count", type=int)
    parser.add_argument("--due", type=int, default=0)
    parser.add_argument("--project", default="demo-project")
    args = parser.parse_args()
    path = os.path.join(args.data_dir, "anonauth.db")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: start the daemon once (--dev) to make the store, then stop it")
    started = time.monotonic()
    rng = random.Random(0x5EED)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -1048576")  # 1 GiB
    if not db.execute("SELECT 1 FROM projects WHERE project_id = ?", (args.project,)).fetchone():
        raise SystemExit(f"no project {args.project} in {path}")
    indexes = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name IN ('accounts', 'refresh_sessions')").fetchall()
    for name, _ in indexes:
        db.execute(f'DROP INDEX "{name}"')
    now = int(time.time() * 1000)
    total = args.count + args.due
    ids = uids(total, rng)
    print(f"{total:,} uids made in {time.monotonic() - started:.0f} s", flush=True)
    due = set(rng.sample(range(total), args.due)) if args.due else set()
    for start in range(0, total, CHUNK):
        accounts, tokens = [], []
        for i in range(start, min(start + CHUNK, total)):
            if i in due:
                created = now - 40 * DAY_MS
                deletion = created + 30 * DAY_MS
            else:
                created = now - rng.randrange(29 * DAY_MS)
                deletion = 0
            uid = ids[i]
            accounts.append((args.project, uid, 1, created, created, deletion))
            # A session as migration 8 stores it: the family id (the start in ms, then
            # random), the live token's SHA-256.
            family = created.to_bytes(6, "big") + rng.randbytes(10)
            tokens.append((family, args.project, uid, rng.randbytes(32), created, created // 1000, "anonymous"))
        tokens.sort()
        db.execute("BEGIN")
        db.executemany("INSERT INTO accounts (project_id, local_id, is_anonymous, created_at_ms, last_sign_in_at_ms, "
                       "scheduled_deletion_at_ms) VALUES (?,?,?,?,?,?)", accounts)
        db.executemany("INSERT INTO refresh_sessions (family_id, project_id, local_id, token_hash, issued_at_ms, "
                       "auth_time, sign_in_provider) VALUES (?,?,?,?,?,?,?)", tokens)
        db.execute("COMMIT")
        print(f"  {min(start + CHUNK, total):,} accounts ({time.monotonic() - started:.0f} s)", flush=True)
    for name, sql in indexes:
        db.execute(sql)
        print(f"  index {name} ({time.monotonic() - started:.0f} s)", flush=True)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = os.path.getsize(path)
    print(f"loaded {total:,} accounts with refresh tokens in {time.monotonic() - started:.0f} s; "
          f"{size / 2**20:,.0f} MiB, {size / total:.0f} bytes per account")


if __name__ == "__main__":
    main()
