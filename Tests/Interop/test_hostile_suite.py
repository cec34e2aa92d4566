"""Every abuser of abuse.py at once, beside a well-behaved client: its calls all succeed,
its p99 stays within 2x of its p99 without the abuse, and the daemon's memory returns
near its baseline once the abuse stops. The well-behaved client is `anonauth bench` in a
process of its own (open loop, latency from the scheduled send time), so the test's own
threads cannot slow it; each abuser is tested for its documented answer in the
test_hostile_*.py files.

The 2x goal is about the product, so it is checked against release binaries:
$ANONAUTHD_RELEASE (`make test` passes the ones its deploy smoke built). Without them the
debug build runs with a looser bound that still guards the fixes."""

import os
import pathlib
import time

import abuse
import pytest
from conftest import TEST_DAEMON_FLAGS, Daemon, call
from test_ops_and_cli import CLI

RELEASE = os.environ.get("ANONAUTHD_RELEASE", "")


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def build():
    """(daemon, CLI path, release?) for this run: release binaries when named."""
    if RELEASE and not os.path.exists(RELEASE):
        pytest.fail(f"ANONAUTHD_RELEASE names {RELEASE}, which does not exist")
    if RELEASE:
        # The daemon as deployed: its own timeouts, not the suite's 500 ms ones (see the
        # README: against those the abandoned handshakes cycle 25 times as fast).
        d = Daemon(binary=RELEASE)
        cli, release = str(pathlib.Path(RELEASE).with_name("anonauth")), True
    else:
        d, cli, release = Daemon(extra=TEST_DAEMON_FLAGS), CLI, False
    yield d, cli, release
    assert d.stop() == 0


def test_a_well_behaved_client_is_served_beside_every_abuser_and_memory_comes_back(build, pb):
    daemon, cli, release = build

    def well_behaved(seconds):
        return abuse.well_behaved(cli, daemon, seconds)

    # A small per-IP sign-up quota, so the email abuser is over it after 5 sign-ups (the
    # first ones within a quota hash as they should); the well-behaved client's sign-ups
    # each come from an end-user IP of their own.
    sock = daemon.connect()
    config = pb.admin.ProjectConfig(project_id="demo-project", sign_up_quota_per_hour=5)
    status, _ = call(sock, pb, "/anonauth.v1.AdminService/UpdateProjectConfig",
                     pb.admin.UpdateProjectConfigRequest(config=config, update_mask=["sign_up_quota_per_hour"]),
                     pb.admin.ProjectConfig, metadata={"authorization": "Bearer " + daemon.client_json["admin_key"]})
    assert status.code == 0, status
    sock.close()
    well_behaved(seconds=2)  # warm-up: code paths, caches, the first connections
    baseline_rss = rss_bytes(daemon.proc.pid)
    seconds = 15 if release else 6
    quiet = well_behaved(seconds=seconds)
    assert quiet["failures"] == 0, quiet

    stop, threads, tally = abuse.start(daemon, pb)
    try:
        time.sleep(2)  # let every abuser get going
        cpu_before, started = cpu_seconds(daemon.proc.pid), time.monotonic()
        loaded = well_behaved(seconds=seconds)
        daemon_cpu = (cpu_seconds(daemon.proc.pid) - cpu_before) / (time.monotonic() - started)
        assert daemon.proc.poll() is None, "the daemon died under abuse"
        peak_rss = rss_bytes(daemon.proc.pid)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert all(not t.is_alive() for t in threads)
    # Memory comes back: connections closed, buffers released (malloc keeps some).
    deadline = time.monotonic() + 20
    while rss_bytes(daemon.proc.pid) > baseline_rss + (24 << 20) and time.monotonic() < deadline:
        time.sleep(0.5)
    after_rss = rss_bytes(daemon.proc.pid)
    print(f"\nabuse: {dict(tally.counts)}")
    print(f"{'release' if release else 'debug'} build, well-behaved p99: {quiet['p99_ms']:.2f} ms alone, {loaded['p99_ms']:.2f} ms under abuse; "
          f"the daemon used {daemon_cpu:.0%} of a core under abuse; RSS {baseline_rss >> 20} MiB before, "
          f"{peak_rss >> 20} MiB under abuse, {after_rss >> 20} MiB after")

    assert loaded["failures"] == 0 and loaded["calls"] == quiet["calls"] == 200 * seconds, loaded
    assert len(tally.counts) >= len(abuse.ALL) - 1, tally.counts  # the abusers really ran
    if release:
        # The goal. The abusers run under SCHED_IDLE (abuse._demoted), so what is measured
        # is the daemon's sharing between them and the client, not the kernel's sharing
        # of two cores with their Python. Windows of 3,000 calls keep the p99 steady.
        assert loaded["p99_ms"] <= 2 * quiet["p99_ms"], (quiet, loaded)
    else:
        # A debug daemon spends several times a release one's CPU on the same abuse (6 to
        # 12 ms here against 2 to 3 ms alone): this bound guards what was fixed (29 ms
        # before, with memory never coming back) without flaking.
        assert loaded["p99_ms"] <= 2 * quiet["p99_ms"] + 15.0, (quiet, loaded)
    assert after_rss <= baseline_rss + (24 << 20), f"RSS {baseline_rss >> 20} MiB before, {after_rss >> 20} MiB after"
