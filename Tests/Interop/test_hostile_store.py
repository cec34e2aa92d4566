"""The store stays bounded under hostile refresh traffic (the exposure review, docs/security.md): one anonymous account
refreshing in a loop rewrites one session row instead of adding a row per refresh, and
replays of the previous token inside the grace window re-issue its successor at most five
times. The store is read through a read-only SQLite connection beside the daemon."""

import contextlib
import os
import pathlib
import sqlite3
import sys
import time

import pytest

from conftest import TEST_DAEMON_FLAGS, Daemon, call

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Scripts"))
from bench import ONE_SOURCE_FLAGS  # noqa: E402

ACCOUNT = "/anonauth.v1.AccountService/"
TOKEN = "/anonauth.v1.TokenService/"


def store_rows(daemon):
    """(sessions, bytes of refresh_sessions and its indexes, accounts) as the store has them."""
    uri = "file:" + os.path.join(daemon.dir, "anonauth.db") + "?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        sessions = db.execute("SELECT count(*) FROM refresh_sessions").fetchone()[0]
        size = db.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name = 'refresh_sessions' "
            "OR name LIKE 'refresh_sessions_%'").fetchone()[0]
        accounts = db.execute("SELECT count(*) FROM accounts").fetchone()[0]
    return sessions, size, accounts


def sign_up(sock, pb, user):
    request = pb.account.SignUpRequest()
    request.anonymous.SetInParent()
    st, auth = call(sock, pb, ACCOUNT + "SignUp", request, pb.account.AuthResponse, user)
    assert st.code == 0, st
    return auth


def refresh(sock, pb, user, token):
    return call(sock, pb, ACCOUNT + "RefreshToken", pb.account.RefreshTokenRequest(refresh_token=token),
                pb.account.AuthResponse, user)


@pytest.fixture
def unlimited():
    """A daemon without per-IP limits or fair admission: the loop below refreshes from
    127.0.0.1 far faster than admission's write rate per IP (20/s) lets one address, and
    it is the store, not admission, that this test measures."""
    d = Daemon(extra=TEST_DAEMON_FLAGS + ONE_SOURCE_FLAGS)
    yield d
    assert d.stop() == 0


def test_an_account_refreshing_in_a_loop_keeps_one_row(unlimited, pb):
    daemon = unlimited
    user = {"x-api-key": daemon.client_json["api_key"]}
    with daemon.connect() as s:
        bystander = sign_up(s, pb, user)
        auth = sign_up(s, pb, user)
        token = auth.refresh_token
        for _ in range(20):
            st, auth = refresh(s, pb, user, token)
            assert st.code == 0, st
            token = auth.refresh_token
        sessions, size, accounts = store_rows(daemon)
        assert (sessions, accounts) == (2, 2)
        # Counted, not timed: 200 rotations however long the machine takes for them.
        refreshes = 200
        for _ in range(refreshes):
            st, auth = refresh(s, pb, user, token)
            assert st.code == 0, st
            token = auth.refresh_token
        after = store_rows(daemon)
        assert after == (2, size, 2), f"{refreshes} refreshes: {after} against {(2, size, 2)}"
        # The session still works, and so does the bystander's.
        st, _ = refresh(s, pb, user, token)
        assert st.code == 0, st
        st, _ = refresh(s, pb, user, bystander.refresh_token)
        assert st.code == 0, st


def test_grace_replays_are_limited_and_reuse_revokes_id_tokens(daemon, pb):
    user = {"x-api-key": daemon.client_json["api_key"]}
    with daemon.connect() as s:
        first = sign_up(s, pb, user)
        st, rotated = refresh(s, pb, user, first.refresh_token)
        assert st.code == 0, st
        for _ in range(5):
            st, again = refresh(s, pb, user, first.refresh_token)
            assert st.code == 0, st
            assert again.refresh_token == rotated.refresh_token
        for _ in range(50):
            st, _ = refresh(s, pb, user, first.refresh_token)
            assert (st.code, st.reason) == (8, "TOO_MANY_ATTEMPTS_TRY_LATER"), st
            assert st.details["retry_after_seconds"] == "1"
        # Not reuse: the successor works, and the family is whole.
        st, latest = refresh(s, pb, user, rotated.refresh_token)
        assert st.code == 0, st
        # A token two rotations old is reuse: the family ends, and its ID tokens fail
        # check_revoked once valid_since has moved past their issue second.
        time.sleep(1.1)
        st, _ = refresh(s, pb, user, first.refresh_token)
        assert st.reason == "INVALID_REFRESH_TOKEN", st
        st, _ = refresh(s, pb, user, latest.refresh_token)
        assert st.reason == "INVALID_REFRESH_TOKEN", st
        verify = pb.token.VerifyIdTokenRequest(id_token=latest.id_token, check_revoked=True)
        st, _ = call(s, pb, TOKEN + "VerifyIdToken", verify, pb.token.VerifyIdTokenResponse, user)
        assert st.reason == "TOKEN_EXPIRED", st
        sessions, _, _ = store_rows(daemon)
        assert sessions == 0
    # The operator hears of it: a token was probably stolen.
    deadline = time.monotonic() + 10
    while "refresh token reuse" not in daemon.log_lines_text():
        assert time.monotonic() < deadline, daemon.log_lines_text()[-2000:]
        time.sleep(0.1)
    line = next(x for x in daemon.log_lines_text().splitlines() if "refresh token reuse" in x)
    assert first.local_id in line and '"generation":2' in line, line
