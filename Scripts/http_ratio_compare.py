#!/usr/bin/env python3
"""The HTTPS/JSON sign-up's CPU against the native one, for one or two builds, in each
connection shape: runs `anonauth bench signup --protocol native,http` (three rounds that
alternate the transports, the ratio taken within the run) against a fresh release
daemon of each build in turn, `--runs` times, and prints every run's ratio and each
build's mean per shape.

    python3 Scripts/http_ratio_compare.py DIR [DIR2] [--runs 2] [--rounds 3] [--seconds 10]
        [--shapes 256x1,64x4] [--warm-up S] [--protocol http|http2]

Each DIR holds an `anonauthd` and an `anonauth` (e.g. `.build/release`); give both the
same `anonauth` so that only the daemon differs. A shape CxK is `--connections C
--concurrency K`: the native side multiplexes K calls on each of C connections, and
HTTP/1.1, which carries one request at a time, opens C x K connections. So `256x1` is
the same shape on both sides (one call in flight per connection), and `64x4` gives the
native side four calls per connection (docs/benchmarks.md says which the goal is judged
on). `--warm-up S` passes itself to the bench: each transport first runs S seconds
unmeasured on the fresh daemon. `--protocol http2` sends the JSON API over HTTP/2
instead (K streams on each of C connections, as native multiplexes), the other
like-for-like shape."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from bench import ONE_SOURCE_FLAGS, cpu_model


def run(directory, shape, args):
    """One fresh daemon of the build, one bench run: its JSON report."""
    data = tempfile.mkdtemp(prefix="anonauth-ratio-")
    daemon = subprocess.Popen(
        [os.path.join(directory, "anonauthd"), "--dev", "--data-dir", data, "--listen", "127.0.0.1:0",
         "--ops-listen", "127.0.0.1:0", "--log-level", "warn", *ONE_SOURCE_FLAGS, "--max-connections", "20000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        json.loads(daemon.stdout.readline())  # ready
        connections, concurrency = shape.split("x")
        result = subprocess.run(
            [os.path.join(directory, "anonauth"), "bench", "signup", "--protocol", f"native,{args.protocol}",
             "--rounds", str(args.rounds), "--seconds", str(args.seconds), "--connections", connections,
             "--concurrency", concurrency, "--data-dir", data, "--json",
             *(["--warm-up", str(args.warm_up)] if args.warm_up else [])],
            capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"bench failed against {directory}: {result.stdout}{result.stderr}")
        return json.loads(result.stdout.strip().splitlines()[-1])
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
        shutil.rmtree(data, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--shapes", default="256x1,64x4")
    parser.add_argument("--warm-up", type=int, default=0)
    parser.add_argument("--protocol", choices=("http", "http2"), default="http")
    args = parser.parse_args()
    model, avx512 = cpu_model()
    print(f"# {model}, AVX-512 {'yes' if avx512 else 'no'}; load average {os.getloadavg()[0]:.1f} at start")
    ratios = {}
    for number in range(1, args.runs + 1):
        for shape in args.shapes.split(","):
            for directory in args.dirs:
                report = run(directory, shape, args)
                ratio = report[f"cpu_ratio_{args.protocol}_native"]
                ratios.setdefault((directory, shape), []).append(ratio)
                native, http = report["native"], report[args.protocol]
                by_round = report[f"cpu_ratio_{args.protocol}_native_by_round"]
                print(f"run {number} {shape} {directory}: {args.protocol}/native {ratio:.3f} "
                      f"(rounds {', '.join(f'{r:.3f}' for r in by_round)}); "
                      f"CPU per call {http.get('server_cpu_us_per_call')} / {native.get('server_cpu_us_per_call')} us; "
                      f"calls/s {http.get('calls_per_second')} / {native.get('calls_per_second')}; "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    for (directory, shape), values in ratios.items():
        print(f"mean {shape} {directory}: {statistics.mean(values):.3f} over {len(values)} runs")


if __name__ == "__main__":
    main()
