#!/usr/bin/env python3
"""`make bench-large`: the performance goals at 5 million accounts, in one run against
release daemons (synchronous=FULL), each figure beside its goal:

  1. a fresh daemon's sign-up CPU per call on its empty store (the reference);
  2. `load_accounts.py`: ACCOUNTS accounts with refresh tokens, DUE more of them due for
     clean-up (5,000,000 in all by default), into another daemon's stopped store; bytes
     per account on disk;
  3. start to ready, three times;
  4. sign-up CPU per call on the large store, against the empty store's;
  5. ListAccounts pages and GetAccountInfo, closed loop for their maximum, then open
     loop at half of it for the p99;
  6. sign-ups open loop at half their maximum, alone, then while the background
     worker's pass deletes the DUE accounts: the p99 with and without, and the accounts
     deleted per second until none is due.

    python3 Scripts/bench_large.py [--accounts 4000000] [--due 1000000] [--seconds 10]

BENCH_DAEMON_ARGS adds flags to both daemons (say `--cleanup-job-budget-us 1000`). The
background clean-up is held off (--cleanup-interval-ms one day) until step 6 restarts
the daemon with a two-second interval: the figures are those of the worker's own
scheduled pass. Needs about 3 GiB of disk in the temporary directory."""

import argparse
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import BIN, ONE_SOURCE_FLAGS, ROOT, cpu_model, rsa_signs_per_second  # noqa: E402


class Daemon:
    def __init__(self, directory):
        self.dir = directory
        self.proc = None
        self.ops = None

    def start(self, cleanup_interval_ms=86_400_000):
        """Starts the daemon and returns the seconds from exec to its ready line. The
        background clean-up's first pass comes one interval after the start."""
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [str(BIN / "anonauthd"), "--dev", "--data-dir", self.dir, "--listen", "127.0.0.1:0",
             "--ops-listen", "127.0.0.1:0", "--log-level", "warn", "--cleanup-interval-ms", str(cleanup_interval_ms),
             *ONE_SOURCE_FLAGS, *os.environ.get("BENCH_DAEMON_ARGS", "").split()],
            stdout=subprocess.PIPE, stderr=open(self.dir + ".log", "a"), text=True)
        line = self.proc.stdout.readline()
        took = time.monotonic() - started
        if not line:
            raise SystemExit(f"the daemon exited: see {self.dir}.log")
        self.ops = json.loads(line)["ops"]
        return took

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=120)


