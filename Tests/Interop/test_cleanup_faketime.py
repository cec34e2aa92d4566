"""Automatic clean-up, black box: the real daemon restarted 31 days later under faketime."""

import glob
import json
import os
import sqlite3
import subprocess
import time

import pytest

from conftest import Daemon
from test_ops_and_cli import CLI

# libfaketime preloaded into the daemon itself (the `faketime` wrapper would stand
# between the test and the daemon's signals).
LIBFAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
pytestmark = pytest.mark.skipif(not LIBFAKETIME, reason="faketime (Debian package) is missing")


def days_later(days):
    # Under libfaketime, Swift's Task.sleep never wakes (Dispatch arms its timers on the
    # faked clocks), so these tests run clean-up with RunCleanup; the background worker
    # is tested without faketime below.
    return {"LD_PRELOAD": LIBFAKETIME[0], "FAKETIME": f"+{days}d", "FAKETIME_DONT_RESET": "1"}


def restarted_31_days_later(first, cleaned, extra=()):
    """`first`'s data dir served again 31 days later (with `extra` flags); RunCleanup
    there finds and deletes `cleaned` accounts. The caller stops the daemon."""
    later = Daemon(data_dir=first.dir, env=days_later(31), extra=["--cleanup-interval-ms", "3600000", *extra])
    try:
        assert admin_json(later, "preview-cleanup")["eligible_now"] == cleaned
        assert admin_json(later, "run-cleanup")["deleted"] == cleaned
    except BaseException:
        later.stop()
        raise
    return later


def run(daemon, *args, session=None, check=True):
    cmd = [CLI, *args, "--data-dir", daemon.dir]
    if session:
        cmd += ["--session", session]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def admin_json(daemon, *args):
    return json.loads(run(daemon, "admin", *args, "--json").stdout)


def sign_in(daemon, name):
    return run(daemon, "signin-anonymously", session=f"{daemon.dir}/{name}.json").stdout.strip()


def exists(daemon, uid):
    return run(daemon, "admin", "get-account", uid, check=False).returncode == 0


def test_disabling_keeps_the_schedule_and_31_days_later_only_scheduled_go():
    first = Daemon(extra=["--cleanup-interval-ms", "3600000"])
    try:
        admin_json(first, "update-config", "auto_cleanup_enabled=true")
        scheduled = sign_in(first, "a")
        admin_json(first, "update-config", "auto_cleanup_enabled=false")
        unscheduled = sign_in(first, "b")
        assert admin_json(first, "get-account", scheduled)["scheduled_deletion_at_ms"] > 0
        assert admin_json(first, "get-account", unscheduled)["scheduled_deletion_at_ms"] == 0
        assert admin_json(first, "preview-cleanup")["eligible_now"] == 0
    finally:
        assert first.stop() == 0

    later = restarted_31_days_later(first, cleaned=1)
    try:
        assert not exists(later, scheduled)
        assert admin_json(later, "preview-cleanup")["eligible_now"] == 0
        assert exists(later, unscheduled)
        assert admin_json(later, "usage")["cleaned_up_total"] == 1
    finally:
        assert later.stop() == 0


def link_email(daemon, name, email):
    cmd = [CLI, "link", "email", "--email", email, "--password-stdin", "--data-dir", daemon.dir,
           "--session", f"{daemon.dir}/{name}.json"]
    result = subprocess.run(cmd, input="correct horse battery\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


UID_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def creation_second(uid):
    """The second a `--uid-order creation` uid was made in: its first six base-62 digits."""
    second = 0
    for char in uid[:6]:
        second = second * 62 + UID_DIGITS.index(char)
    return second


def test_31_days_later_only_anonymous_accounts_are_gone():
    # This store's uids start with their creation second (--uid-order creation); the
    # test above runs the default random ones through the same pass.
    first = Daemon(extra=["--cleanup-interval-ms", "3600000", "--uid-order", "creation"])
    try:
        admin_json(first, "update-config", "auto_cleanup_enabled=true")
        made = time.time()
        anonymous = [sign_in(first, f"anon{i}") for i in range(3)]
        assert all(len(uid) == 28 and uid.isalnum() for uid in anonymous)
        assert all(abs(creation_second(uid) - made) < 120 for uid in anonymous)
        linked = sign_in(first, "linked")
        assert admin_json(first, "get-account", linked)["scheduled_deletion_at_ms"] > 0
        link_email(first, "linked", "keeper@example.com")
        after_link = admin_json(first, "get-account", linked)
        assert after_link["scheduled_deletion_at_ms"] == 0 and after_link["is_anonymous"] is False
        assert admin_json(first, "preview-cleanup")["scheduled_total"] == 3
    finally:
        assert first.stop() == 0

    later = restarted_31_days_later(first, cleaned=3, extra=["--uid-order", "creation"])
    try:
        assert not any(exists(later, uid) for uid in anonymous)
        assert exists(later, linked)
        usage = admin_json(later, "usage")
        assert usage["cleaned_up_total"] == 3 and usage["total_accounts"] == 1
        # Made 31 days on: a second that far on, and after every older uid in the store's order.
        newer = sign_in(later, "newer")
        assert abs(creation_second(newer) - (made + 31 * 86400)) < 600
        assert newer > max(anonymous + [linked])
    finally:
        assert later.stop() == 0


def test_the_background_worker_deletes_due_accounts_after_a_restart():
    first = Daemon()
    first.stop()
    # Accounts whose deletion came due while the daemon was down, written into its store.
    db = sqlite3.connect(os.path.join(first.dir, "anonauth.db"))
    now = int(time.time() * 1000)
    db.executemany(
        "INSERT INTO accounts (project_id, local_id, is_anonymous, created_at_ms, last_sign_in_at_ms, "
        "scheduled_deletion_at_ms) VALUES (?,?,?,?,?,?)",
        [("demo-project", f"due{i:025d}", 1, now - 40 * 86400000, now, now - 1000) for i in range(25)]
        + [("demo-project", "keep" + "0" * 24, 0, now, now, now - 1000)])
    db.commit()
    db.close()
    later = Daemon(data_dir=first.dir, extra=["--cleanup-interval-ms", "300"])
    try:
        deadline = time.monotonic() + 20
        while admin_json(later, "usage")["total_accounts"] > 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        usage = admin_json(later, "usage")
        assert usage["total_accounts"] == 1 and usage["cleaned_up_total"] == 25
        assert exists(later, "keep" + "0" * 24)  # permanent: never deleted automatically
        with open(later.log_path) as f:
            passes = [json.loads(line) for line in f if '"clean-up pass"' in line]
        assert any(p["deleted"] == 25 and p["is_anon"] is True and p["trigger"] == "schedule" for p in passes)
    finally:
        assert later.stop() == 0
