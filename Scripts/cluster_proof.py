#!/usr/bin/env python3
"""`make cluster-proof`: the replicated store's long proof and its figures, in one run.

1. Sign-ups per second, closed loop (64 connections x 4), against a single-file daemon
   and against the leader's daemon of a three-node loopback cluster: the ratio (goal
   >= 70 %).
   Alongside, the leader's writer counters: round trips to the dqlite leader per sign-up
   (anonauth_store_writer_round_trips_total), and requests per sign-up, which is what the
   round trips were before statements were pipelined (each request waited then).
2. The cluster at 50 % of its own maximum, open loop: p99 (goal <= 25 ms).
3. ROUNDS (default 10) rounds of kill -9 of the leader's daemon under mixed load from
   retrying clients (sign-ups, links, refreshes): failover time (kill -> first
   acknowledged write), every acknowledged write present, the killed node restarted and
   rejoined, its own copy holding every account.
4. A rolling restart of all three: zero failed calls for the retrying clients.

`--election-timeout-ms A,B,...` measures only the kill rounds, once per value in turn
(a fresh cluster started with `--cluster-election-timeout-ms` each time, `--blocks`
times over, 3 rounds each), and prints each value's failover times: the comparison in
docs/replicated-store.md ("Failover, as a client sees it").

Run with the interop venv's Python (make cluster-proof does): it reuses
Tests/Interop/cluster.py. ANONAUTHD/ANONAUTH_CLI pick the binaries (make: release).
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
sys.path.insert(0, str(ROOT / "Scripts"))

from cluster import Cluster, Load, rolling_restart  # noqa: E402
from bench import ONE_SOURCE_FLAGS  # noqa: E402
from conftest import Daemon, load_pb, metrics  # noqa: E402

CLI = os.environ.get("ANONAUTH_CLI", str(ROOT / ".build/debug/anonauth"))
# All the load comes from 127.0.0.1: no per-address cap, pace or admission limit on it.
DAEMON_FLAGS = ["--log-level", "warn", *ONE_SOURCE_FLAGS]


def bench(data_dir, *args):
    result = subprocess.run([CLI, "bench", "signup", *args, "--data-dir", data_dir, "--json", "--allow-failures"],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"bench {' '.join(args)} failed: {result.stdout[-400:]}{result.stderr[-400:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def raise_quota(cluster_or_daemon, pb):
    from cluster import RetryingClient, PROJECT
    client = RetryingClient(cluster_or_daemon, pb)
    config = pb.admin.ProjectConfig(project_id=PROJECT, sign_up_quota_per_hour=1_000_000)
    status, _ = client.admin_call("UpdateProjectConfig", pb.admin.UpdateProjectConfigRequest(
        config=config, update_mask=["sign_up_quota_per_hour"]), pb.admin.ProjectConfig)
    client.close()
    assert status.code == 0, status
    time.sleep(2.5)  # every node's directory reloads within 2 s


def where_time_goes(before, after):
    """The leader's writer over a run, from /metrics: jobs per transaction, time in COMMIT
    (the Raft round to the followers) per transaction, and a write's mean time from
    submission to acknowledgement (queueing, the batch's statements, the commit)."""
    def delta(name):
        return after.get(name, 0.0) - before.get(name, 0.0)
    transactions = max(1.0, delta("anonauth_store_transactions_total"))
    writes = max(1.0, delta("anonauth_store_write_duration_seconds_count"))
    return (f"{delta('anonauth_store_writes_total') / transactions:.1f} sign-ups a transaction, "
            f"COMMIT {1000 * delta('anonauth_store_commit_seconds_total') / transactions:.1f} ms a transaction, "
            f"a write {1000 * delta('anonauth_store_write_duration_seconds_sum') / writes:.1f} ms "
            f"from submission to acknowledgement on average")


def writer_counts(daemon):
    """The writer's committed jobs, round trips and requests so far, from /metrics."""
    m = metrics(daemon)
    return (m.get("anonauth_store_writes_total", 0.0), m.get("anonauth_store_writer_round_trips_total", 0.0),
            m.get("anonauth_store_writer_requests_total", 0.0))


class One:
    """A single-file daemon shaped like a Cluster for RetryingClient."""

    def __init__(self):
        self.daemons = {1: Daemon(extra=DAEMON_FLAGS)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "10")))
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("BENCH_SECONDS", "10")))
    parser.add_argument("--skip-bench", action="store_true", help="only the kill rounds and the rolling restart")
    parser.add_argument("--bench-only", action="store_true", help="only the figures")
    parser.add_argument("--election-timeout-ms", help="comma-separated values: compare their failovers")
    parser.add_argument("--blocks", type=int, default=3, help="with --election-timeout-ms: clusters per value")
    args = parser.parse_args()
    pb = load_pb()
    seconds = str(args.seconds)
    print(f"binaries: {os.environ.get('ANONAUTHD', 'debug')}; {os.cpu_count()} cores", flush=True)
    if args.election_timeout_ms:
        compare_election_timeouts(pb, [int(v) for v in args.election_timeout_ms.split(",")], args.blocks)
        return

    if not args.skip_bench:
        figures(pb, seconds)
    if args.bench_only:
        return
    cluster = Cluster(extra=DAEMON_FLAGS)
    try:
        raise_quota(cluster, pb)
        rounds(cluster, pb, args.rounds)
    except BaseException:
        print(f"failed: the nodes' data dirs and logs are kept in {cluster.root}", flush=True)
        raise
    else:
        shutil.rmtree(cluster.root, ignore_errors=True)
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)


