#!/usr/bin/env python3
"""gRPC anonymous sign-ups from h2load (Debian's nghttp2-client), a load generator that
shares no code with AnonAuth: it writes the length-prefixed SignUp request body, lifts
the project's per-IP sign-up quota (every h2load call comes from one address and carries
the same headers), runs h2load over TLS with ALPN h2 against the daemon, and reports the
daemon's sign-ups per second and CPU per call from its /metrics before and after.

    python3 Scripts/h2load_grpc.py --data-dir DIR [--clients 64] [--streams 4] [--seconds 10]
        [--rsa-signs-per-second R] [--json]

DIR holds the daemon's client.json (rpc, ops, api_key, as `anonauthd --dev` writes it).
h2load counts an HTTP 200 as a success whatever its grpc-status says, so the calls that
count are the daemon's own: anonauth_sign_ups_total, and SignUp calls answered with any
other status (grpc_failures). Start the daemon as `make bench` does (bench.py's
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
METHOD = "/anonauth.v1.AccountService/SignUp"
# SignUpRequest{anonymous: AnonymousSignUp{}}: field 1, length-delimited, empty.
SIGN_UP = bytes([0x0A, 0x00])


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


def failed_sign_ups(ops):
    """SignUp calls the daemon answered with any status but OK."""
    with urllib.request.urlopen(f"http://{ops}/metrics", timeout=10) as response:
        text = response.read().decode()
    prefix = 'anonauth_rpc_calls_total{method="' + METHOD + '",code="'
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(prefix) and not line.startswith(prefix + 'OK"'))


def snapshot(ops):
    values = {name: metric(ops, name) for name in (
        "process_cpu_seconds_total", "anonauth_sign_ups_total", "anonauth_sign_up_quota_refusals_total")}
    values["failed"] = failed_sign_ups(ops)
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


def run(data_dir, clients=64, streams=4, seconds=10, rsa=None, cli=None):
    cli = cli or os.environ.get("ANONAUTH_CLI") or str(ROOT / ".build" / "release" / "anonauth")
    with open(os.path.join(data_dir, "client.json")) as f:
        client = json.load(f)
    lift_quota(cli, data_dir)
    with tempfile.NamedTemporaryFile(prefix="grpc-signup-", suffix=".bin", delete=False) as f:
        f.write(grpc_message(SIGN_UP))
        body = f.name
    command = [
        "h2load", "--npn-list=h2", "-c", str(clients), "-m", str(streams), "-D", str(seconds),
        "-d", body, "-H", "content-type: application/grpc", "-H", "te: trailers",
        "-H", f"x-api-key: {client['api_key']}", f"https://{client['rpc']}{METHOD}"]
    try:
        before = snapshot(client["ops"])
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120)
        wall = time.monotonic() - started
        after = snapshot(client["ops"])
    finally:
        os.remove(body)
    if result.returncode != 0:
        raise SystemExit("h2load failed: " + result.stdout[-2000:] + result.stderr[-2000:])
    report = parse_h2load(result.stdout)
    sign_ups = after["anonauth_sign_ups_total"] - before["anonauth_sign_ups_total"]
    refused = after["anonauth_sign_up_quota_refusals_total"] - before["anonauth_sign_up_quota_refusals_total"]
    failed = after["failed"] - before["failed"]
    cpu = after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]
    duration = report.get("h2load_seconds") or wall
    report.update(bench="h2load grpc signup", clients=clients, streams=streams, sign_ups=int(sign_ups),
                  quota_refusals=int(refused), grpc_failures=int(failed), sign_ups_per_second=round(sign_ups / duration, 1),
                  command=" ".join(command[:command.index("-d")]) + " -d BODY ... " + command[-1])
    if sign_ups > 0:
        report["server_cpu_us_per_call"] = round(cpu / sign_ups * 1e6, 1)
        if rsa:
            report["server_cpu_per_call_rsa2048_signs"] = round(cpu / sign_ups * rsa, 3)
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--streams", type=int, default=4, help="concurrent streams per connection (h2load -m)")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rsa-signs-per-second", type=float)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.data_dir, args.clients, args.streams, args.seconds, args.rsa_signs_per_second)
    if args.json:
        print(json.dumps(report))
        return
    print(f"h2load gRPC sign-up ({args.clients} connections x {args.streams} streams, {args.seconds} s): "
          f"{report['sign_ups_per_second']:,}/s sign-ups ({report.get('h2load_requests_per_second', 0):,} req/s "
          f"by h2load, {report.get('succeeded', 0)} succeeded, {report['grpc_failures']} answered with an error)")
    if "server_cpu_us_per_call" in report:
        print(f"  daemon CPU per sign-up: {report['server_cpu_us_per_call']} us")


if __name__ == "__main__":
    sys.exit(main())
