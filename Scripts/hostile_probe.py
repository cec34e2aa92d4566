#!/usr/bin/env python3
"""Each abuser of Tests/Interop/abuse.py alone (and all of them at once) beside the
hostile suite's well-behaved client, against a fresh release daemon each: the client's
p99 without and with the abuse, their ratio (the goal is 2x), the daemon's peak resident
memory over its baseline during the abuse (the goal is under 256 MiB for one attacker),
how long the daemon's event-loop turns were meanwhile (from /metrics), and, over the
measured 6 s of abuse, how many attacks the abusers made, the daemon's CPU seconds and
the abusers' own. The password-pool attacker is measured against a bystander signing in
with a password; every other one against VerifyIdToken calls.

    python3 Scripts/hostile_probe.py [ABUSER ...] [all]     (default: each, then all)
    make bench-hostile                                      (builds release binaries first)

PROBE_DAEMON_ARGS adds daemon flags (`PROBE_DAEMON_ARGS="--io-threads 2"`); name `all`
several times to see how much the ratio moves between runs. The abusers run under
SCHED_IDLE; `ABUSE_SCHED=nice` runs them at nice 19 instead (see abuse._demoted).

A measurement, not a test: the machine's noise moves the figures by tens of percent."""

import os
import pathlib
import resource
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
os.environ.setdefault("ANONAUTHD", str(ROOT / ".build/release/anonauthd"))
import abuse  # noqa: E402
from conftest import Daemon, call, load_pb  # noqa: E402

CLI = str(pathlib.Path(os.environ["ANONAUTHD"]).with_name("anonauth"))


def well_behaved(daemon, seconds, kind="verify"):
    return abuse.well_behaved(CLI, daemon, seconds, kind)


def metrics(daemon):
    return urllib.request.urlopen(f"http://{daemon.ops[0]}:{daemon.ops[1]}/metrics", timeout=5).read().decode()


def loop_turns(daemon):
    """(turns over 2.5 ms, over 10 ms, the longest in ms) of the connection loops
    (`anonauth-io-N`, summed) so far."""
    buckets, longest = {}, 0.0
    for line in metrics(daemon).splitlines():
        if 'loop="anonauth-io-' not in line:
            continue
        if line.startswith("anonauth_event_loop_turn_seconds_bucket"):
            le = line.split('le="')[1].split('"')[0]
            buckets[le] = buckets.get(le, 0.0) + float(line.split()[1])
        elif line.startswith("anonauth_event_loop_turn_max_seconds"):
            longest = max(longest, float(line.split()[1]) * 1000)
    total = buckets["+Inf"]
    return total - buckets["0.0025"], total - buckets["0.01"], longest


def daemon_cpu_seconds(daemon):
    """The daemon's CPU seconds so far (`process_cpu_seconds_total`)."""
    for line in metrics(daemon).splitlines():
        if line.startswith("process_cpu_seconds_total "):
            return float(line.split()[1])
    return 0.0


def own_cpu_seconds():
    """This process's CPU seconds so far: the abusers' threads (the measured client is a
    process of its own)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def probe(pb, name):
    daemon = Daemon(extra=["--log-level", "warn"] + os.environ.get("PROBE_DAEMON_ARGS", "").split())
    try:
        sock = daemon.connect()
        # The suite's small per-IP sign-up quota, so the email abuser is over it at once.
        config = pb.admin.ProjectConfig(project_id="demo-project", sign_up_quota_per_hour=5)
        call(sock, pb, "/anonauth.v1.AdminService/UpdateProjectConfig",
             pb.admin.UpdateProjectConfigRequest(config=config, update_mask=["sign_up_quota_per_hour"]),
             pb.admin.ProjectConfig, metadata={"authorization": "Bearer " + daemon.client_json["admin_key"]})
        sock.close()
        abusers = abuse.ALL if name == "all" else [getattr(abuse, name)]
        kind = abuse.bystander_of(abusers[0]) if len(abusers) == 1 else "verify"
        well_behaved(daemon, 2, kind)  # warm-up
        baseline = abuse.rss_bytes(daemon.proc.pid)
        quiet = well_behaved(daemon, 6, kind)
        before = loop_turns(daemon)
        peak = abuse.PeakRSS(daemon.proc.pid)
        stop, threads, tally = abuse.start(daemon, pb, abusers)
        time.sleep(2)
        acts, cpu, own = sum(tally.counts.values()), daemon_cpu_seconds(daemon), own_cpu_seconds()
        loaded = well_behaved(daemon, 6, kind)
        acts, cpu = sum(tally.counts.values()) - acts, daemon_cpu_seconds(daemon) - cpu
        own = own_cpu_seconds() - own
        after = loop_turns(daemon)
        peak_mib = (peak.stop() - baseline) / (1 << 20)
        stop.set()
        for t in threads:
            t.join(timeout=60)
    finally:
        daemon.stop()
    failed = "" if loaded["failures"] == 0 else f"  ({loaded['failures']} of {loaded['calls']} calls failed)"
    print(f"{name:22} {kind:8} {quiet['p99_ms']:7.2f} {loaded['p99_ms']:8.2f} {loaded['p99_ms'] / quiet['p99_ms']:6.2f}x "
          f"{peak_mib:8.1f} {after[0] - before[0]:9.0f} {after[1] - before[1]:8.0f} {after[2]:10.1f} {acts:8d} "
          f"{cpu:10.2f} {own:10.2f}{failed}", flush=True)


def main():
    names = sys.argv[1:] or [a.__name__ for a in abuse.ALL] + ["all"]
    pb = load_pb()
    print(f"{'abuser':22} {'client':8} {'p99 alone':>7} {'p99 abused':>8} {'ratio':>7} {'peak MiB':>8} "
          f"{'turns>2.5ms':>9} {'>10ms':>8} "
          f"{'longest ms':>10} {'attacks':>8} {'daemon cpu':>10} {'abuser cpu':>10}")
    for name in names:
        probe(pb, name)


if __name__ == "__main__":
    main()