def figures(pb, seconds):
    one = One()
    try:
        raise_quota(one, pb)
        single = bench(one.daemons[1].dir, "--connections", "64", "--concurrency", "4", "--seconds", seconds)
    finally:
        one.daemons[1].stop()
        shutil.rmtree(one.daemons[1].dir, ignore_errors=True)
    cluster = Cluster(extra=DAEMON_FLAGS)
    try:
        raise_quota(cluster, pb)
        leader = cluster.leader()
        target = cluster.daemons[leader].dir
        most_metrics = [metrics(cluster.daemons[leader])]
        before = writer_counts(cluster.daemons[leader])
        most = bench(target, "--connections", "64", "--concurrency", "4", "--seconds", seconds)
        after = writer_counts(cluster.daemons[leader])
        most_metrics.append(metrics(cluster.daemons[leader]))
        ratio = most["calls_per_second"] / max(1, single["calls_per_second"])
        print(f"sign-ups/s, closed loop 64 x 4: single file {single['calls_per_second']:,}/s, "
              f"3-node cluster {most['calls_per_second']:,}/s = {ratio:.0%} (goal >= 70 %: "
              f"{'met' if ratio >= 0.7 else 'NOT MET'})", flush=True)
        jobs = max(1.0, after[0] - before[0])
        print(f"leader's writer per sign-up: {(after[1] - before[1]) / jobs:.2f} round trips now, "
              f"{(after[2] - before[2]) / jobs:.2f} requests (= round trips when each request waited); "
              f"{jobs:,.0f} jobs", flush=True)
        print(f"  leader's writer, closed loop: {where_time_goes(*most_metrics)}", flush=True)
        rate = max(1, most["calls_per_second"] // 2)
        half_before = metrics(cluster.daemons[leader])
        half = bench(target, "--connections", "64", "--rate", str(rate), "--seconds", seconds)
        half_after = metrics(cluster.daemons[leader])
        print(f"cluster at 50 % ({rate}/s), open loop: p50 {half['p50_ms']:.1f} ms, p99 {half['p99_ms']:.1f} ms "
              f"(goal <= 25 ms: {'met' if half['p99_ms'] <= 25 else 'NOT MET'}), "
              f"{half['failures']} failures {half.get('failures_by_reason', '')}", flush=True)
        print(f"  leader's writer at 50 %: {where_time_goes(half_before, half_after)}", flush=True)
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)
        shutil.rmtree(cluster.root, ignore_errors=True)


def compare_election_timeouts(pb, timeouts, blocks, per_block=3):
    """Kill rounds on clusters started with each election timeout in turn (alternating, so
    the machine's other load falls on every value alike)."""
    failovers = {t: [] for t in timeouts}
    for _ in range(blocks):
        for timeout in timeouts:
            cluster = Cluster(extra=DAEMON_FLAGS + ["--cluster-election-timeout-ms", str(timeout)])
            try:
                raise_quota(cluster, pb)
                failovers[timeout] += kill_rounds(cluster, pb, per_block, label=f"{timeout} ms: ")
            finally:
                for i in list(cluster.daemons):
                    cluster.kill(i)
                shutil.rmtree(cluster.root, ignore_errors=True)
    for timeout, times in failovers.items():
        print(f"election timeout {timeout} ms: failover over {len(times)} rounds: median "
              f"{statistics.median(times):.2f} s, max {max(times):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in sorted(times))})", flush=True)


def rounds(cluster, pb, count):
    failovers = kill_rounds(cluster, pb, count)
    if failovers:
        print(f"failover over {len(failovers)} rounds: median {statistics.median(failovers):.2f} s, "
              f"max {max(failovers):.2f} s (goal: calls resume within 10 s: "
              f"{'met' if max(failovers) < 10 else 'NOT MET'})", flush=True)

    load = rolling_restart(cluster, pb)
    print(f"rolling restart of all three: {len(load.anonymous)} sign-ups, {len(load.email)} links, "
          f"0 failed calls (retrying clients)", flush=True)


def kill_rounds(cluster, pb, count, label=""):
    """`count` rounds of kill -9 of the leader's daemon under load; each round's failover
    (kill -> first acknowledged write), every acknowledged write checked."""
    failovers = []
    for round_number in range(1, count + 1):
        # Each node leads (and is killed) in turn.
        cluster.lead(1 + round_number % len(cluster.addresses))
        load = Load(cluster, pb)
        load.start()
        time.sleep(2)
        victim = cluster.leader()
        cluster.kill(victim)
        killed_at = time.monotonic()
        while load.last_write < killed_at and time.monotonic() - killed_at < 30:
            time.sleep(0.02)
        failover = load.last_write - killed_at
        time.sleep(1)
        cluster.start(victim)
        time.sleep(1)
        load.finish()
        total = load.verify()
        own = cluster.accounts_on(victim)
        assert own >= len(load.anonymous), (own, len(load.anonymous))
        failovers.append(failover)
        print(f"{label}round {round_number}: killed node {victim} (leader); first acknowledged write after "
              f"{failover:.2f} s; {len(load.anonymous)} sign-ups and {len(load.email)} links acknowledged, "
              f"all present ({total} accounts); node {victim} back with its copy of {own} accounts",
              flush=True)
    return failovers


if __name__ == "__main__":
    main()
