#!/usr/bin/env python3
"""Loads a large store for benchmarks, in minutes: N anonymous accounts of the project,
each with one refresh session, written straight into a stopped daemon's SQLite file.

    python3 Scripts/load_accounts.py DATA_DIR N [--due M] [--project demo-project]
        [--due-spread-days D] [--uid-order random|creation]

Uids are 28 random characters of [A-Za-z0-9] and session (token family) ids a 6-byte
start time in ms then 10 random bytes, as the daemon makes them (migration 8), so the
B-trees are keyed as in production. Accounts were created over
the last 29 days (none due for clean-up yet); `--due M` adds M more that were created 40
days ago and are due now, for the clean-up benchmark. The daemon's indexes are dropped
for the load and made again after it (same SQL, from sqlite_master).

Two options for the clean-up pass's lab note (docs/benchmarks/2026-11-28-scaling.md),
off by default so that the benches' figures stay comparable:
- `--due-spread-days D`: the due accounts were created over D days ending 31 days ago
  (and fell due 30 days after their creation) instead of all at one instant, so the pass
  deletes them in the order of their creation, as a store the daemon filled does.
- `--uid-order creation`: an experiment, NOT what the daemon does (protocol.md §8 makes
  the uid 28 characters from a CSPRNG): each uid starts with its account's creation
  second in 6 base-62 digits, then 22 random characters, so that the accounts' B-trees
  hold accounts in the order of their creation."""

import argparse
import os
import random
import sqlite3
import string
import time

ALPHABET = (string.ascii_letters + string.digits).encode()
SORTED_ALPHABET = string.digits + string.ascii_uppercase + string.ascii_lowercase
DAY_MS = 86_400_000
CHUNK = 250_000


def uids(count, rng, length=28):
    """`count` distinct random uids of `length` characters, sorted (sorted inserts fill
    pages densely)."""
    seen = set()
    while len(seen) < count:
        raw = rng.randbytes(length * (count - len(seen)))
        for i in range(0, len(raw), length):
            seen.add(bytes(ALPHABET[b % 62] for b in raw[i:i + length]).decode())
    return sorted(seen)


def base62(number, digits):
    """`number` in `digits` base-62 digits, most significant first, from an alphabet in
    ASCII order (0-9, A-Z, a-z) so that the strings sort as the numbers do."""
    out = []
    for _ in range(digits):
        number, digit = divmod(number, 62)
        out.append(SORTED_ALPHABET[digit])
    return "".join(reversed(out))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("count", type=int)
    parser.add_argument("--due", type=int, default=0)
    parser.add_argument("--project", default="demo-project")
    parser.add_argument("--due-spread-days", type=float, default=0)
    parser.add_argument("--uid-order", choices=["random", "creation"], default="random")
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
    due = set(rng.sample(range(total), args.due)) if args.due else set()
    created_at = []
    for i in range(total):
        if i not in due:
            created_at.append(now - rng.randrange(29 * DAY_MS))
        elif args.due_spread_days:
            created_at.append(now - 31 * DAY_MS - rng.randrange(int(args.due_spread_days * DAY_MS)))
        else:
            created_at.append(now - 40 * DAY_MS)
    if args.uid_order == "creation":
        ids = [base62(created // 1000, 6) + suffix for created, suffix in zip(created_at, uids(total, rng, 22))]
    else:
        ids = uids(total, rng)
    # Sorted by uid: sorted inserts fill the accounts' pages densely.
    rows = sorted((ids[i], created_at[i], i in due) for i in range(total))
    del ids, created_at
    print(f"{total:,} uids made in {time.monotonic() - started:.0f} s", flush=True)
    for start in range(0, total, CHUNK):
        accounts, tokens = [], []
        for uid, created, is_due in rows[start:start + CHUNK]:
            deletion = created + 30 * DAY_MS if is_due else 0
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
