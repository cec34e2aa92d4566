#!/usr/bin/env python3
"""Two builds side by side: the daemon's CPU per call and the calls per second of each
hot path, measured in alternating rounds of one run against a fresh release daemon of
each build (the same flags as `make bench`), printed as ratios of the second build to
the first. A refactoring that must not change behaviour (issue 39) shows here whether it
changed cost; the machine's noise moves single rounds, so each figure is the median of
its rounds.

    python3 Scripts/bench_compare.py BEFORE_DIR AFTER_DIR [--rounds 3] [--seconds 5]
        [--kinds signup,refresh,verify,account-info,health]

Each DIR holds an `anonauthd` and its `anonauth` (e.g. `.build/release`)."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from bench import ONE_SOURCE_FLAGS, cpu_model

SHAPES = {
    "signup": ["--connections", "64", "--concurrency", "4"],
    "refresh": ["--connections", "64", "--concurrency", "4"],
    "verify": ["--connections", "64", "--concurrency", "8"],
    "account-info": ["--connections", "64", "--concurrency", "8"],
    "health": ["--connections", "64", "--concurrency", "8"],
}


class Build:
    """A fresh daemon of one build in a temporary data dir, for one round."""

    def __init__(self, directory):
        self.bin = directory
        self.dir = tempfile.mkdtemp(prefix="anonauth-compare-")
        self.proc = subprocess.Popen(
            [os.path.join(directory, "anonauthd"), "--dev", "--data-dir", self.dir, "--listen", "127.0.0.1:0",
             "--ops-listen", "127.0.0.1:0", "--log-level", "warn", *ONE_SOURCE_FLAGS,
             "--max-connections", "20000"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        json.loads(self.proc.stdout.readline())  # ready

    def bench(self, kind, seconds):
        cmd = [os.path.join(self.bin, "anonauth"), "bench", kind, *SHAPES[kind], "--seconds", str(seconds),
               "--data-dir", self.dir, "--json"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"{kind} against {self.bin} failed: {result.stdout[-400:]}{result.stderr[-400:]}")
        return json.loads(result.stdout.strip().splitlines()[-1])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def measure(directory, kind, seconds):
    build = Build(directory)
    try:
        report = build.bench(kind, seconds)
    finally:
        build.stop()
    return report.get("server_cpu_us_per_call", 0.0), report["calls_per_second"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--kinds", default="signup,refresh,verify,account-info,health")
    args = parser.parse_args()
    model, avx512 = cpu_model()
    print(f"{args.before} -> {args.after}; {model}, {'with' if avx512 else 'without'} AVX-512, "
          f"load average {os.getloadavg()[0]:.1f}; {args.rounds} alternating rounds of {args.seconds} s")
    print("| path | CPU us/call before | after | ratio | calls/s before | after | ratio |")
    print("|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        runs = {args.before: [], args.after: []}
        for _ in range(args.rounds):
            for directory in (args.before, args.after):
                runs[directory].append(measure(directory, kind, args.seconds))
        cpu = {d: statistics.median(r[0] for r in rounds) for d, rounds in runs.items()}
        rate = {d: statistics.median(r[1] for r in rounds) for d, rounds in runs.items()}
        b, a = args.before, args.after
        print(f"| {kind} | {cpu[b]:.1f} | {cpu[a]:.1f} | {cpu[a] / cpu[b]:.2f} | {rate[b]:,.0f} | {rate[a]:,.0f} | "
              f"{rate[a] / rate[b]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
