"""ImportAccounts against the real daemon: a Firebase export's rows (the published
modified-scrypt example, an anonymous user, a Google user, bad rows) imported with their
uids; the password signs in and is then re-hashed; the same import again changes nothing;
a dry run writes nothing; an imported anonymous user moves its device over with the
Firebase session exchange and keeps its uid."""

import base64
import contextlib
import os
import sqlite3

from conftest import Daemon
from test_firebase_exchange import FIREBASE_PROJECT, Securetoken, rpc

ACCOUNT = "/anonauth.v1.AccountService/"
ADMIN = "/anonauth.v1.AdminService/"
SIGNER_KEY = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
SALT = "42xEC+ixf3L2lw=="
HASH = "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="


def configure(daemon, pb, certs):
    req = pb.admin.UpdateProjectConfigRequest()
    req.config.project_id = daemon.client_json["project_id"]
    req.config.email_password_enabled = True
    req.config.firebase_project_id = FIREBASE_PROJECT
    req.config.firebase_certs_json = certs
    req.update_mask.extend(["email_password_enabled", "firebase_project_id", "firebase_certs_json"])
    status, _ = rpc(daemon, pb, ADMIN + "UpdateProjectConfig", req, pb.admin.ProjectConfig, admin=True)
    assert status.code == 0, status


def rows(pb):
    A = pb.admin.ImportedAccount
    return [
        A(local_id="fb-password-user", email="User1@Example.com", email_verified=True,
          password_hash=base64.b64decode(HASH), salt=base64.b64decode(SALT), created_at_ms=1600000000000,
          last_sign_in_at_ms=1600000100000, display_name="User One", photo_url="https://example.com/u1.png",
          custom_claims_json='{"plan":"pro"}',
          providers=[pb.admin.ImportedProvider(provider_id="password", raw_id="user1@example.com")]),
        A(local_id="fb-anonymous-user", created_at_ms=1700000000000),
        A(local_id="fb-google-user", email="g@example.com",
          providers=[pb.admin.ImportedProvider(provider_id="google.com", raw_id="1098", email="g@example.com",
                                               photo_url="https://example.com/g.png")]),
        A(local_id="", email="x@example.com"),                                    # 3 INVALID_UID
        A(local_id="fb-bad-email", email="not an email"),                        # 4 INVALID_EMAIL
        A(local_id="fb-bad-claims", custom_claims_json='{"sub":"x"}'),           # 5 FORBIDDEN_CLAIM
        A(local_id="fb-bad-provider", providers=[pb.admin.ImportedProvider(provider_id="Bad Id", raw_id="1")]),
        A(local_id="fb-same-email", email="user1@example.com"),                  # 7 EMAIL_EXISTS
        A(local_id="fb-same-google", providers=[pb.admin.ImportedProvider(provider_id="google.com", raw_id="1098")]),
        A(local_id="fb-anonymous-user"),                                          # 9 DUPLICATE_UID
        A(local_id="fb-other", email="g@example.com"),                            # 10 DUPLICATE_EMAIL
        A(local_id="fb-no-config", email="nc@example.com", password_hash=b"x" * 32),  # 11 (no config below)
        A(local_id="fb-bad-time", created_at_ms=-5),                              # 12 INVALID_FIELD
        A(local_id="fb-hash-no-email", password_hash=b"x" * 32),                  # 13 INVALID_PASSWORD_HASH
    ]


def import_request(daemon, pb, accounts, **kw):
    req = pb.admin.ImportAccountsRequest(project_id=daemon.client_json["project_id"], accounts=accounts, **kw)
    req.hash_config.algorithm = "SCRYPT"
    req.hash_config.signer_key = base64.b64decode(SIGNER_KEY)
    req.hash_config.salt_separator = base64.b64decode("Bw==")
    req.hash_config.rounds = 8
    req.hash_config.mem_cost = 14
    status, response = rpc(daemon, pb, ADMIN + "ImportAccounts", req, pb.admin.ImportAccountsResponse, admin=True)
    assert status.code == 0, status
    return response


def sign_in(daemon, pb, email, password):
    req = pb.account.SignInWithPasswordRequest(email=email, password=password)
    return rpc(daemon, pb, ACCOUNT + "SignInWithPassword", req, pb.account.AuthResponse)


def count(daemon, pb):
    req = pb.admin.ListAccountsRequest(project_id=daemon.client_json["project_id"])
    status, page = rpc(daemon, pb, ADMIN + "ListAccounts", req, pb.admin.ListAccountsResponse, admin=True)
    assert status.code == 0, status
    return page.total


