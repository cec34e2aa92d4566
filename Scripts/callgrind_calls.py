#!/usr/bin/env python3
"""Instructions per call, counted by valgrind's callgrind: a figure that does not move
with the machine's noise, for comparing two builds of a hot path.

    python3 Scripts/callgrind_calls.py [KIND] [--seconds S] [--top N] [--json] [--protocol http|grpc]
                                       [--daemon PATH]

Runs the release `anonauthd --dev` under `valgrind --tool=callgrind` (all threads; a
copy without DWARF, which valgrind 3.19 cannot read from this toolchain), warms up
with `anonauth bench KIND`, zeroes the counters (`callgrind_control -z`), runs the bench
again for S seconds (default 10; at 50-100 times slower, a few hundred calls), dumps
(`callgrind_control -d`) and reads the dump. It prints, per call: all instructions;
those inside the signature (`EVP_DigestSignInit` and `EVP_DigestSign`, inclusive: the
RS256 sign of the token);
everything else, also as a fraction of the signature; the instructions by library
(self cost); and the N functions outside libcrypto with the most. `--protocol http`
passes itself to the bench (`signup` only): the sign-up over HTTPS/JSON instead of the
native transport, so the two can be compared instruction by instruction; `--protocol
grpc` likewise over gRPC (HTTP/2), for `signup` and `health`. The bench's HTTPS side opens
its connections after the zeroing and warms each up with one request of the workload (a
sign-up: `HTTPFleet`), where native and gRPC warm up with a health check; those warm-up
sign-ups are counted as calls, or their signatures and the rest of their work would be
spread over the measured calls alone (8 sign-ups on about 200 to 600 calls: +1 to 4 %).
`signatures` is how many tokens the daemon signed (calls of `EVP_DigestSignInit`): for
`signup`, one a call. `--daemon PATH` runs another
`anonauthd` than the release build's (a copy of an earlier build: before and after a
change, with the same bench client).

Instructions are not time: the kernel's work (syscalls, page copies, context switches)
is not counted at all, and valgrind's CPU has no AVX-512, so OpenSSL takes its AVX2
path. Compare builds with this, and time with `anonauth bench`."""

import argparse
import collections
import json
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import ONE_SOURCE_FLAGS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = ROOT / ".build" / "release"
# The signature: our RS256 sign is EVP_DigestSignInit, then EVP_DigestSign (twice: size, sign).
SIGN_FUNCTIONS = ("EVP_DigestSignInit", "EVP_DigestSign")
# The bench's shape: 4 connections x 2 calls in flight (HTTPS: 8 connections, one each).
CONNECTIONS, CONCURRENCY = 4, 2
NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def parse(path):
    """Self cost by object and by function, the inclusive cost of SIGN_FUNCTIONS and how
    many times EVP_DigestSignInit was called (one a signature), from a callgrind dump
    with one event (Ir). Names come compressed: "(id) name" the
    first time, "(id)" after."""
    names = {"ob": {}, "fn": {}}
    by_object, by_function = collections.Counter(), collections.Counter()
    sign_inclusive = 0
    signatures = 0
    obj = fn = callee = None
    pending_call = False
    calling_from_sign = False

    def resolve(kind, text):
        match = NAME.match(text.strip())
        if not match:
            return text.strip()
        ident, name = match.groups()
        table = names["ob" if kind in ("ob", "cob") else "fn"]
        if name is not None:
            table[ident] = name
        return table.get(ident, ident)

    with open(path) as f:
        for line in f:
            if not line or line[0] == "\n":
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    pending_call = False
                    if calling_from_sign:
                        sign_inclusive += cost
                else:
                    by_object[obj] += cost
                    by_function[(obj, fn)] += cost
                    if fn in SIGN_FUNCTIONS:
                        sign_inclusive += cost
                continue
            key, _, value = line.rstrip("\n").partition("=")
            if key == "ob":
                obj = resolve("ob", value)
            elif key == "fn":
                fn = resolve("fn", value)
            elif key == "cob":
                resolve("cob", value)
            elif key == "cfn":
                callee = resolve("cfn", value)
            elif key == "calls":
                pending_call = True
                calling_from_sign = fn in SIGN_FUNCTIONS
                if callee == SIGN_FUNCTIONS[0]:
                    signatures += int(value.split()[0])
    return by_object, by_function, sign_inclusive, signatures


