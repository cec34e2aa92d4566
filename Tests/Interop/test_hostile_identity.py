"""The exposure review's identity findings played against the real daemon, with an OIDC provider
(`oidc.test`, keys given inline as jwks_json) whose ID tokens the test signs itself.

- Pre-registration lockout: an attacker signs up with the victim's email and a password
  (unverified); the victim's provider sign-in with `email_verified` true takes the
  account over, as docs/security.md ("Account safety") describes, and nothing of the
  attacker's survives. An unverified provider email, a verified holder or a disabled
  account keeps the old answer (`EMAIL_EXISTS` / `USER_DISABLED`) and changes nothing.
- A token with several audiences needs `azp` equal to the client id.
- Control characters in a provider's subject or name are refused at the door, so no
  account is made that export and import would drop."""

import json
import time
import types

import pytest

from conftest import Daemon
from test_hostile_accounts import configure as enable_passwords, email_sign_up
from test_linking_interop import ACCOUNT, CLIENT_ID, ISSUER, Provider, configure, rpc, sign_in

ADMIN = "/anonauth.v1.AdminService/"
VERIFY = "/anonauth.v1.TokenService/VerifyIdToken"
INVALID_IDP = (3, "INVALID_IDP_RESPONSE")
TAKEOVER_LOG = "unverified account taken over by a verified provider identity"


@pytest.fixture(scope="module")
def idp(pb):
    """A daemon with email/password sign-up and the `oidc.test` provider (inline keys)."""
    daemon = Daemon()
    provider = Provider()
    configure(daemon, pb, [{"provider_id": "oidc.test", "enabled": True, "client_id": CLIENT_ID, "issuer": ISSUER,
                            "jwks_json": json.dumps(provider.jwks())}])
    enable_passwords(daemon, pb, quota=100)
    yield types.SimpleNamespace(daemon=daemon, provider=provider)
    assert daemon.stop() == 0


def admin(e, pb, method, request, response_type):
    request.project_id = e.daemon.client_json["project_id"]
    status, reply = rpc(e.daemon, pb, ADMIN + method, request, response_type,
                        {"authorization": "Bearer " + e.daemon.client_json["admin_key"]})
    assert status.code == 0, (method, status)
    return reply


def stored(e, pb, uid):
    return admin(e, pb, "GetAccount", pb.admin.GetAccountRequest(local_id=uid), pb.account.AccountInfo)


def account_count(e, pb):
    """(ListAccounts' total, GetUsage's total_accounts): what the operator sees."""
    listed = admin(e, pb, "ListAccounts", pb.admin.ListAccountsRequest(page_size=1), pb.admin.ListAccountsResponse)
    usage = admin(e, pb, "GetUsage", pb.admin.GetUsageRequest(), pb.admin.GetUsageResponse)
    return listed.total, usage.total_accounts


def password_sign_up(e, pb, email, password):
    status, auth = rpc(e.daemon, pb, ACCOUNT + "SignUp", email_sign_up(pb, email, password), pb.account.AuthResponse)
    assert status.code == 0, status
    assert not auth.account.email_verified
    return auth


def password_sign_in(e, pb, email, password):
    request = pb.account.SignInWithPasswordRequest(email=email, password=password)
    return rpc(e.daemon, pb, ACCOUNT + "SignInWithPassword", request, pb.account.AuthResponse)


def refresh(e, pb, refresh_token):
    request = pb.account.RefreshTokenRequest(refresh_token=refresh_token)
    return rpc(e.daemon, pb, ACCOUNT + "RefreshToken", request, pb.account.AuthResponse)


def verify_revoked(e, pb, id_token):
    request = pb.token.VerifyIdTokenRequest(id_token=id_token, check_revoked=True)
    return rpc(e.daemon, pb, VERIFY, request, pb.token.VerifyIdTokenResponse)


def oidc(e, pb, token):
    return sign_in(e, pb, provider_id="oidc.test", id_token=token)


def providers(account):
    return [(p.provider_id, p.raw_id) for p in account.providers]


# MARK: Pre-registration lockout


def test_a_verified_provider_identity_takes_over_a_pre_registered_email(idp, pb):
    attacker = password_sign_up(idp, pb, "victim@example.com", "attacker-pass-1")
    admin(idp, pb, "SetCustomClaims", pb.admin.SetCustomClaimsRequest(
        local_id=attacker.local_id, custom_claims_json='{"plan":"gold"}'), pb.account.AccountInfo)
    status, _ = verify_revoked(idp, pb, attacker.id_token)
    assert status.code == 0, status  # the attacker's token is good until the owner comes
    time.sleep(1.1)  # valid_since is in whole seconds
    before = account_count(idp, pb)

    # The owner signs in with a provider that vouches for the address.
    token = idp.provider.token("victim-sub", email="victim@example.com", name="Victim Owner")
    status, victim = oidc(idp, pb, token)
    assert status.code == 0, status
    assert victim.local_id == attacker.local_id and not victim.is_new_user
    assert victim.sign_in_provider == "oidc.test"
    account = stored(idp, pb, victim.local_id)
    assert providers(account) == [("oidc.test", "victim-sub")]
    assert account.email == "victim@example.com" and account.email_verified
    assert account.display_name == "Victim Owner" and not account.is_anonymous
    assert json.loads(account.custom_claims_json) == {"plan": "gold"}
    assert account_count(idp, pb) == before  # the same account, no new one

    # Nothing of the attacker's survives: the password, the session, the ID token.
    status, _ = password_sign_in(idp, pb, "victim@example.com", "attacker-pass-1")
    assert (status.code, status.reason) == (16, "INVALID_LOGIN_CREDENTIALS"), status
    status, _ = refresh(idp, pb, attacker.refresh_token)
    assert status.code == 16 and status.reason in ("INVALID_REFRESH_TOKEN", "TOKEN_EXPIRED"), status
    status, _ = verify_revoked(idp, pb, attacker.id_token)
    assert (status.code, status.reason) == (16, "TOKEN_EXPIRED"), status
    # Signing up again with the address is refused.
    status, _ = rpc(idp.daemon, pb, ACCOUNT + "SignUp", email_sign_up(pb, "victim@example.com", "attacker-pass-2"),
                    pb.account.AuthResponse)
    assert (status.code, status.reason) == (6, "EMAIL_EXISTS"), status

    # The owner's session works and the next sign-in finds the same account.
    status, verified = verify_revoked(idp, pb, victim.id_token)
    assert status.code == 0 and verified.uid == victim.local_id, status
    status, refreshed = refresh(idp, pb, victim.refresh_token)
    assert status.code == 0 and refreshed.local_id == victim.local_id, status
    status, again = oidc(idp, pb, idp.provider.token("victim-sub", email="victim@example.com"))
    assert status.code == 0 and again.local_id == victim.local_id and not again.is_new_user, status

    logged = [json.loads(line) for line in idp.daemon.log_lines() if TAKEOVER_LOG in line]
    assert len(logged) == 1 and logged[0]["uid"] == victim.local_id, logged
    assert logged[0]["removed_providers"] == "password", logged


