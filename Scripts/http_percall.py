#!/usr/bin/env python3
"""Where the daemon's time per sign-up goes, native against HTTPS, in counts per call:
system calls by kind, page faults, context switches, user and system time, and a
cpu-clock profile by library, thread or symbol. Needs `perf` (root, or a
perf_event_paranoid that allows it); hardware counters are not needed (VMs often lack
them).

    python3 Scripts/http_percall.py DIR [--mode sys|sw|profile] [--runs 1]
        [--protocols native,http] [--delay 4] [--window 6] [--by dso|comm|sym]

For each run and protocol: a fresh release daemon from DIR (as
`http_ratio_compare.py` starts it), `DIR/anonauth bench signup --protocol P --rounds 1
--seconds 10 --connections 256 --concurrency 1`, and `perf` attached to the daemon but
counting only from `--delay` seconds for `--window` seconds (perf's control fifo), the
calls of that window read from the daemon's `anonauth_rpc_calls_total` before and after,
so every figure is per call of exactly the window counted. `sys` counts every
`syscalls:sys_enter_*` tracepoint (it slows the daemon: use it for counts, not time),
`sw` the software counters with /proc's user and system time (or `--events`: uprobes
such as `probe_libc:malloc` count calls of a library function), `profile` samples
cpu-clock at 4999 Hz (each sample about 200 us of CPU)."""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from bench import ONE_SOURCE_FLAGS, cpu_model

SW_EVENTS = "task-clock,page-faults,context-switches,cpu-migrations"
SAMPLE_HZ = 4999


def sign_ups(ops):
    """The daemon's answered SignUp calls so far."""
    text = urllib.request.urlopen(f"http://{ops}/metrics", timeout=10).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("anonauth_rpc_calls_total{") and "/SignUp\"" in line)


def cpu_ticks(pid):
    """User and system time of the process, in clock ticks."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def perf_command(mode, out, control):
    """`mode` is "profile", "sys", or the events to count."""
    common = ["-D", "-1", "--control", f"fifo:{control[0]},{control[1]}"]
    if mode == "profile":
        return ["perf", "record", "-q", "-o", out, "-F", str(SAMPLE_HZ), "-e", "cpu-clock", *common]
    events = "syscalls:sys_enter_*" if mode == "sys" else mode
    return ["perf", "stat", "-x,", "-o", out, "-e", events, *common]


def leg(directory, protocol, args, work):
    """One protocol on a fresh daemon: counts per call of the window (a dict)."""
    data = tempfile.mkdtemp(prefix="anonauth-percall-")
    daemon = subprocess.Popen(
        [os.path.join(directory, "anonauthd"), "--dev", "--data-dir", data, "--listen", "127.0.0.1:0",
         "--ops-listen", "127.0.0.1:0", "--log-level", "warn", *ONE_SOURCE_FLAGS, "--max-connections", "20000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    perf = None
    stat_events = args.events if args.mode == "sw" else args.mode
    try:
        ops = json.loads(daemon.stdout.readline())["ops"]
        bench = subprocess.Popen(
            [os.path.join(directory, "anonauth"), "bench", "signup", "--protocol", protocol, "--rounds", "1",
             "--seconds", "10", "--connections", "256", "--concurrency", "1", "--data-dir", data, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Attach once every connection and worker thread exists (perf -p counts the
        # threads there are when it attaches), disabled until the window.
        time.sleep(min(2.0, args.delay))
        out = os.path.join(work, f"{protocol}-{time.monotonic_ns()}")
        control = (out + ".ctl", out + ".ack")
        for fifo in control:
            os.mkfifo(fifo)
        perf = subprocess.Popen(perf_command(stat_events, out, control) + ["-p", str(daemon.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def say(word):
            with open(control[0], "w") as fifo:
                fifo.write(word + "\n")
            with open(control[1]) as ack:
                ack.read(4)

        time.sleep(max(0.0, args.delay - 2.0))
        say("enable")
        calls0, ticks0 = sign_ups(ops), cpu_ticks(daemon.pid)
        time.sleep(args.window)
        ticks1, calls1 = cpu_ticks(daemon.pid), sign_ups(ops)
        say("disable")
        perf.send_signal(2)
        perf.wait()
        report = bench.communicate()[0]
        calls = calls1 - calls0
        if calls <= 0:
            raise SystemExit(f"no sign-ups in the window: {report}")
        tick = os.sysconf("SC_CLK_TCK")
        figures = {"calls": calls,
                   "user_us": (ticks1[0] - ticks0[0]) / tick * 1e6 / calls,
                   "system_us": (ticks1[1] - ticks0[1]) / tick * 1e6 / calls}
        if args.mode == "profile":
            figures.update(profile(out, calls, args.by))
        else:
            for line in open(out):
                parts = line.strip().split(",")
                if line.startswith("#") or len(parts) < 3:
                    continue
                try:
                    value = float(parts[0])
                except ValueError:
                    continue
                if value:
                    figures[parts[2].replace("syscalls:sys_enter_", "")] = value / calls
        return figures
    finally:
        if perf and perf.poll() is None:
            perf.kill()
        daemon.terminate()
        daemon.wait(timeout=60)
        shutil.rmtree(data, ignore_errors=True)


def profile(path, calls, by):
    """Microseconds of CPU per call by `by` (perf report's sort keys)."""
    text = subprocess.run(["perf", "report", "-i", path, "--stdio", "--no-children", "-q", "-F", f"sample,{by}"],
                          capture_output=True, text=True).stdout
    spent = collections.Counter()
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].isdigit():
            spent["us " + parts[1].strip()] += int(parts[0]) * 1e6 / SAMPLE_HZ / calls
    return dict(spent)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--mode", choices=("sys", "sw", "profile"), default="sys")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--protocols", default="native,http")
    parser.add_argument("--delay", type=float, default=4.0)
    parser.add_argument("--window", type=float, default=6.0)
    parser.add_argument("--by", default="dso")
    parser.add_argument("--events", default=SW_EVENTS,
                        help="what --mode sw counts (e.g. uprobes made with `perf probe -x LIB -a malloc`)")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    model, avx512 = cpu_model()
    print(f"# {model}, AVX-512 {'yes' if avx512 else 'no'}; load average {os.getloadavg()[0]:.1f}")
    protocols = args.protocols.split(",")
    work = tempfile.mkdtemp(prefix="anonauth-perf-")
    runs = {protocol: [] for protocol in protocols}
    try:
        for number in range(args.runs):
            for protocol in protocols:
                runs[protocol].append(leg(args.dir, protocol, args, work))
                print(f"run {number + 1} {protocol}: {runs[protocol][-1]['calls']:.0f} calls; "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    means = {p: collections.defaultdict(float) for p in protocols}
    for protocol, figures in runs.items():
        for run in figures:
            for key, value in run.items():
                means[protocol][key] += value / len(figures)
    keys = sorted(set().union(*means.values()) - {"calls"},
                  key=lambda k: -max(abs(means[p].get(k, 0)) for p in protocols))
    print("per call (mean of runs) | " + " | ".join(protocols))
    for key in keys[:args.top]:
        print(f"{key[:90]} | " + " | ".join(f"{means[p].get(key, 0):.4g}" for p in protocols))


if __name__ == "__main__":
    main()