def measure(args, binary, data, out, work):
    """Runs the daemon under callgrind, warms up, zeroes, benches, dumps; returns the
    bench's report. The daemon is stopped whatever happens."""
    daemon = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary), "--dev",
         "--data-dir", str(data), "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0",
         "--log-level", "warn", *ONE_SOURCE_FLAGS],
        stdout=subprocess.PIPE, stderr=open(work / "valgrind.log", "w"), text=True)
    try:
        json.loads(daemon.stdout.readline())
        bench = [str(BIN / "anonauth"), "bench", args.kind, "--data-dir", str(data), "--connections",
                 str(CONNECTIONS), "--concurrency", str(CONCURRENCY), "--json", "--rsa-signs-per-second", "1"]
        if args.protocol != "native":
            bench += ["--protocol", args.protocol]
        subprocess.run(bench + ["--seconds", "3"], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-z", str(daemon.pid)], check=True, capture_output=True)
        run = subprocess.run(bench + ["--seconds", str(args.seconds)], check=True, capture_output=True, text=True)
        subprocess.run(["callgrind_control", "-d", str(daemon.pid)], check=True, capture_output=True)
        report = json.loads(run.stdout.strip().splitlines()[-1])
        # `--protocol http` or `grpc` reports each transport's figures under its name.
        return report.get(args.protocol, report)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=120)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", nargs="?", default="signup")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--protocol", choices=("native", "http", "grpc"), default="native")
    parser.add_argument("--daemon", type=pathlib.Path, default=BIN / "anonauthd")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    work = pathlib.Path(tempfile.mkdtemp(prefix="anonauth-callgrind-"))
    binary = work / "anonauthd"
    data = work / "data"
    out = work / "callgrind.out"
    try:
        subprocess.run(["objcopy", "--strip-debug", str(args.daemon), str(binary)], check=True)
        report = measure(args, binary, data, out, work)
        dumps = [p for p in work.glob("callgrind.out.*") if p.stat().st_size > 0]
        if not dumps:
            raise SystemExit("callgrind wrote no dump")
        by_object, by_function, sign, signatures = parse(min(dumps, key=lambda p: p.stat().st_mtime))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    warm_up = CONNECTIONS * CONCURRENCY if args.protocol == "http" else 0
    calls = report["calls"] + report.get("failures", 0) + warm_up
    total = sum(by_object.values())
    result = {
        "kind": args.kind, "protocol": args.protocol, "calls": calls, "warm_up_calls": warm_up,
        "signatures": signatures,
        "instructions_per_call": round(total / calls),
        "signature_instructions_per_call": round(sign / calls),
        "other_instructions_per_call": round((total - sign) / calls),
        "other_per_signature": round((total - sign) / sign, 3) if sign else None,
        "by_object": {pathlib.Path(k or "?").name: round(v / calls) for k, v in by_object.most_common()},
        "top_functions_outside_libcrypto": [
            [pathlib.Path(o or "?").name, f, round(v / calls)]
            for (o, f), v in by_function.most_common() if "libcrypto" not in (o or "")][:args.top],
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.kind} ({args.protocol}): {calls} calls under callgrind ({warm_up} of them the"
          f" connections' warm-up), {signatures} signatures, instructions per call")
    print(f"  all                      {result['instructions_per_call']:>12,}")
    print(f"  the signature            {result['signature_instructions_per_call']:>12,}"
          f"  ({' + '.join(SIGN_FUNCTIONS)}, inclusive)")
    other = result["other_per_signature"]
    print(f"  everything else          {result['other_instructions_per_call']:>12,}"
          + (f"  = {other} x the signature" if other is not None else ""))
    print("  by library (self):")
    for name, value in result["by_object"].items():
        if value:
            print(f"    {name:40} {value:>12,}")
    print(f"  the {args.top} functions with the most outside libcrypto (self):")
    for obj, fn, value in result["top_functions_outside_libcrypto"]:
        print(f"    {value:>10,}  {fn}  [{obj}]")


if __name__ == "__main__":
    sys.exit(main())