def test_an_unverified_provider_email_does_not_take_over(idp, pb):
    attacker = password_sign_up(idp, pb, "unverified@example.com", "attacker-pass-1")
    before, count = stored(idp, pb, attacker.local_id), account_count(idp, pb)

    token = idp.provider.token("unverified-sub", email="unverified@example.com", email_verified=False)
    status, _ = oidc(idp, pb, token)
    assert (status.code, status.reason) == (6, "EMAIL_EXISTS"), status
    assert stored(idp, pb, attacker.local_id) == before
    assert account_count(idp, pb) == count
    status, again = password_sign_in(idp, pb, "unverified@example.com", "attacker-pass-1")
    assert status.code == 0 and again.local_id == attacker.local_id, status
    assert providers(again.account) == [("password", "unverified@example.com")]
    status, _ = verify_revoked(idp, pb, attacker.id_token)
    assert status.code == 0, status


def test_a_verified_or_disabled_holder_is_never_taken_over(idp, pb):
    # A holder whose email is verified keeps it: the second identity gets EMAIL_EXISTS.
    status, first = oidc(idp, pb, idp.provider.token("first-sub", email="verified@example.com"))
    assert status.code == 0 and first.is_new_user and first.account.email_verified, status
    before, count = stored(idp, pb, first.local_id), account_count(idp, pb)
    status, _ = oidc(idp, pb, idp.provider.token("second-sub", email="verified@example.com"))
    assert (status.code, status.reason) == (6, "EMAIL_EXISTS"), status
    assert stored(idp, pb, first.local_id) == before and account_count(idp, pb) == count

    # A disabled unverified account: USER_DISABLED, and it stays as it was.
    attacker = password_sign_up(idp, pb, "disabled@example.com", "attacker-pass-1")
    admin(idp, pb, "DisableAccount", pb.admin.DisableAccountRequest(local_id=attacker.local_id, disabled=True),
          pb.account.AccountInfo)
    before = stored(idp, pb, attacker.local_id)
    status, _ = oidc(idp, pb, idp.provider.token("disabled-sub", email="disabled@example.com"))
    assert (status.code, status.reason) == (7, "USER_DISABLED"), status
    assert stored(idp, pb, attacker.local_id) == before
    assert account_count(idp, pb) == (count[0] + 1, count[1] + 1)


# MARK: Several audiences need azp


def test_several_audiences_need_azp_naming_the_client(idp, pb):
    count = account_count(idp, pb)
    audiences = [CLIENT_ID, "other-client"]
    for azp in (None, "other-client"):
        extra = {"azp": azp} if azp else {}
        status, _ = oidc(idp, pb, idp.provider.token(f"aud-{azp}", aud=audiences, **extra))
        assert (status.code, status.reason) == INVALID_IDP, (azp, status)
    assert account_count(idp, pb) == count

    status, named = oidc(idp, pb, idp.provider.token("aud-named", aud=audiences, azp=CLIENT_ID))
    assert status.code == 0 and named.is_new_user, status
    assert providers(stored(idp, pb, named.local_id)) == [("oidc.test", "aud-named")]
    # One audience (us) is judged by it alone: Google's cross-client form names the app in azp.
    status, cross = oidc(idp, pb, idp.provider.token("aud-cross", azp="android-app"))
    assert status.code == 0 and cross.is_new_user, status
    assert account_count(idp, pb) == (count[0] + 2, count[1] + 2)


# MARK: Control characters in provider text


@pytest.mark.parametrize("claims", [
    {"sub": "nul\x00sub"},
    {"sub": "bell-sub", "name": "Eve\x07"},
    {"sub": "newline-sub", "name": "Eve\nAdmin"},
], ids=["sub-nul", "name-bel", "name-newline"])
def test_control_characters_in_provider_text_are_refused(idp, pb, claims):
    count = account_count(idp, pb)
    claims = dict(claims)
    status, _ = oidc(idp, pb, idp.provider.token(claims.pop("sub"), **claims))
    assert (status.code, status.reason) == INVALID_IDP, status
    assert account_count(idp, pb) == count