def bench(daemon, rsa, *args):
    result = subprocess.run([str(BIN / "anonauth"), "bench", *args, "--data-dir", daemon.dir, "--json",
                             "--rsa-signs-per-second", str(rsa), "--allow-failures"], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"bench {' '.join(args)} failed: {result.stdout}{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def due_left(daemon):
    """Accounts due for deletion now, counted on the store file (read-only)."""
    db = sqlite3.connect(f"file:{os.path.join(daemon.dir, 'anonauth.db')}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM accounts WHERE scheduled_deletion_at_ms > 0 "
                          "AND scheduled_deletion_at_ms <= ?", (int(time.time() * 1000),)).fetchone()[0]
    finally:
        db.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accounts", type=int, default=4_000_000)
    parser.add_argument("--due", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--cleanup-seconds", type=int, default=30,
                        help="how long each sign-up bench of step 6 runs (alone, then beside the clean-up)")
    args = parser.parse_args()
    s = str(args.seconds)
    total = args.accounts + args.due
    model, avx512 = cpu_model()
    rsa = rsa_signs_per_second()
    print(f"CPU: {model}, {os.cpu_count()} cores, AVX-512: {'yes' if avx512 else 'no'}")
    print(f"openssl speed -seconds 3 rsa2048: {rsa:,.0f} signs/s on one core")

    def row(figure, value, goal, met):
        mark = "" if met is None else ("  met" if met else "  NOT MET")
        print(f"  {figure:52} {value:>40}   goal {goal}{mark}", flush=True)

    work = tempfile.mkdtemp(prefix="anonauth-large-")
    try:
        empty = Daemon(os.path.join(work, "empty"))
        empty.start()
        reference = bench(empty, rsa, "signup", "--connections", "64", "--concurrency", "4", "--seconds", s)
        empty.stop()
        row("empty store: sign-up CPU per call", f"{reference['server_cpu_per_call_rsa2048_signs']:.2f} RSA signs",
            "reference", None)

        large = Daemon(os.path.join(work, "large"))
        large.start()
        large.stop()
        started = time.monotonic()
        subprocess.run([sys.executable, str(ROOT / "Scripts" / "load_accounts.py"), large.dir, str(args.accounts),
                        "--due", str(args.due)], check=True, stdout=subprocess.DEVNULL)
        loaded = time.monotonic() - started
        size = sum(os.path.getsize(os.path.join(large.dir, f)) for f in os.listdir(large.dir)
                   if f.startswith("anonauth.db"))
        row(f"load {total:,} accounts with refresh tokens", f"{loaded:.0f} s; {size / total:.0f} B/account on disk",
            "minutes, not hours", loaded < 1800)

        db = sqlite3.connect(os.path.join(large.dir, "anonauth.db"))
        t0 = time.monotonic()
        db.execute("SELECT count(*) FROM accounts WHERE project_id = 'demo-project'").fetchone()
        counting = time.monotonic() - t0
        db.close()
        row("count(*) of the accounts (each page's total before migration 5)", f"{counting * 1000:.0f} ms",
            "report", None)

        starts = [large.start()]
        for _ in range(2):
            large.stop()
            starts.append(large.start())
        row("start to ready", ", ".join(f"{t * 1000:.0f} ms" for t in starts), "<= 300 ms",
            max(starts) <= 0.3)
        # The integrity check each start runs in the background reads every page (a few
        # CPU-seconds at this size): it would be counted against the sign-ups.
        time.sleep(15)

        signup = bench(large, rsa, "signup", "--connections", "64", "--concurrency", "4", "--seconds", s)
        ratio = signup["server_cpu_per_call_rsa2048_signs"] / reference["server_cpu_per_call_rsa2048_signs"]
        row("sign-up CPU per call vs the empty store",
            f"{signup['server_cpu_per_call_rsa2048_signs']:.2f} signs = {ratio:.2f} x", "<= 1.2 x", ratio <= 1.2)

        for kind, goal, extra in (("list-accounts", 10, ["--page-size", "100"]), ("account-info", 5, [])):
            top = bench(large, rsa, kind, "--connections", "64", "--concurrency", "4", "--seconds", s, *extra)
            rate = max(1, top["calls_per_second"] // 2)
            half = bench(large, rsa, kind, "--connections", "64", "--rate", str(rate), "--seconds", s, *extra)
            row(f"{kind}: p99 at 50 % ({rate:,}/s of {top['calls_per_second']:,}/s)",
                f"{half['p99_ms']:.1f} ms ({half['failures']} failed)", f"<= {goal} ms",
                half["p99_ms"] <= goal and half["failures"] == 0)

        # The background worker's own scheduled pass, on a daemon restarted with a
        # clean-up interval that leaves room for both: its start-up integrity check (it
        # reads every page) is over after 15 s, then sign-ups alone, then the same again
        # from a second before the pass. Both measure for --cleanup-seconds, so the two
        # p99s come from as many calls each.
        rate = max(1, signup["calls_per_second"] // 2)
        due_before = due_left(large)
        large.stop()
        settle = 15  # the start-up integrity check's seconds at this size, and then some
        interval = settle + args.cleanup_seconds + 10
        large.start(cleanup_interval_ms=interval * 1000)
        restarted = time.monotonic()
        time.sleep(settle)
        alone = bench(large, rsa, "signup", "--connections", "64", "--rate", str(rate), "--seconds",
                      str(args.cleanup_seconds))
        t0 = restarted + interval
        time.sleep(max(0.0, t0 - 1 - time.monotonic()))
        during = bench(large, rsa, "signup", "--connections", "64", "--rate", str(rate), "--seconds",
                       str(args.cleanup_seconds))
        left = due_left(large)
        overlapped = left > 0
        while left > 0:
            time.sleep(1)
            left = due_left(large)
        took = time.monotonic() - t0
        deleted = due_before
        rise = during["p99_ms"] / max(0.001, alone["p99_ms"])
        row(f"sign-up p99 at {rate:,}/s, alone / during clean-up",
            f"{alone['p99_ms']:.1f} / {during['p99_ms']:.1f} ms = {rise:.2f} x", "<= 1.5 x", rise <= 1.5)
        row("clean-up: due accounts deleted", f"{deleted:,} in {took:.0f} s = {deleted / took:,.0f}/s"
            + ("" if overlapped else " (ended before the bench)"), "report", None)
        large.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