def test_import_keeps_uids_hashes_and_is_idempotent(daemon, pb):
    securetoken = Securetoken()
    configure(daemon, pb, securetoken.certs_json)
    before = count(daemon, pb)

    dry = import_request(daemon, pb, rows(pb), dry_run=True)
    assert (dry.imported, dry.skipped) == (4, 0)
    assert count(daemon, pb) == before

    first = import_request(daemon, pb, rows(pb), first_index=0)
    assert (first.imported, first.skipped) == (4, 0)
    reasons = {e.index: e.reason for e in first.errors}
    assert reasons == {3: "INVALID_UID", 4: "INVALID_EMAIL", 5: "FORBIDDEN_CLAIM", 6: "INVALID_PROVIDER",
                       7: "DUPLICATE_EMAIL", 8: "CREDENTIAL_ALREADY_IN_USE", 9: "DUPLICATE_UID",
                       10: "DUPLICATE_EMAIL", 12: "INVALID_FIELD", 13: "INVALID_PASSWORD_HASH"}, first.errors
    assert count(daemon, pb) == before + 4  # the three good rows and fb-no-config (the request has a config)
    later = import_request(daemon, pb, [pb.admin.ImportedAccount(local_id="fb-late", email="user1@example.com")])
    assert [e.reason for e in later.errors] == ["EMAIL_EXISTS"]
    no_config = pb.admin.ImportAccountsRequest(project_id=daemon.client_json["project_id"],
                                               accounts=[rows(pb)[11]], first_index=11)
    no_config.accounts[0].local_id = "fb-no-config-2"
    status, refused = rpc(daemon, pb, ADMIN + "ImportAccounts", no_config, pb.admin.ImportAccountsResponse, admin=True)
    assert [(e.index, e.reason) for e in refused.errors] == [(11, "MISSING_HASH_CONFIG")]

    again = import_request(daemon, pb, rows(pb)[:3])
    assert (again.imported, again.skipped, len(again.errors)) == (0, 3, 0)
    strict = import_request(daemon, pb, rows(pb)[:1], on_conflict=pb.admin.IMPORT_CONFLICT_FAIL, first_index=41)
    assert [(e.index, e.reason) for e in strict.errors] == [(41, "UID_EXISTS")]
    assert count(daemon, pb) == before + 4

    got = rpc(daemon, pb, ADMIN + "GetAccount",
              pb.admin.GetAccountRequest(project_id=daemon.client_json["project_id"], local_id="fb-password-user"),
              pb.account.AccountInfo, admin=True)[1]
    assert (got.email, got.email_verified, got.display_name, got.created_at_ms, got.custom_claims_json) == (
        "user1@example.com", True, "User One", 1600000000000, '{"plan":"pro"}')
    assert not got.is_anonymous

    def stored_hash():
        with contextlib.closing(sqlite3.connect(os.path.join(daemon.dir, "anonauth.db"))) as db:
            return db.execute("SELECT password_hash FROM accounts WHERE local_id = 'fb-password-user'").fetchone()[0]

    assert stored_hash().startswith("$import$")
    status, _ = sign_in(daemon, pb, "user1@example.com", "wrong password")
    assert status.reason == "INVALID_LOGIN_CREDENTIALS"
    for _ in range(2):  # the first sign-in checks Firebase's hash and re-hashes; the second checks ours
        status, auth = sign_in(daemon, pb, "user1@example.com", "user1password")
        assert status.code == 0, status
        assert auth.local_id == "fb-password-user"
        assert stored_hash().startswith("$scrypt$")

    # The anonymous user's device, still signed in to Firebase, exchanges its token once.
    status, auth = rpc(daemon, pb, ACCOUNT + "SignInWithFirebaseIdToken",
                       pb.account.SignInWithFirebaseIdTokenRequest(id_token=securetoken.token("fb-anonymous-user")),
                       pb.account.AuthResponse)
    assert status.code == 0, status
    assert (auth.local_id, auth.is_anonymous, auth.is_new_user) == ("fb-anonymous-user", True, False)


