"""Each attack of the exposure review (abuse.EXPOSURE), alone, against a daemon with its
default limits, beside the well-behaved client it would hurt: every one of that client's
calls is answered, the daemon lives, its memory stays within 256 MiB of its baseline
during the attack and comes back afterwards, and the attack really ran. What each attacker
gets back is tested in the test_hostile_*.py file of its mechanism.

Latency is measured, not asserted: `make bench-hostile` prints each attack's bystander
p99 against quiet and the daemon's peak memory, against release binaries."""

import time

import abuse
import pytest
from conftest import Daemon
from test_ops_and_cli import CLI

SECONDS = 5
PEAK_BUDGET = 256 << 20
# Memory that stays after an attack: malloc keeps some of what it handed back.
RETURN_SLACK = 32 << 20


@pytest.mark.parametrize("abuser", abuse.EXPOSURE, ids=lambda a: a.__name__)
def test_an_attack_alone_leaves_its_bystander_served_and_memory_bounded(abuser, pb):
    daemon = Daemon(extra=["--log-level", "warn"])
    try:
        kind = abuse.bystander_of(abuser)
        abuse.well_behaved(CLI, daemon, 2, kind)  # warm-up: code paths, caches, connections
        baseline = abuse.rss_bytes(daemon.proc.pid)
        quiet = abuse.well_behaved(CLI, daemon, SECONDS, kind)
        assert quiet["failures"] == 0, quiet

        loaded, peak_rss, tally = abuse.run_beside(
            daemon, pb, [abuser], lambda: abuse.well_behaved(CLI, daemon, SECONDS, kind))

        deadline = time.monotonic() + 20
        while abuse.rss_bytes(daemon.proc.pid) > baseline + RETURN_SLACK and time.monotonic() < deadline:
            time.sleep(0.5)
        after = abuse.rss_bytes(daemon.proc.pid)
        print(f"\n{abuser.__name__}: {dict(tally.counts)}; bystander p99 {quiet['p99_ms']:.2f} ms quiet, "
              f"{loaded['p99_ms']:.2f} ms attacked; RSS {baseline >> 20} MiB, peak {peak_rss >> 20} MiB, "
              f"after {after >> 20} MiB")

        assert sum(tally.counts.values()) > 0, "the attack never ran"
        assert loaded["failures"] == 0 and loaded["calls"] == quiet["calls"], loaded
        assert peak_rss - baseline < PEAK_BUDGET, f"peak {(peak_rss - baseline) >> 20} MiB over the baseline"
        assert after <= baseline + RETURN_SLACK, f"RSS {baseline >> 20} MiB before, {after >> 20} MiB after"
    finally:
        assert daemon.stop() == 0
