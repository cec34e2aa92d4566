#!/usr/bin/env python3
"""`make bench-scaling`: a hot path's cost must not grow with the data. For each path
measured, the daemon's CPU per call (process_cpu_seconds_total on /metrics, through
`anonauth bench`) at small and at large data in one run, printed as a ratio (goal: at
most 1.2x).

Measured so far:
  - anonymous sign-ups from one address with the project's quota raised to 1,000,000,
    with that address's quota window as the run leaves it and then with --window
    sign-ups (default 950,000, less if the first round's sign-ups would leave the second
    too little room under the quota's ceiling of 1,000,000) written into it by SQL; and the same rounds from many addresses (each
    sign-up from an address of its own), whose windows the prefill does not touch:
    their ratio is the run's noise;
  - VerifyIdToken with check_revoked, GetAccountInfo and ListAccounts pages on a store
    of 10,000 accounts, then on the same store with --accounts more (default 1,000,000;
    0: skipped) loaded by load_accounts.py while the daemon is stopped.
  - RefreshToken on accounts with one session each, then on accounts with 100 (the
    cap: 99 more each, written by a trigger the script adds to its own store);
  - a clean-up pass (`anonauth admin run-cleanup`, RunCleanup calls) over a store of
    --cleanup-small accounts (default 50,000, a fifth due) and one of --cleanup-accounts
    (default 5,000,000) with --cleanup-due of them due (default 1,000,000), both loaded
    by load_accounts.py, once with each of --cleanup-uid-orders (default creation,random:
    the uids `--uid-order` makes): wall time and daemon CPU (/proc/PID/stat) per deleted
    account;
  - the admission tables with 1,000 and 1,000,000 addresses, in process: the CPU per
    real call (`anonauth bench admission-calls`: RefreshToken and anonymous SignUp
    through the daemon's serving stack, its tables filled before each batch, the calls
    from addresses the tables hold and from new ones; a daemon would first need a
    million admitted calls from a million addresses), at the default rates per address
    and at 1 a second (`--rate-per-ip 1`: the large tables stand at their key cap), and
    the CPU per admission of the `Admission` type alone and per attempt of the
    failed-sign-in throttle (`anonauth bench admission-tables`).

    python3 Scripts/bench_scaling.py [--seconds 10] [--window 950000] [--accounts 1000000]
        [--cleanup-accounts 5000000] [--cleanup-due 1000000] [--cleanup-uid-orders creation,random]
        [--parts signup,reads,...]

--parts picks some of signup, reads, refresh, cleanup, admission (default: all).

The prefill writes the store's own table: per-minute counters (migration 10) or, on a
store from before, one row per sign-up, so the same script shows an older daemon's
growth."""

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import bench_large
from bench import BIN, ROOT, Daemon, bench, rsa_signs_per_second

ADDRESS = "10.255.255.254"
MINUTE = 60_000


