#!/usr/bin/env python3
"""Soak: well-behaved clients beside abusive ones against one real daemon, for a while
(default 10 minutes), then the daemon's resident memory, open descriptors and threads at
the start, at the peak and at the end, and the well-behaved calls' errors and latency.

    .build-venv/bin/python Scripts/soak.py [--seconds 600] [--binary .build/release/anonauthd]

Every connection goes to 127.0.0.1; every loop ends with the run. A command, not a test:
`make test` has the hostile-client tests; this shows that nothing creeps over time."""

import argparse
import os
import pathlib
import random
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
import abuse  # noqa: E402
from conftest import Daemon, call, load_pb  # noqa: E402

ACCOUNT = "/anonauth.v1.AccountService/"


def process_figures(pid):
    """(resident MiB, open descriptors, threads) of the daemon, from /proc."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd")), threads


class Soak:
    def __init__(self, daemon, pb, seconds):
        self.daemon = daemon
        self.pb = pb
        self.until = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.latencies = []
        self.outcomes = Counter()

    def running(self):
        return time.monotonic() < self.until

    # Well-behaved: a backend that signs users up for their own IPs, refreshes, verifies.
    def well_behaved(self, worker):
        pb = self.pb
        api = {"x-api-key": self.daemon.client_json["api_key"],
               "authorization": "Bearer " + self.daemon.client_json["admin_key"]}
        ids = iter(range(1, 1 << 62))
        sock = None
        while self.running():
            try:
                if sock is None:
                    sock = self.daemon.connect()
                    sock.settimeout(10)
                meta = {**api, "x-end-user-ip": f"10.{worker}.{random.randrange(256)}.{random.randrange(1, 255)}"}
                steps = [("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()),
                          pb.account.AuthResponse)]
                started = time.monotonic()
                status, reply = call(sock, pb, ACCOUNT + steps[0][0], steps[0][1], steps[0][2], meta, next(ids))
                self.record(started, status)
                if status.code == 0:
                    for method, request, response in [
                        ("RefreshToken", pb.account.RefreshTokenRequest(refresh_token=reply.refresh_token),
                         pb.account.AuthResponse),
                        ("GetAccountInfo", pb.account.GetAccountInfoRequest(id_token=reply.id_token),
                         pb.account.AccountInfo),
                    ]:
                        started = time.monotonic()
                        status, _ = call(sock, pb, ACCOUNT + method, request, response, meta, next(ids))
                        self.record(started, status)
                    started = time.monotonic()
                    status, _ = call(sock, pb, "/anonauth.v1.TokenService/VerifyIdToken",
                                     pb.token.VerifyIdTokenRequest(id_token=reply.id_token, check_revoked=True),
                                     pb.token.VerifyIdTokenResponse, meta, next(ids))
                    self.record(started, status)
                time.sleep(0.02)
            except (OSError, EOFError) as e:
                with self.lock:
                    self.outcomes[f"connection error: {type(e).__name__}"] += 1
                sock = None
                time.sleep(0.2)

    def record(self, started, status):
        with self.lock:
            self.latencies.append(time.monotonic() - started)
            self.outcomes["OK" if status.code == 0 else status.reason] += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--binary", default=None)
    args = parser.parse_args()
    binary = args.binary or next((str(p) for p in [ROOT / ".build/release/anonauthd", ROOT / ".build/debug/anonauthd"]
                                  if p.exists()), None)
    os.environ["ANONAUTHD"] = binary
    pb = load_pb()
    daemon = Daemon(extra=["--log-level", "warning"])
    pid = daemon.proc.pid
    soak = Soak(daemon, pb, args.seconds)
    well = [threading.Thread(target=soak.well_behaved, args=(w,)) for w in range(2)]
    for t in well:
        t.start()
    time.sleep(5)
    start = process_figures(pid)
    stop, abusers, tally = abuse.start(daemon, pb)
    peak = start
    probes = Counter()
    while soak.running():
        time.sleep(5)
        figures = process_figures(pid)
        peak = tuple(max(a, b) for a, b in zip(peak, figures))
        try:
            with urllib.request.urlopen(f"http://{daemon.ops[0]}:{daemon.ops[1]}/healthz", timeout=2) as r:
                probes[r.status] += 1
        except (urllib.error.URLError, OSError):
            probes["failed"] += 1
    stop.set()
    for t in abusers + well:
        t.join(timeout=60)
    time.sleep(10)  # idle connections time out, buffers drain
    end = process_figures(pid)
    assert daemon.stop() == 0, "the daemon did not stop cleanly"

    latencies = sorted(soak.latencies)
    def pct(p):
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else 0
    print(f"soak: {args.seconds} s, {binary}")
    print(f"{'':10} {'RSS MiB':>8} {'fds':>6} {'threads':>8}")
    for name, (rss, fds, threads) in [("start", start), ("peak", peak), ("end", end)]:
        print(f"{name:10} {rss:8.1f} {fds:6d} {threads:8d}")
    print(f"well-behaved calls: {sum(soak.outcomes.values())}, outcomes: {dict(soak.outcomes)}")
    print(f"well-behaved latency ms: p50 {pct(0.5):.1f}, p99 {pct(0.99):.1f}, max {pct(1.0):.1f}")
    print(f"/healthz every 5 s: {dict(probes)}")
    print(f"abuse sent: {dict(tally.counts)}")


if __name__ == "__main__":
    main()
