#!/usr/bin/env python3
"""gRPC calls from h2load (Debian's nghttp2-client), a load generator that shares no code
with AnonAuth: it writes the length-prefixed request body (an anonymous SignUp, or a
HealthService Check), for sign-ups lifts the project's per-IP sign-up quota (every
h2load call comes from one address and carries the same headers), runs h2load over TLS
with ALPN h2 against the daemon, and reports the daemon's calls per second and CPU per
call from its /metrics before and after.

    python3 Scripts/h2load_grpc.py --data-dir DIR [--method signup|health] [--clients 64]
        [--streams 4] [--seconds 10] [--rounds 3] [--rsa-signs-per-second R] [--json]

It runs `--rounds` consecutive rounds against the one daemon (3 by default) and prints
each round's calls per second and CPU per call, then the last round's CPU per call over
the first's: a cost that grows with what earlier rounds left in the store (the sign-ups
of one address in its quota window, say) shows as a ratio above 1.

DIR holds the daemon's client.json (rpc, ops, api_key, as `anonauthd --dev` writes it).
h2load counts an HTTP 200 as a success whatever its grpc-status says, so the calls that
count are the daemon's own: the method's calls answered OK and with any other status
(grpc_failures) in anonauth_rpc_calls_total, and for sign-ups anonauth_sign_ups_total.
Every sign-up counts against one address's quota window, which the daemon reads on each
one (a sum of at most 121 per-minute counters since migration 10, whatever the window
holds; before, a count of its sign-ups that grew with each round); the health check has
no such difference. Start the daemon as `make bench` does (bench.py's
ONE_SOURCE_FLAGS), or fair admission's per-IP write rate refuses most of them."""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
# What h2load can send: each method's path and request message. SignUpRequest{anonymous:
# AnonymousSignUp{}} is field 1, length-delimited, empty; CheckRequest has no fields.
METHODS = {
    "signup": ("/anonauth.v1.AccountService/SignUp", bytes([0x0A, 0x00])),
    "health": ("/anonauth.v1.HealthService/Check", b""),
}


def grpc_message(message: bytes) -> bytes:
    """gRPC's length prefix: flag 0 (uncompressed), then the length, big-endian."""
    return bytes([0]) + len(message).to_bytes(4, "big") + message


def metric(ops, name):
    with urllib.request.urlopen(f"http://{ops}/metrics", timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def calls_by_outcome(ops, path):
    """Calls to `path` the daemon answered: (OK, any other status)."""
    with urllib.request.urlopen(f"http://{ops}/metrics", timeout=10) as response:
        text = response.read().decode()
    prefix = 'anonauth_rpc_calls_total{method="' + path + '",code="'
    ok = failed = 0.0
    for line in text.splitlines():
        if line.startswith(prefix):
            value = float(line.rsplit(" ", 1)[1])
            if line.startswith(prefix + 'OK"'):
                ok += value
            else:
                failed += value
    return ok, failed


def snapshot(ops, path):
    values = {name: metric(ops, name) for name in (
        "process_cpu_seconds_total", "anonauth_sign_ups_total", "anonauth_sign_up_quota_refusals_total")}
    values["ok"], values["failed"] = calls_by_outcome(ops, path)
    return values


def lift_quota(cli, data_dir):
    result = subprocess.run(
        [cli, "admin", "update-config", "sign_up_quota_per_hour=1000000", "--data-dir", data_dir],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("update-config failed: " + result.stdout + result.stderr)


def parse_h2load(text):
    """h2load's summary: requests and their outcome, req/s, and the status-code counts."""
    out = {}
    match = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", text)
    if match:
        out["h2load_seconds"] = float(match.group(1)) / (1000 if match.group(2) == "ms" else 1)
        out["h2load_requests_per_second"] = float(match.group(3))
    match = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                      r"(\d+) errored", text)
    if match:
        out.update(zip(("total", "started", "done", "succeeded", "failed", "errored"),
                       (int(g) for g in match.groups())))
    match = re.search(r"status codes: (\d+) 2xx", text)
    if match:
        out["status_2xx"] = int(match.group(1))
    return out


def run(data_dir, clients=64, streams=4, seconds=10, rsa=None, cli=None, method="signup"):
    cli = cli or os.environ.get("ANONAUTH_CLI") or str(ROOT / ".build" / "release" / "anonauth")
    with open(os.path.join(data_dir, "client.json")) as f:
        client = json.load(f)
    path, message = METHODS[method]
    if method == "signup":
        lift_quota(cli, data_dir)
    with tempfile.NamedTemporaryFile(prefix="grpc-request-", suffix=".bin", delete=False) as f:
        f.write(grpc_message(message))
        body = f.name
    command = [
        "h2load", "--npn-list=h2", "-c", str(clients), "-m", str(streams), "-D", str(seconds),
        "-d", body, "-H", "content-type: application/grpc", "-H", "te: trailers",
        "-H", f"x-api-key: {client['api_key']}", f"https://{client['rpc']}{path}"]
    try:
        before = snapshot(client["ops"], path)
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120)
        wall = time.monotonic() - started
        after = snapshot(client["ops"], path)
    finally:
        os.remove(body)
    if result.returncode != 0:
        raise SystemExit("h2load failed: " + result.stdout[-2000:] + result.stderr[-2000:])
    report = parse_h2load(result.stdout)
    sign_ups = after["anonauth_sign_ups_total"] - before["anonauth_sign_ups_total"]
    refused = after["anonauth_sign_up_quota_refusals_total"] - before["anonauth_sign_up_quota_refusals_total"]
    ok = after["ok"] - before["ok"]
    failed = after["failed"] - before["failed"]
    cpu = after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]
    duration = report.get("h2load_seconds") or wall
    report.update(bench=f"h2load grpc {method}", clients=clients, streams=streams, calls_ok=int(ok),
                  grpc_failures=int(failed), calls_per_second=round(ok / duration, 1),
                  command=" ".join(command[:command.index("-d")]) + " -d BODY ... " + command[-1])
    if method == "signup":
        report.update(sign_ups=int(sign_ups), quota_refusals=int(refused),
                      sign_ups_per_second=round(sign_ups / duration, 1))
    if ok > 0:
        report["server_cpu_us_per_call"] = round(cpu / ok * 1e6, 1)
        if rsa:
            report["server_cpu_per_call_rsa2048_signs"] = round(cpu / ok * rsa, 3)
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--streams", type=int, default=4, help="concurrent streams per connection (h2load -m)")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--method", choices=sorted(METHODS), default="signup")
    parser.add_argument("--rsa-signs-per-second", type=float)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="consecutive rounds on the one daemon")
    args = parser.parse_args()
    reports = [run(args.data_dir, args.clients, args.streams, args.seconds, args.rsa_signs_per_second,
                   method=args.method) for _ in range(max(1, args.rounds))]
    if args.json:
        print(json.dumps(reports if len(reports) > 1 else reports[0]))
        return
    for index, report in enumerate(reports, 1):
        print(f"round {index}: h2load gRPC {args.method} ({args.clients} connections x {args.streams} streams, "
              f"{args.seconds} s): {report['calls_per_second']:,}/s answered OK "
              f"({report.get('h2load_requests_per_second', 0):,} req/s by h2load, "
              f"{report['grpc_failures']} answered with an error)")
        if "server_cpu_us_per_call" in report:
            print(f"  daemon CPU per call: {report['server_cpu_us_per_call']} us")
    first, last = reports[0].get("server_cpu_us_per_call"), reports[-1].get("server_cpu_us_per_call")
    if len(reports) > 1 and first and last:
        print(f"CPU per call, round {len(reports)} / round 1: {last / first:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
