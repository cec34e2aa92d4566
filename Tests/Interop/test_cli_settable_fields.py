"""`anonauth admin update-config` and `get-config` for every settable field of
ProjectConfig, as Protos/ marks them (`// settable`): each is set through the CLI alone,
and both the answer and a later get-config show the new value.

The fields are read from the .proto, so a field marked settable there is tested here
without an edit; only its value must be chosen below (the test says so when one is
missing)."""

import json
import re

from conftest import ROOT
from test_ops_and_cli import cli

PROTO = ROOT / "Protos/anonauth/v1/admin.proto"

# A valid value, other than a new project's, for each field that is not a bool.
VALUES = {
    "sign_up_quota_per_hour": ("7", 7),
    "id_token_ttl_seconds": ("900", 900),
    "password_min_length": ("12", 12),
    "firebase_project_id": ("my-fb", "my-fb"),
    "firebase_certs_json": ("{}", "{}"),
    "firebase_certs_url": ("https://certs.test/securetoken", "https://certs.test/securetoken"),
    "cors_origins": ("https://app.example.com, http://localhost:5173",
                     ["https://app.example.com", "http://localhost:5173"]),
    "authorized_domains": ("localhost, app.example.com", ["localhost", "app.example.com"]),
    "email_sender": ("Demo <no-reply@example.com>", "Demo <no-reply@example.com>"),
    "email_app_name": ("Demo App", "Demo App"),
}
IDPS = [{"provider_id": "google.com", "enabled": True, "client_id": "web-client"}]
TEMPLATES = [{"request_type": "PASSWORD_RESET", "language": "de", "subject": "Neues Passwort",
              "text": "Hier: %LINK%", "html": ""}]


def settable_fields():
    """(type, name) of each field of ProjectConfig marked `// settable`."""
    text = PROTO.read_text()
    body = re.search(r"^message ProjectConfig \{\n(.*?)^\}", text, re.S | re.M).group(1)
    fields = re.findall(r"^\s+(?:repeated\s+)?(\w+)\s+(\w+)\s*=\s*\d+;\s*//\s*settable\s*$", body, re.M)
    assert fields, "no field of ProjectConfig is marked settable"
    return fields


def test_every_settable_field_through_the_cli(daemon, tmp_path):
    idps_file = tmp_path / "idps.json"
    idps_file.write_text(json.dumps(IDPS))
    for kind, name in settable_fields():
        before = json.loads(cli(daemon, "admin", "get-config", "--json").stdout)
        assert name in before, f"get-config does not show {name}"
        if kind == "bool":
            argument, wanted = str(not before[name]).lower(), not before[name]
        elif name == "idps":
            argument, wanted = f"@{idps_file}", [{**IDPS[0], "issuer": "", "jwks_url": ""}]
        elif name == "email_templates":
            templates_file = tmp_path / "templates.json"
            templates_file.write_text(json.dumps(TEMPLATES))
            argument, wanted = f"@{templates_file}", TEMPLATES
        else:
            assert name in VALUES, f"choose a valid value for the new settable field {name} in VALUES"
            argument, wanted = VALUES[name]
        assert before[name] != wanted, name
        answer = json.loads(cli(daemon, "admin", "update-config", f"{name}={argument}", "--json").stdout)
        assert answer[name] == wanted, (name, answer)
        shown = json.loads(cli(daemon, "admin", "get-config", "--json").stdout)
        assert shown[name] == wanted, (name, shown)
        # Only the named field changed.
        assert {k: v for k, v in shown.items() if k not in (name, "auto_cleanup_enabled_at_ms")} == {
            k: v for k, v in before.items() if k not in (name, "auto_cleanup_enabled_at_ms")}, name