def test_import_refuses_a_batch_over_1000_and_a_bad_hash_config(daemon, pb):
    A = pb.admin.ImportedAccount
    req = pb.admin.ImportAccountsRequest(project_id=daemon.client_json["project_id"],
                                         accounts=[A(local_id=f"u{n}") for n in range(1001)])
    status, _ = rpc(daemon, pb, ADMIN + "ImportAccounts", req, pb.admin.ImportAccountsResponse, admin=True)
    assert (status.code, status.reason) == (3, "INVALID_ARGUMENT")
    req = pb.admin.ImportAccountsRequest(project_id=daemon.client_json["project_id"], accounts=[A(local_id="u1")])
    req.hash_config.algorithm = "MD5"
    status, _ = rpc(daemon, pb, ADMIN + "ImportAccounts", req, pb.admin.ImportAccountsResponse, admin=True)
    assert (status.code, status.reason) == (3, "INVALID_ARGUMENT")
    req.hash_config.algorithm = "SCRYPT"  # no signer key
    status, _ = rpc(daemon, pb, ADMIN + "ImportAccounts", req, pb.admin.ImportAccountsResponse, admin=True)
    assert (status.code, status.reason) == (3, "INVALID_ARGUMENT")
    # an account without a credential needs neither; nothing was written by the refusals
    req.ClearField("hash_config")
    ok = rpc(daemon, pb, ADMIN + "ImportAccounts", req, pb.admin.ImportAccountsResponse, admin=True)[1]
    assert ok.imported == 1


