"""The CLI against a real daemon (issue 36): the project taken positionally by every admin
command, what it cannot use refused by name, a new project's sign-in methods and the
reason a link is not allowed told, every account field shown, an import checked before
anything is written, `--version` on both binaries, and a wrong master key reported once.
One daemon serves the module."""

import json
import os
import re
import subprocess

import pytest

from conftest import Daemon
from test_firebase_import import HASH, SALT, SIGNER_KEY
from test_ops_and_cli import CLI

ANONAUTHD = os.environ.get("ANONAUTHD")


@pytest.fixture(scope="module")
def shared():
    d = Daemon()
    yield d
    assert d.stop() == 0


def cli(daemon, *args, stdin=None):
    return subprocess.run([CLI, *args, "--data-dir", daemon.dir], capture_output=True, text=True, timeout=120,
                          input=stdin)


def test_version_on_both_binaries():
    for binary, name in ((ANONAUTHD or CLI.replace("/anonauth", "/anonauthd"), "anonauthd"), (CLI, "anonauth")):
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert re.fullmatch(rf"{name} \d+\.\d+\.\d+\S* \(commit \S+, built \S+\)\n", out.stdout), out.stdout


def test_every_admin_command_takes_the_project_first_and_refuses_the_rest(shared):
    project = shared.client_json["project_id"]
    got = cli(shared, "admin", "get-config", project, "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["project_id"] == project
    # The project given is the one asked for, not "" (the positional was dropped).
    missing = cli(shared, "admin", "get-config", "no-such-project")
    assert missing.returncode == 1 and "PROJECT_NOT_FOUND" in missing.stderr and '""' not in missing.stderr
    updated = cli(shared, "admin", "update-config", project, "sign_up_quota_per_hour=1000", "--json")
    assert updated.returncode == 0 and json.loads(updated.stdout)["sign_up_quota_per_hour"] == 1000
    extra = cli(shared, "admin", "get-config", project, "extra")
    assert extra.returncode == 2 and 'unexpected argument "extra"' in extra.stderr
    assert "anonauth admin get-config [PROJECT_ID]" in extra.stderr
    unknown = cli(shared, "admin", "list-accounts", "--colour", "red")
    assert unknown.returncode == 2 and "unknown option --colour" in unknown.stderr
    whoami = cli(shared, "whoami", "--bogus")
    assert whoami.returncode == 2 and "unknown option --bogus" in whoami.stderr


def test_create_project_and_link_say_which_methods_are_off(shared, tmp_path):
    made = cli(shared, "admin", "create-project", "cli-36", "--anonymous")
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "cli-36"  # stdout stays the id, for scripts
    assert "sign-in methods on: anonymous" in made.stderr
    assert "anonauth admin update-config cli-36 email_password_enabled=true" in made.stderr
    key = cli(shared, "admin", "create-api-key", "cli-36").stdout.strip()
    session = ["--api-key", key, "--session", str(tmp_path / "session.json")]
    assert cli(shared, "signin-anonymously", *session).returncode == 0
    link = cli(shared, "link", "email", "--email", "ann@example.com", "--password-stdin", *session,
               stdin="a-long-password\n")
    assert link.returncode == 1
    assert "operation-not-allowed" in link.stderr
    assert "email/password sign-in off" in link.stderr and "email_password_enabled=true" in link.stderr


def test_get_account_shows_every_field(shared, tmp_path):
    uid = cli(shared, "signin-anonymously", "--session", str(tmp_path / "s.json")).stdout.strip()
    shown = cli(shared, "admin", "get-account", uid, "--json")
    assert shown.returncode == 0, shown.stderr
    account = json.loads(shown.stdout)
    for field in ("local_id", "is_anonymous", "email", "email_verified", "display_name", "disabled",
                  "created_at_ms", "last_sign_in_at_ms", "last_refresh_at_ms", "providers", "valid_since",
                  "custom_claims_json", "scheduled_deletion_at_ms", "provider_info"):
        assert field in account, field
    assert account["local_id"] == uid


def test_import_dry_run_fails_on_refused_rows_and_check_password_comes_first(shared, tmp_path):
    good = {"localId": "cli36-pw", "email": "user1@example.com", "passwordHash": HASH, "salt": SALT,
            "providerUserInfo": [{"providerId": "password", "rawId": "user1@example.com"}]}
    with_bad = tmp_path / "with_bad.json"
    with_bad.write_text(json.dumps({"users": [good, {"localId": "cli36-bad", "email": "not an email"}]}))
    only_good = tmp_path / "good.json"
    only_good.write_text(json.dumps({"users": [good]}))

    def hash_config(signer_key):
        path = tmp_path / f"hash-{len(signer_key)}-{signer_key[:4]}.txt"
        path.write_text("hash_config {\n  algorithm: SCRYPT,\n  base64_signer_key: " + signer_key +
                        ",\n  base64_salt_separator: Bw==,\n  rounds: 8,\n  mem_cost: 14,\n}\n")
        return str(path)

    right, wrong = hash_config(SIGNER_KEY), hash_config("AAAA" + SIGNER_KEY[4:])
    dry = cli(shared, "admin", "import-firebase", str(with_bad), "--hash-config", right, "--dry-run", "--json")
    assert dry.returncode == 1, dry.stdout + dry.stderr
    assert "would be refused" in dry.stderr and json.loads(dry.stdout)["dry_run"] is True

    def exists(uid):
        return cli(shared, "admin", "get-account", uid).returncode == 0

    checked = cli(shared, "admin", "import-firebase", str(only_good), "--hash-config", wrong,
                  "--check-password", "user1@example.com", "--password-stdin", stdin="user1password\n")
    assert checked.returncode == 1 and "does not match" in checked.stderr, checked.stderr
    assert not exists("cli36-pw")  # nothing was written
    imported = cli(shared, "admin", "import-firebase", str(only_good), "--hash-config", right,
                   "--check-password", "user1@example.com", "--password-stdin", "--json", stdin="user1password\n")
    assert imported.returncode == 0, imported.stderr
    assert "password matches" in imported.stderr and json.loads(imported.stdout)["imported"] == 1
    assert exists("cli36-pw")


def test_a_wrong_master_key_says_authentication_failed_once(tmp_path):
    first = Daemon()
    data_dir = first.dir
    assert first.stop() == 0
    other = tmp_path / "other.key"
    other.write_text("ab" * 32 + "\n")
    os.chmod(other, 0o600)
    binary = ANONAUTHD or CLI.replace("/anonauth", "/anonauthd")
    out = subprocess.run([binary, "--dev", "--data-dir", data_dir, "--listen", "127.0.0.1:0", "--ops-listen",
                          "127.0.0.1:0", "--master-key-file", str(other)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "authentication failed" in out.stderr, out.stderr
    assert "failed failed" not in out.stderr
    assert "is --master-key-file the key this store was made with?" in out.stderr
