"""The exposure review's stale-session takeover against the real daemon. The owner signs up; the
daemon is started again ten minutes later under faketime. The owner's refresh token never
expires (a thief may hold it) and still refreshes, but the ID tokens it mints keep the
sign-in's auth_time, so they cannot unlink the owner's credential, link the thief's, or
delete the account. The owner signs in as before; a fresh session may change what the
stale one could not."""

import base64
import glob
import json

import pytest

from conftest import Daemon, call
from test_hostile_accounts import ACCOUNT, configure, email_sign_up

# libfaketime preloaded into the daemon itself, as test_cleanup_faketime.py does.
LIBFAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
pytestmark = pytest.mark.skipif(not LIBFAKETIME, reason="faketime (Debian package) is missing")

FAILED_PRECONDITION = 9
TOO_OLD = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN"


def ten_minutes_later():
    return {"LD_PRELOAD": LIBFAKETIME[0], "FAKETIME": "+600", "FAKETIME_DONT_RESET": "1"}


def claims(id_token):
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def password_credential(pb, email, password):
    return pb.account.Credential(provider_id="password", email=email, password=password)


def test_a_stale_session_cannot_swap_the_accounts_credentials(pb):
    first = Daemon()
    try:
        configure(first, pb, quota=100)
        user = {"x-api-key": first.client_json["api_key"]}
        with first.connect() as s:
            st, owner = call(s, pb, ACCOUNT + "SignUp", email_sign_up(pb, "owner@example.com", "owner-pass-1"),
                             pb.account.AuthResponse, user)
        assert st.code == 0, st
    finally:
        assert first.stop() == 0

    later = Daemon(data_dir=first.dir, env=ten_minutes_later())
    try:
        user = {"x-api-key": later.client_json["api_key"]}
        with later.connect() as s:
            # The thief refreshes the owner's refresh token: a valid ID token, but one whose
            # auth_time is the sign-up's, ten minutes before the daemon's now.
            st, stolen = call(s, pb, ACCOUNT + "RefreshToken",
                              pb.account.RefreshTokenRequest(refresh_token=owner.refresh_token),
                              pb.account.AuthResponse, user)
            assert st.code == 0, st
            minted = claims(stolen.id_token)
            assert minted["auth_time"] == claims(owner.id_token)["auth_time"]
            assert minted["iat"] - minted["auth_time"] >= 600, minted

            attempts = [
                ("UnlinkProvider", pb.account.UnlinkProviderRequest(id_token=stolen.id_token, provider_id="password")),
                ("LinkWithCredential", pb.account.LinkWithCredentialRequest(
                    id_token=stolen.id_token, credential=password_credential(pb, "thief@example.com", "thief-pass-1"))),
                ("DeleteAccount", pb.account.DeleteAccountRequest(id_token=stolen.id_token)),
            ]
            for method, request in attempts:
                st, _ = call(s, pb, ACCOUNT + method, request, None, user)
                assert (st.code, st.reason) == (FAILED_PRECONDITION, TOO_OLD), (method, st)

            # Nothing changed: the owner signs in with the same password to the same uid.
            st, again = call(s, pb, ACCOUNT + "SignInWithPassword",
                             pb.account.SignInWithPasswordRequest(email="owner@example.com", password="owner-pass-1"),
                             pb.account.AuthResponse, user)
            assert st.code == 0 and again.local_id == owner.local_id, st
            assert [p.provider_id for p in again.account.providers] == ["password"]
            assert again.account.email == "owner@example.com"
            # The thief's email never reached the account.
            st, _ = call(s, pb, ACCOUNT + "SignInWithPassword",
                         pb.account.SignInWithPasswordRequest(email="thief@example.com", password="thief-pass-1"),
                         None, user)
            assert st.reason == "INVALID_LOGIN_CREDENTIALS", st

            # The owner's fresh session may change the account; the last method stays.
            st, _ = call(s, pb, ACCOUNT + "UnlinkProvider",
                         pb.account.UnlinkProviderRequest(id_token=again.id_token, provider_id="password"), None, user)
            assert (st.code, st.reason) == (FAILED_PRECONDITION, "LAST_SIGN_IN_METHOD"), st
            st, _ = call(s, pb, ACCOUNT + "DeleteAccount", pb.account.DeleteAccountRequest(id_token=again.id_token),
                         pb.account.DeleteAccountResponse, user)
            assert st.code == 0, st
    finally:
        assert later.stop() == 0
