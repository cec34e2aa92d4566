#!/usr/bin/env python3
"""The clean-up pass of `bench_scaling.py --parts cleanup`, with two things it cannot do:
several daemon builds (or settings) against the same two stores in one run, and the
daemon's file system calls counted per deleted account (`perf stat` on the syscall
tracepoints), which a shared machine's load does not move as it moves CPU time.

    python3 Scripts/cleanup_syscalls.py --bins before=DIR,after=DIR [--small 50000]
        [--large 5000000] [--large-due 1000000] [--rounds 1] [--count] [--keep DIR]
        [--load-args "--due-spread-days 9 --uid-order creation"]

Each DIR holds an `anonauthd` and an `anonauth`; NAME=DIR:VAR=VALUE;... starts that
daemon with those environment variables. The stores are loaded once (load_accounts.py,
into a store the first daemon made; a fifth of the small one due) and copied for each
pass; --keep names where the loaded stores stay between runs (default: a temporary
directory removed at the end); --load-args passes load_accounts.py's options for the
shape of the stores (each shape is loaded and kept apart). Each pass: the daemon started with its background pass
held off, the integrity check given time to finish, `anonauth admin run-cleanup
--all-projects`, the daemon's CPU from /proc/PID/stat. --count needs perf and the
permission to trace the daemon (root, or perf_event_paranoid <= 1)."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import ONE_SOURCE_FLAGS, ROOT  # noqa: E402

EVENTS = ["syscalls:sys_enter_pread64", "syscalls:sys_enter_pwrite64", "syscalls:sys_enter_fdatasync",
          "syscalls:sys_enter_fsync"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(build, directory):
    """The daemon of `build` ("DIR" or "DIR:VAR=VALUE;...") on `directory`."""
    env = dict(os.environ)
    bindir, _, assignments = build.partition(":")
    for pair in filter(None, assignments.split(";")):
        name, value = pair.split("=", 1)
        env[name] = value
    proc = subprocess.Popen(
        [f"{bindir}/anonauthd", "--dev", "--data-dir", directory, "--listen", "127.0.0.1:0", "--ops-listen",
         "127.0.0.1:0", "--log-level", "warn", "--cleanup-interval-ms", "86400000", *ONE_SOURCE_FLAGS],
        stdout=subprocess.PIPE, stderr=open(directory + ".log", "a"), text=True, env=env)
    if not proc.stdout.readline():
        raise SystemExit(f"the daemon exited: see {directory}.log")
    return proc


def stop(proc):
    proc.terminate()
    proc.wait(timeout=300)


def loaded_store(build, keep, accounts, due, load_args):
    """A directory holding a loaded store of `accounts` accounts, `due` due, of the shape
    `load_args` gives (made once)."""
    shape = "".join(c if c.isalnum() else "-" for c in " ".join(load_args)).strip("-")
    loaded = os.path.join(keep, f"store-{accounts}-{due}{'-' + shape if shape else ''}.loaded")
    if os.path.exists(loaded):
        return loaded
    making = loaded[:-len(".loaded")]
    shutil.rmtree(making, ignore_errors=True)
    os.makedirs(making)
    stop(start(build, making))
    started = time.monotonic()
    subprocess.run([sys.executable, str(ROOT / "Scripts" / "load_accounts.py"), making, str(accounts - due),
                    "--due", str(due), *load_args], check=True, stdout=subprocess.DEVNULL)
    print(f"loaded {accounts:,} accounts ({due:,} due) in {time.monotonic() - started:.0f} s", flush=True)
    os.rename(making, loaded)
    return loaded


def one_pass(build, loaded, settle, count):
    """(deleted, wall us, CPU us per deleted account, syscalls per deleted account)."""
    directory = loaded[:-len(".loaded")]
    shutil.rmtree(directory, ignore_errors=True)
    shutil.copytree(loaded, directory)
    try:
        proc = start(build, directory)
        time.sleep(settle)
        counts_file = directory + ".perf"
        counter = subprocess.Popen(["perf", "stat", "-x", ",", "-e", ",".join(EVENTS), "-p", str(proc.pid), "-o",
                                    counts_file], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL) if count else None
        cpu = cpu_seconds(proc.pid)
        started = time.monotonic()
        result = subprocess.run([f"{build.partition(':')[0]}/anonauth", "admin", "run-cleanup", "--all-projects",
                                 "--json", "--data-dir", directory], capture_output=True, text=True)
        wall = time.monotonic() - started
        cpu = cpu_seconds(proc.pid) - cpu
        counts = {}
        if counter:
            counter.send_signal(2)
            counter.wait()
            for line in open(counts_file):
                fields = line.strip().split(",")
                if len(fields) > 2 and fields[0].isdigit():
                    counts[fields[2].rsplit("_", 1)[-1]] = int(fields[0])
        stop(proc)
        if result.returncode != 0:
            raise SystemExit("run-cleanup failed: " + result.stdout + result.stderr)
        deleted = json.loads(result.stdout.strip().splitlines()[-1])["deleted"]
        return deleted, wall * 1e6 / deleted, cpu * 1e6 / deleted, {k: v / deleted for k, v in counts.items()}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bins", default=f"this={ROOT / '.build' / 'release'}")
    parser.add_argument("--small", type=int, default=50_000)
    parser.add_argument("--large", type=int, default=5_000_000)
    parser.add_argument("--large-due", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--count", action="store_true")
    parser.add_argument("--keep")
    parser.add_argument("--load-args", default="")
    args = parser.parse_args()
    builds = [entry.split("=", 1) for entry in args.bins.split(",")]
    keep = args.keep or tempfile.mkdtemp(prefix="anonauth-cleanup-syscalls-")
    os.makedirs(keep, exist_ok=True)
    try:
        load_args = args.load_args.split()
        stores = [("small", loaded_store(builds[0][1], keep, args.small, args.small // 5, load_args), 2),
                  ("large", loaded_store(builds[0][1], keep, args.large, args.large_due, load_args),
                   max(2, args.large // 400_000))]
        for round_number in range(args.rounds):
            for name, build in builds:
                figures = {}
                for size, loaded, settle in stores:
                    deleted, wall, cpu, counts = one_pass(build, loaded, settle, args.count)
                    figures[size] = (wall, cpu)
                    shown = "".join(f", {k} {v:.3f}" for k, v in counts.items())
                    print(f"round {round_number + 1} {name} {size}: {deleted:,} deleted, daemon CPU {cpu:.1f} us and "
                          f"wall {wall:.1f} us per deleted account{shown} (load {os.getloadavg()[0]:.1f})",
                          flush=True)
                print(f"round {round_number + 1} {name}: CPU ratio {figures['large'][1] / figures['small'][1]:.2f}x, "
                      f"wall ratio {figures['large'][0] / figures['small'][0]:.2f}x", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    main()
