"""`anonauth bench` against the real daemon, briefly: every kind runs without a failed
call and reports what it says it reports. No timing is asserted here: the figures come
from `make bench`, never from tests."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import TEST_DAEMON_FLAGS, Daemon
from test_ops_and_cli import CLI

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Scripts"))
from bench import ONE_SOURCE_FLAGS  # noqa: E402


@pytest.fixture
def daemon():
    """The daemon as `make bench` runs it: every bench call comes from 127.0.0.1, so the
    per-IP connection limits and fair admission's rates and shares are off (the benches
    measure the product, not the limits; the limits have tests of their own)."""
    d = Daemon(extra=TEST_DAEMON_FLAGS + ONE_SOURCE_FLAGS)
    yield d
    assert d.stop() == 0


def bench(daemon, *args):
    result = subprocess.run(
        [CLI, "bench", *args, "--seconds", "1", "--json", "--data-dir", daemon.dir,
         "--rsa-signs-per-second", "1000"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", [
    ["refresh", "--accounts", "64"],
    ["verify"],
    ["verify", "--check-revoked"],
    ["account-info"],
    ["signup"],
])
def test_each_bench_runs_without_a_failed_call(daemon, kind):
    report = bench(daemon, *kind, "--connections", "4", "--concurrency", "2")
    assert report["calls"] > 0 and report["failures"] == 0, report
    assert report["p50_ms"] <= report["p90_ms"] <= report["p99_ms"] <= report["p999_ms"] <= report["max_ms"]
    assert report["connections"] == 4 and report["concurrency"] == 2
    # The daemon's CPU from its /metrics, before and after, per call and in RSA signs.
    assert report["server_cpu_us_per_call"] > 0
    assert report["server_cpu_per_call_rsa2048_signs"] == pytest.approx(
        report["server_cpu_us_per_call"] / 1e6 * 1000, rel=0.01)


def test_signup_from_one_address_meets_that_address_quota(daemon):
    """--end-user-ip sends every sign-up from one address: with a quota of 5 an hour
    exactly 5 get in, the rest are refused with the quota's reason."""
    result = subprocess.run([CLI, "admin", "update-config", "sign_up_quota_per_hour=5", "--data-dir", daemon.dir],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    report = bench(daemon, "signup", "--end-user-ip", "10.9.9.9", "--connections", "2", "--concurrency", "2",
                   "--allow-failures")
    assert report["calls"] == 5 and report["failures"] > 0, report
    assert set(report["failures_by_reason"]) == {"TOO_MANY_ATTEMPTS_TRY_LATER"}, report


def test_mix_makes_every_kind_of_call(daemon):
    report = bench(daemon, "mix", "--connections", "4", "--concurrency", "2", "--accounts", "64")
    assert report["failures"] == 0, report
    assert set(report["calls_by_kind"]) == {"refresh", "verify", "account-info", "signup", "link"}, report


def test_open_loop_sends_on_schedule(daemon):
    report = bench(daemon, "verify", "--connections", "2", "--rate", "200")
    # Every scheduled call was sent and answered: 200 a second for one second.
    assert report["rate"] == 200 and report["calls"] == 200 and report["failures"] == 0, report


def test_metrics_carry_the_standard_process_figures(daemon):
    import urllib.request
    with urllib.request.urlopen(f"http://{daemon.ops[0]}:{daemon.ops[1]}/metrics", timeout=5) as r:
        lines = r.read().decode().splitlines()
    values = {line.split()[0]: float(line.split()[1]) for line in lines if line.startswith("process_")}
    assert values["process_cpu_seconds_total"] > 0
    assert values["process_resident_memory_bytes"] > 1 << 20
    assert 5 < values["process_open_fds"] < values["process_max_fds"]
    assert values["process_threads"] >= 3
    assert "# TYPE process_cpu_seconds_total counter" in lines


@pytest.mark.parametrize("kind", [["signup", "--protocol", "native,grpc"], ["health", "--protocol", "native,grpc"]])
def test_grpc_legs_run_beside_native_and_report_the_ratio(daemon, kind):
    """The gRPC client (HTTP/2, ALPN h2) drives the same workload as native in alternating
    rounds; the report carries both legs and the daemon's CPU ratio per round."""
    report = bench(daemon, *kind, "--rounds", "2", "--connections", "2", "--concurrency", "4")
    assert report["bench"] == kind[0] and report["protocol"] == "native,grpc", report
    for leg in ("native", "grpc"):
        assert report[leg]["calls"] > 0 and report[leg]["failures"] == 0, report
        assert report[leg]["server_cpu_us_per_call"] > 0, report
    assert report["grpc"]["connections"] == 2 and report["grpc"]["concurrency"] == 4
    assert report["cpu_ratio_grpc_native"] > 0
    assert len(report["cpu_ratio_grpc_native_by_round"]) == 2
    assert report["goal_ratio"] == (1.15 if kind[0] == "signup" else 1.5)


def test_http_legs_run_on_the_event_loop_fleet_beside_native(daemon):
    """The HTTPS/JSON sign-up's keep-alive HTTP/1.1 connections (one event loop, one
    request in flight each) complete their calls in every round beside native's, warmed
    up first, on connections kept open across rounds: nothing had to be reopened."""
    report = bench(daemon, "signup", "--protocol", "native,http", "--rounds", "2", "--warm-up", "1",
                   "--connections", "3", "--concurrency", "2")
    assert report["protocol"] == "native,http", report
    for leg in ("native", "http"):
        assert report[leg]["calls"] > 0 and report[leg]["failures"] == 0, report
        assert report[leg]["server_cpu_us_per_call"] > 0, report
    # HTTP/1.1 carries one request at a time: one connection per call in flight.
    assert report["http"]["connections"] == 6 and report["http"]["concurrency"] == 1
    assert report["http_reconnects"] == 0
    assert len(report["cpu_ratio_http_native_by_round"]) == 2


def test_http_fleet_reopens_the_connections_the_daemon_closed_while_idle():
    """A daemon that closes connections idle for 200 ms closes every HTTP/1.1 connection
    of the fleet while the native leg runs (1 s): the next HTTP leg reopens each one,
    counts it, and loses no call (the closes came between requests)."""
    d = Daemon(extra=TEST_DAEMON_FLAGS + ONE_SOURCE_FLAGS + ["--idle-timeout-ms", "200"])
    try:
        report = bench(d, "signup", "--protocol", "native,http", "--rounds", "2",
                       "--connections", "3", "--concurrency", "1")
        assert report["http"]["calls"] > 0 and report["http"]["failures"] == 0, report
        assert report["native"]["failures"] == 0, report
        # Each round's HTTP leg follows a native one: all 3 reopened each time.
        assert report["http_reconnects"] >= 2 * 3, report
    finally:
        assert d.stop() == 0


def test_grpc_signup_alone_runs(daemon):
    report = bench(daemon, "signup", "--protocol", "grpc", "--connections", "2", "--concurrency", "2")
    assert report["grpc"]["calls"] > 0 and report["grpc"]["failures"] == 0, report
    assert "cpu_ratio_grpc_native" not in report


def test_idle_holds_native_and_grpc_connections_and_compares_their_memory(daemon):
    result = subprocess.run(
        [CLI, "bench", "idle", "--protocol", "native,grpc", "--connections", "20", "--hold-seconds", "1",
         "--json", "--data-dir", daemon.dir],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for leg in ("native", "grpc"):
        assert report[leg]["held"] == 20 and report[leg]["failed"] == 0, report
        assert report[leg]["rss_after"] > 0
    assert "memory_ratio_grpc_native" in report and report["goal_ratio"] == 2.0


@pytest.mark.skipif(shutil.which("h2load") is None, reason="h2load (nghttp2-client) not installed")
@pytest.mark.parametrize("method", ["signup", "health"])
def test_h2load_sends_grpc_calls_the_daemon_counts(daemon, method):
    """h2load, which shares no code with AnonAuth, makes real calls over gRPC: the daemon
    answers them OK, none with an error but the few h2load cuts at its end."""
    import h2load_grpc
    report = h2load_grpc.run(daemon.dir, clients=2, streams=2, seconds=1, rsa=1000, cli=CLI, method=method)
    assert report["calls_ok"] > 0 and report["succeeded"] > 0, report
    assert report["grpc_failures"] <= 2 * 2, report
    assert report["server_cpu_us_per_call"] > 0, report
    if method == "signup":
        assert report["sign_ups"] >= report["calls_ok"] and report["quota_refusals"] == 0, report


def test_admission_tables_tracks_every_address_it_is_asked_for():
    """`bench admission-tables` needs no daemon: at each size every address is tracked
    (the cap above the size), and with the daemon's default cap no more than it; then
    the sign-in throttle's attempts at each size."""
    result = subprocess.run([CLI, "bench", "admission-tables", "--addresses", "10,300", "--admits", "1000", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    rows = report["rows"]
    assert [(row["addresses"], row["default_cap"]) for row in rows] == [
        (10, False), (300, False), (10, True), (300, True)]
    # The signing lane's rate table holds one key per address, the project's none.
    assert [row["tracked_keys"] for row in rows] == [10, 300, 10, 300]
    assert all(row["cpu_ns_per_admit"] > 0 for row in rows)
    # The failed-sign-in throttle: one failure counter per address, each attempt given back.
    assert [(row["addresses"], row["tracked_keys"]) for row in report["throttle"]] == [(10, 10), (300, 300)]
    assert all(row["cpu_ns_per_attempt"] > 0 for row in report["throttle"])
    bad = subprocess.run([CLI, "bench", "admission-tables", "--addresses", "10,x"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode != 0 and "--addresses" in bad.stdout + bad.stderr


def test_admission_calls_times_real_calls_with_the_tables_filled():
    """`bench admission-calls` needs no daemon: the daemon's serving stack in the CLI's
    own process, its admission tables filled with each size's addresses before every
    batch (both lanes a call uses, one key per address in each), then RefreshToken and
    SignUp calls from addresses the tables hold and from new ones. A call that fails
    fails the bench."""
    result = subprocess.run([CLI, "bench", "admission-calls", "--addresses", "10,300", "--calls", "8",
                             "--concurrency", "2", "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["bench"] == "admission-calls" and report["rounds"] == 3 and report["calls"] == 8, report
    rows = report["rows"]
    assert [(row["kind"], row["shape"], row["addresses"]) for row in rows] == [
        (kind, shape, size) for kind in ("refresh", "signup") for shape in ("tracked", "new") for size in (10, 300)]
    for row in rows:
        # The write and the signing lanes' rate tables hold each filled address.
        assert row["keys_after_fill"] >= 2 * row["addresses"], row
        assert row["cpu_us_per_call"] > 0 and row["slowest_round_us_per_call"] >= row["cpu_us_per_call"], row
    assert [row["ratio"] for row in rows[::2]] == [1.0] * 4
    too_few = subprocess.run([CLI, "bench", "admission-calls", "--rounds", "2"], capture_output=True, text=True,
                             timeout=60)
    assert too_few.returncode != 0 and "--rounds" in too_few.stdout + too_few.stderr
