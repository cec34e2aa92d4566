"""The HTTP/2 attack clients of `make bench-hostile` (abuse_h2.py), each at its smallest
size against the suite's daemon: the attack really ran (it sent what it says, the daemon
read it and answered as it does) and the daemon still answers a health check after it.
Correctness only: what the attacks cost the daemon is measured by
Scripts/hostile_probe.py, never asserted here. Each attack is bounded to a second or two,
so the file runs in a few seconds."""

import time

import pytest

import abuse_h2
import h2wire
from conftest import call


def assert_answers(daemon, pb):
    assert daemon.proc.poll() is None, "the daemon died under the attack"
    with daemon.connect() as s:
        status, _ = call(s, pb, h2wire.HEALTH_CHECK, pb.health.CheckRequest())
    assert status.code == 0, status


def wait_for(attack, what, seconds=5):
    """The attack's count of `what` once it is above 0, or after `seconds`."""
    deadline = time.monotonic() + seconds
    while attack.snapshot()[0][what] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    return attack.snapshot()[0][what]


def test_bomb_block_is_one_frame_referring_thousands_of_times_to_a_big_field():
    block = abuse_h2.bomb_block()
    assert len(h2wire.headers(1, block)) == 16384
    assert abuse_h2.bomb_references(block) > 12000


def test_only_loopback_targets():
    with pytest.raises(AssertionError):
        abuse_h2._loopback("10.0.0.1")


def test_zero_window_reflection_holds_its_streams(daemon, pb):
    attack = abuse_h2.ZeroWindowReflection(daemon, connections=1, streams=2, messages=1, seconds=10).start()
    try:
        # The daemon answered each stream's HEADERS and acknowledged nothing else: the
        # streams are open, their answers wait for a window that never opens.
        assert wait_for(attack, "bytes received") > 0
        counts, sent = attack.snapshot()
        assert counts["connections"] == 1 and counts["streams"] == 2, counts
        assert counts["DATA frames with bytes"] == 0, counts
        assert sent >= len(attack.blob())
        assert_answers(daemon, pb)
    finally:
        attack.stop()
    assert_answers(daemon, pb)


def test_hpack_bomb_blocks_are_refused(daemon, pb):
    attack = abuse_h2.HpackBomb(daemon, connections=1, seconds=10, window=1, max_blocks=2).start()
    try:
        wait_for(attack, "answered 431")
        deadline = time.monotonic() + 10
        while sum(v for k, v in attack.snapshot()[0].items() if k.startswith(("answered", "RST", "GOAWAY"))) < 2 \
                and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        attack.stop()
    counts, sent = attack.snapshot()
    assert counts["blocks sent"] == 2, counts
    assert sent >= 2 * 16384
    # Refused as over the header-list limit, or the connection ended for it (a GOAWAY or
    # a reset): the attack ran and the daemon said no.
    assert counts["answered 431"] + sum(v for k, v in counts.items() if k.startswith(("RST", "GOAWAY"))) >= 1, counts
    assert_answers(daemon, pb)


def test_unknown_path_flood_is_answered_and_logged(daemon, pb):
    attack = abuse_h2.UnknownPathFlood(daemon, connections=1, seconds=10, window=4, max_calls=8).start()
    try:
        deadline = time.monotonic() + 10
        while attack.snapshot()[0]["calls answered"] < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        attack.stop()
    counts, _ = attack.snapshot()
    assert counts["calls sent"] == 8 and counts["calls answered"] == 8, counts
    assert any(abuse_h2.UNKNOWN_PATH in line for line in daemon.log_lines())
    assert_answers(daemon, pb)