def raise_quota(daemon, quota):
    result = subprocess.run([str(BIN / "anonauth"), "admin", "update-config", f"sign_up_quota_per_hour={quota}",
                             "--data-dir", daemon.dir], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("update-config failed: " + result.stdout + result.stderr)


def project_id(db):
    return db.execute("SELECT project_id FROM projects ORDER BY created_at_ms LIMIT 1").fetchone()[0]


def prefill(daemon, events):
    """`events` sign-ups of ADDRESS spread over the hour's last 58 whole minutes (all still
    in the window for a minute or more), written beside the running daemon (WAL: its
    writes wait for this one transaction at most)."""
    db = sqlite3.connect(os.path.join(daemon.dir, "anonauth.db"), timeout=60)
    project = project_id(db)
    now = int(time.time() * 1000)
    minutes = [now // MINUTE - back for back in range(58, 0, -1)]
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    with db:
        if "sign_up_buckets" in tables:
            per, extra = divmod(events, len(minutes))
            for index, minute in enumerate(minutes):
                count = per + (1 if index < extra else 0)
                db.execute(
                    """INSERT INTO sign_up_buckets (project_id, ip_key, minute, count, oldest_ms, at_oldest, newest_ms)
                       VALUES (?, ?, ?, ?, ?, 1, ?)
                       ON CONFLICT (project_id, ip_key, minute) DO UPDATE SET count = count + excluded.count,
                         oldest_ms = min(oldest_ms, excluded.oldest_ms), newest_ms = max(newest_ms, excluded.newest_ms)""",
                    (project, ADDRESS, minute, count, minute * MINUTE, minute * MINUTE + MINUTE - 1))
        else:
            first = minutes[0] * MINUTE
            span = len(minutes) * MINUTE
            db.executemany("INSERT INTO sign_up_events (project_id, ip_key, at_ms) VALUES (?, ?, ?)",
                           ((project, ADDRESS, first + n * span // events) for n in range(events)))
    db.close()


def daemon_cpu_seconds(daemon):
    """The daemon process's user + system CPU so far, from /proc/PID/stat."""
    with open(f"/proc/{daemon.proc.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# The extra sessions of the refresh round: a trigger the bench adds to its own store, so
# every account the refresh bench signs up starts with EXTRA_SESSIONS sessions besides the
# one its sign-up makes (RefreshTokensRepository.maxSessionsPerAccount, 100, in all: the
# cap ends none of them). Random family ids: the bench never presents their tokens.
EXTRA_SESSIONS = 99
SESSIONS_TRIGGER = """
CREATE TABLE bench_extra_sessions (n INTEGER PRIMARY KEY);
CREATE TRIGGER bench_extra_sessions AFTER INSERT ON accounts BEGIN
  INSERT INTO refresh_sessions (family_id, project_id, local_id, token_hash, issued_at_ms, auth_time,
    sign_in_provider)
  SELECT randomblob(16), NEW.project_id, NEW.local_id, randomblob(32), NEW.created_at_ms - n,
    NEW.created_at_ms / 1000, 'anonymous' FROM bench_extra_sessions;
END;
"""


@contextlib.contextmanager
def scratch_daemon(prefix):
    """A daemon (not started) on a data dir in a temporary directory of its own; stopped
    if still running, and the directory removed, when the block ends."""
    work = tempfile.mkdtemp(prefix=prefix)
    daemon = bench_large.Daemon(os.path.join(work, "store"))
    try:
        os.makedirs(daemon.dir)
        yield daemon
    finally:
        if daemon.proc and daemon.proc.poll() is None:
            daemon.stop()
        shutil.rmtree(work, ignore_errors=True)


def refresh_rounds(rsa, seconds, accounts=1000):
    """RefreshToken on accounts with one session each (the sign-up's), then, on the same
    store, on accounts made while SESSIONS_TRIGGER gave each 99 more: (small, large,
    sessions per account seen) of the daemon's CPU per call."""
    load = ["--connections", "16", "--concurrency", "4", "--seconds", seconds]
    with scratch_daemon("anonauth-scaling-refresh-") as daemon:
        figures = {}
        for phase in ("small", "large"):
            if phase == "large":
                db = sqlite3.connect(os.path.join(daemon.dir, "anonauth.db"))
                db.executescript(SESSIONS_TRIGGER)
                with db:
                    db.executemany("INSERT INTO bench_extra_sessions (n) VALUES (?)",
                                   ((n,) for n in range(1, EXTRA_SESSIONS + 1)))
                db.close()
            daemon.start()
            time.sleep(1)
            figures[phase] = bench_large.bench(daemon, rsa, "refresh", "--accounts", str(accounts),
                                               *load)["server_cpu_us_per_call"]
            daemon.stop()
        db = sqlite3.connect(f"file:{os.path.join(daemon.dir, 'anonauth.db')}?mode=ro", uri=True)
        most = db.execute("SELECT max(c) FROM (SELECT count(*) AS c FROM refresh_sessions "
                          "GROUP BY project_id, local_id)").fetchone()[0]
        db.close()
        return figures["small"], figures["large"], most


def cleanup_pass(accounts, due, settle, uid_order):
    """A clean-up pass (`anonauth admin run-cleanup --all-projects`: RunCleanup calls of 2,000 accounts
    until none is due) over a store of `accounts` accounts, `due` of them due, loaded by
    load_accounts.py with uids of `uid_order` (as `--uid-order` makes them) and the due
    accounts made over 9 days, so that the pass deletes them in the order they were made,
    as in a store the daemon filled: (deleted, wall us and daemon CPU us per deleted account)."""
    with scratch_daemon("anonauth-scaling-cleanup-") as daemon:
        daemon.start()
        daemon.stop()
        started = time.monotonic()
        subprocess.run([sys.executable, str(ROOT / "Scripts" / "load_accounts.py"), daemon.dir,
                        str(accounts - due), "--due", str(due), "--due-spread-days", "9", "--uid-order", uid_order],
                       check=True, stdout=subprocess.DEVNULL)
        print(f"loaded {accounts:,} accounts ({due:,} due, uids {uid_order}) in {time.monotonic() - started:.0f} s",
              flush=True)
        daemon.start()
        # The integrity check each start runs in the background reads every page.
        time.sleep(settle)
        cpu = daemon_cpu_seconds(daemon)
        started = time.monotonic()
        # --all-projects (the store has one): no PreviewCleanup count before the pass.
        result = subprocess.run([str(BIN / "anonauth"), "admin", "run-cleanup", "--all-projects", "--json",
                                 "--data-dir", daemon.dir], capture_output=True, text=True)
        wall = time.monotonic() - started
        cpu = daemon_cpu_seconds(daemon) - cpu
        if result.returncode != 0:
            raise SystemExit("run-cleanup failed: " + result.stdout + result.stderr)
        deleted = json.loads(result.stdout.strip().splitlines()[-1])["deleted"]
        left = bench_large.due_left(daemon)
        daemon.stop()
        if deleted == 0 or left:
            raise SystemExit(f"clean-up deleted {deleted:,}, left {left:,} due")
        print(f"clean-up of {accounts:,}: {deleted:,} deleted in {wall:.1f} s, daemon CPU {cpu:.1f} s", flush=True)
        return deleted, wall * 1e6 / deleted, cpu * 1e6 / deleted


def admission_calls(small, large, rate_per_ip=None):
    """`anonauth bench admission-calls`: real calls through the daemon's serving stack in
    the CLI's own process (JSON: CPU us per call for each kind, shape and size); with
    `rate_per_ip` 1 each filled address owes a second, so the large tables stand at
    their key cap."""
    rate = ["--rate-per-ip", str(rate_per_ip)] if rate_per_ip else []
    result = subprocess.run([str(BIN / "anonauth"), "bench", "admission-calls", "--addresses",
                             f"{small},{large}", *rate, "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("bench admission-calls failed: " + result.stdout + result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def admission_tables(small, large):
    """`anonauth bench admission-tables`: the Admission type in the CLI's own process
    (JSON: CPU ns per admit at each size)."""
    result = subprocess.run([str(BIN / "anonauth"), "bench", "admission-tables", "--addresses",
                             f"{small},{large}", "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("bench admission-tables failed: " + result.stdout + result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("BENCH_SECONDS", "10")))
    parser.add_argument("--window", type=int, default=950_000)
    parser.add_argument("--accounts", type=int, default=1_000_000)
    # 10,000 accounts' pass takes 0.1 s: too few of /proc's 10 ms ticks for a ratio.
    parser.add_argument("--cleanup-small", type=int, default=50_000)
    parser.add_argument("--cleanup-accounts", type=int, default=5_000_000)
    parser.add_argument("--cleanup-due", type=int, default=1_000_000)
    parser.add_argument("--cleanup-uid-orders", default="creation,random")
    parser.add_argument("--parts", default=",".join(PARTS))
    args = parser.parse_args()
    parts = args.parts.split(",")
    if not set(parts) <= set(PARTS):
        raise SystemExit(f"--parts: expected some of {', '.join(PARTS)}")
    s = str(args.seconds)
    model, avx512 = bench_large.cpu_model()
    print(f"CPU: {model}, {os.cpu_count()} cores, AVX-512: {'yes' if avx512 else 'no'}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    rsa = rsa_signs_per_second()
    rows = []
    if "signup" in parts:
        rows += signup_rounds(rsa, s, args.window)
    if "reads" in parts and args.accounts > 0:
        rows += [(name, "10,000 accounts", f"{args.accounts:,} more accounts", small, large)
                 for name, small, large in accounts_rounds(rsa, s, args.accounts)]
    if "refresh" in parts:
        small, large, most = refresh_rounds(rsa, s)
        rows.append(("RefreshToken", "1 session on the account", f"{most} sessions on the account", small, large))
    if "cleanup" in parts:
        small_due = args.cleanup_small // 5
        settle = max(2, args.cleanup_accounts // 400_000)
        small_name = f"{args.cleanup_small:,} accounts, {small_due:,} due"
        large_name = f"{args.cleanup_accounts:,} accounts, {args.cleanup_due:,} due"
        for order in args.cleanup_uid_orders.split(","):
            _, small_wall, small_cpu = cleanup_pass(args.cleanup_small, small_due, 2, order)
            _, large_wall, large_cpu = cleanup_pass(args.cleanup_accounts, args.cleanup_due, settle, order)
            rows.append((f"clean-up pass (--uid-order {order}), CPU per deleted account", small_name, large_name,
                         small_cpu, large_cpu))
            rows.append((f"clean-up pass (--uid-order {order}), wall time per deleted account", small_name,
                         large_name, small_wall, large_wall))
    if "admission" in parts:
        names = {"refresh": "RefreshToken", "signup": "anonymous SignUp"}
        shapes = {"tracked": "from addresses the tables hold", "new": "from new addresses"}
        for rate in (None, 1):
            calls = admission_calls(1_000, 1_000_000, rate)["rows"]
            rates = "default rates" if rate is None else f"rates {rate}/s per address"
            for kind in ("refresh", "signup"):
                for shape in ("tracked", "new"):
                    small, large = [row for row in calls if row["kind"] == kind and row["shape"] == shape]
                    rows.append((f"{names[kind]} {shapes[shape]} (in process, {rates}), CPU per call",
                                 f"1,000 addresses ({small['keys_after_fill']:,} keys)",
                                 f"1,000,000 addresses ({large['keys_after_fill']:,} keys)",
                                 small["cpu_us_per_call"], large["cpu_us_per_call"]))
        tables = admission_tables(1_000, 1_000_000)
        measured = tables["rows"]
        small, large = tables["throttle"]
        rows.append(("failed-sign-in throttle (in process, default bound), per attempt", "1,000 addresses",
                     f"1,000,000 addresses ({large['tracked_keys']:,} keys tracked)",
                     small["cpu_ns_per_attempt"] / 1000, large["cpu_ns_per_attempt"] / 1000))
        for capped in (False, True):
            small, large = [row for row in measured if row["default_cap"] == capped]
            cap = f"key cap {small['max_keys']:,}" if capped else "every address tracked"
            rows.append((f"admission (in process, {cap}), per admission", "1,000 addresses",
                         f"1,000,000 addresses ({large['tracked_keys']:,} keys tracked)",
                         small["cpu_ns_per_admit"] / 1000, large["cpu_ns_per_admit"] / 1000))
    print(f"\nload average {os.getloadavg()[0]:.1f}")
    print("\n| path | small | large | CPU per call small | large | ratio (goal <= 1.2) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, small_name, large_name, small, large in rows:
        print(f"| {name} | {small_name} | {large_name} | {small:.{3 if small < 10 else 0}f} us "
              f"| {large:.{3 if large < 10 else 0}f} us | {large / small:.2f}x |")


PARTS = ("signup", "reads", "refresh", "cleanup", "admission")


def signup_rounds(rsa, s, window_wanted):
    """Sign-ups from one address at its window as the round leaves it and with up to
    `window_wanted` more written into it, beside the same rounds from an address per call."""
    daemon = Daemon()
    try:
        raise_quota(daemon, 1_000_000)
        load = ["--connections", "16", "--concurrency", "4", "--seconds", s]

        def cost(*extra):
            run = bench(daemon, rsa, "signup", *load, *extra)
            return run["server_cpu_us_per_call"], run["calls"]

        many_small, _ = cost()
        one_small, calls = cost("--end-user-ip", ADDRESS)
        # Room under the quota for the second round, which may run faster than the first.
        window = min(window_wanted, 1_000_000 - 3 * calls)
        started = time.monotonic()
        prefill(daemon, window)
        print(f"prefilled {window:,} sign-ups of {ADDRESS} in {time.monotonic() - started:.1f} s", flush=True)
        many_large, _ = cost()
        one_large, _ = cost("--end-user-ip", ADDRESS)
    finally:
        daemon.stop()
    return [("sign-up, one address (quota 1,000,000)", f"its window as the round leaves it (<= {calls:,})",
             f"{window:,} more in the window", one_small, one_large),
            ("sign-up, an address per call (control)", "as before", "as before", many_small, many_large)]


def accounts_rounds(rsa, seconds, accounts):
    """VerifyIdToken with check_revoked and GetAccountInfo (each bench makes its own
    accounts first) and ListAccounts pages (walks from 64 places of the uid space) on a
    store of 10,000 accounts, then with `accounts` more loaded into the stopped store:
    [(name, small, large)] of the daemon's CPU per call."""
    # The first bench makes 10,000 accounts: the small store's size, and enough that
    # ListAccounts' pages are full there too.
    kinds = [("VerifyIdToken check_revoked", ["verify", "--check-revoked", "--accounts", "10000"]),
             ("GetAccountInfo", ["account-info"]), ("ListAccounts, a page of 100", ["list-accounts"])]
    load = ["--connections", "16", "--concurrency", "8", "--seconds", seconds]
    with scratch_daemon("anonauth-scaling-") as daemon:
        figures = {}
        for phase in ("small", "large"):
            if phase == "large":
                started = time.monotonic()
                subprocess.run([sys.executable, str(ROOT / "Scripts" / "load_accounts.py"), daemon.dir,
                                str(accounts)], check=True, stdout=subprocess.DEVNULL)
                print(f"loaded {accounts:,} accounts in {time.monotonic() - started:.0f} s", flush=True)
            daemon.start()
            # The integrity check each start runs in the background reads every page.
            time.sleep(10 if phase == "large" else 1)
            for name, kind in kinds:
                figures[(name, phase)] = bench_large.bench(daemon, rsa, *kind, *load)["server_cpu_us_per_call"]
            daemon.stop()
        return [(name, figures[(name, "small")], figures[(name, "large")]) for name, _ in kinds]


if __name__ == "__main__":
    main()