def test_cli_imports_a_firebase_export_of_thousands(daemon, pb, tmp_path):
    """A made-up project export: 2,500 users (anonymous, email with the published hash,
    Google, disabled, custom claims), imported by the CLI with the console's hash_config
    block, then again (nothing changes), and the CSV form of a few more."""
    import json
    import subprocess
    from test_ops_and_cli import CLI

    configure(daemon, pb, Securetoken().certs_json)
    users = []
    for n in range(2500):
        kind = n % 5
        user = {"localId": f"fbuser{n:05d}", "createdAt": str(1600000000000 + n), "lastSignedInAt": str(1600000500000 + n)}
        if kind == 1:
            user.update(email=f"user{n}@example.com", emailVerified=True, passwordHash=HASH, salt=SALT,
                        providerUserInfo=[{"providerId": "password", "rawId": f"user{n}@example.com"}])
        elif kind == 2:
            user.update(email=f"g{n}@example.com", displayName=f"G {n}",
                        providerUserInfo=[{"providerId": "google.com", "rawId": str(10**12 + n),
                                           "email": f"g{n}@example.com", "photoUrl": "https://example.com/p.png"}])
        elif kind == 3:
            user.update(email=f"off{n}@example.com", disabled=True, customAttributes='{"role":"banned"}')
        users.append(user)
    users.append({"localId": "bad-row", "email": "nope"})
    export = tmp_path / "users.json"
    export.write_text(json.dumps({"users": users}))
    hash_config = tmp_path / "hash_config.txt"
    hash_config.write_text("hash_config {\n  algorithm: SCRYPT,\n  base64_signer_key: " + SIGNER_KEY +
                           ",\n  base64_salt_separator: Bw==,\n  rounds: 8,\n  mem_cost: 14,\n}\n")

    def run(*args):
        return subprocess.run([CLI, "admin", "import-firebase", *args, "--data-dir", daemon.dir, "--json"],
                              capture_output=True, text=True, timeout=120)

    first = run(str(export), "--hash-config", str(hash_config))
    assert first.returncode != 0  # one row refused
    report = json.loads(first.stdout)
    assert (report["imported"], report["skipped"]) == (2500, 0)
    assert [(e["index"], e["reason"]) for e in report["errors"]] == [(2500, "INVALID_EMAIL")]
    again = json.loads(run(str(export), "--hash-config", str(hash_config)).stdout)
    assert (again["imported"], again["skipped"]) == (0, 2500)

    status, auth = sign_in(daemon, pb, "user1@example.com", "user1password")
    assert (status.code, auth.local_id) == (0, "fbuser00001")
    status, _ = sign_in(daemon, pb, "off3@example.com", "x")
    assert status.reason == "INVALID_LOGIN_CREDENTIALS"
    page = rpc(daemon, pb, ADMIN + "ListAccounts",
               pb.admin.ListAccountsRequest(project_id=daemon.client_json["project_id"], filter=1, page_size=1),
               pb.admin.ListAccountsResponse, admin=True)[1]
    assert page.total >= 1000  # the anonymous fifth, at least
    got = rpc(daemon, pb, ADMIN + "GetAccount",
              pb.admin.GetAccountRequest(project_id=daemon.client_json["project_id"], local_id="fbuser00003"),
              pb.account.AccountInfo, admin=True)[1]
    assert (got.disabled, got.custom_claims_json, got.created_at_ms) == (True, '{"role":"banned"}', 1600000000003)

    csv = tmp_path / "users.csv"
    csv.write_text('csvuser1,csv1@example.com,true,,,"Name, with comma",,4242,csv1@example.com,,,,,,,,,,,,,,,'
                   '1600000000000,1600000000001,\ncsvuser2,,false,,,,,,,,,,,,,,,,,,,,,1600000000000,,\n')
    done = run(str(csv))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == 2
    got = rpc(daemon, pb, ADMIN + "GetAccount",
              pb.admin.GetAccountRequest(project_id=daemon.client_json["project_id"], local_id="csvuser1"),
              pb.account.AccountInfo, admin=True)[1]
    assert got.display_name == "Name, with comma"
    assert [(p.provider_id, p.raw_id) for p in got.providers] == [("google.com", "4242")]

    # The export gives back the same users, hashes included, and imports into a new store.
    exported_file = tmp_path / "export.json"
    out = subprocess.run([CLI, "admin", "export-firebase", str(exported_file), "--data-dir", daemon.dir, "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    exported = {u["localId"]: u for u in json.loads(exported_file.read_text())["users"]}
    for original in users[:2500]:
        back = exported[original["localId"]]
        for key in ("email", "displayName", "createdAt", "lastSignedInAt", "customAttributes"):
            if (key, original["localId"]) != ("lastSignedInAt", "fbuser00001"):  # it signed in since
                assert back.get(key) == original.get(key), (key, original, back)
        assert back["disabled"] == original.get("disabled", False)
    assert (exported["fbuser00006"]["passwordHash"], exported["fbuser00006"]["salt"]) == (HASH, SALT)
    assert exported["fbuser00001"]["anonauthPasswordHash"].startswith("$scrypt$")  # re-hashed at sign-in
    google = [p for p in exported["fbuser00002"]["providerUserInfo"] if p["providerId"] == "google.com"]
    assert google == [{"providerId": "google.com", "rawId": str(10**12 + 2), "email": "g2@example.com",
                       "photoUrl": "https://example.com/p.png"}]

    second = Daemon()
    try:
        configure(second, pb, Securetoken().certs_json)
        moved = subprocess.run([CLI, "admin", "import-firebase", str(exported_file), "--hash-config", str(hash_config),
                                "--data-dir", second.dir, "--json"], capture_output=True, text=True, timeout=120)
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert json.loads(moved.stdout)["imported"] == len(exported)
        for email, uid in (("user1@example.com", "fbuser00001"), ("user6@example.com", "fbuser00006")):
            status, auth = sign_in(second, pb, email, "user1password")
            assert (status.code, auth.local_id) == (0, uid), status
    finally:
        second.stop()


def test_other_algorithms_sign_in_after_import(daemon, pb):
    """PBKDF2_SHA256 and HMAC_SHA256 hashes made here with hashlib/hmac, as another
    system would have stored them, sign in after an import (one config per call)."""
    import hashlib
    import hmac
    configure(daemon, pb, Securetoken().certs_json)
    salt = b"pepper-free salt"
    cases = [
        ("PBKDF2_SHA256", dict(rounds=1000), hashlib.pbkdf2_hmac("sha256", b"pbkdf2 pass", salt, 1000, 64),
         "pbkdf2@example.com", "pbkdf2 pass"),
        ("HMAC_SHA256", dict(signer_key=b"hmac-key"), hmac.new(b"hmac-key", b"hmac pass" + salt, "sha256").digest(),
         "hmac@example.com", "hmac pass"),
    ]
    for n, (algorithm, params, digest, email, password) in enumerate(cases):
        req = pb.admin.ImportAccountsRequest(project_id=daemon.client_json["project_id"], accounts=[
            pb.admin.ImportedAccount(local_id=f"other-{n}", email=email, password_hash=digest, salt=salt)])
        req.hash_config.algorithm = algorithm
        for key, value in params.items():
            setattr(req.hash_config, key, value)
        status, response = rpc(daemon, pb, ADMIN + "ImportAccounts", req, pb.admin.ImportAccountsResponse,
                               admin=True)
        assert (status.code, response.imported, list(response.errors)) == (0, 1, []), (status, response)
        assert sign_in(daemon, pb, email, password + "!")[0].reason == "INVALID_LOGIN_CREDENTIALS"
        status, auth = sign_in(daemon, pb, email, password)
        assert (status.code, auth.local_id) == (0, f"other-{n}"), status
