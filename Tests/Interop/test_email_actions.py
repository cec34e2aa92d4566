"""Email actions over a real SMTP server (aiosmtpd from PyPI, started here) with STARTTLS
on a certificate made for 127.0.0.1, AUTH required over TLS, and a failure mode that
answers 451 to the next mails. The daemon mails through --smtp-url; the tests read the
mails the server received, follow their links, and call Firebase's JSON API (v1 layout on
the emulator listener) as an app would."""

import email
import email.policy
import json
import os
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

aiosmtpd_controller = pytest.importorskip("aiosmtpd.controller")
from aiosmtpd.smtp import AuthResult  # noqa: E402

from conftest import TEST_DAEMON_FLAGS, Daemon, call, metrics  # noqa: E402

SMTP_USER = "anonauth"
SMTP_PASSWORD = "s3cret:with-colon"


class Inbox:
    """What the SMTP server received, and its failure mode."""

    def __init__(self):
        self.lock = threading.Condition()
        self.mails = []
        self.fail_next = 0
        self.refused = 0

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                self.refused += 1
                return "451 4.3.0 try again later"
            self.mails.append({
                "to": envelope.rcpt_tos, "from": envelope.mail_from,
                "tls": session.ssl is not None, "authenticated": session.authenticated,
                "message": email.message_from_bytes(envelope.content, policy=email.policy.default),
            })
            self.lock.notify_all()
        return "250 OK"

    def wait_for(self, recipient, count=1, timeout=60):
        """The mails to `recipient` once `count` have arrived (a generous deadline: the
        worker delivers at once; this only keeps a broken build from hanging)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                found = [m for m in self.mails if recipient in m["to"]]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                assert left > 0, f"no mail to {recipient}; got {[m['to'] for m in self.mails]}"
                self.lock.wait(left)

    def to(self, recipient):
        with self.lock:
            return [m for m in self.mails if recipient in m["to"]]


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == SMTP_USER.encode() and auth_data.password == SMTP_PASSWORD.encode()
    return AuthResult(success=ok)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smtp_server_tls(work):
    """A self-signed P-256 certificate for 127.0.0.1 written into `work`, and the server
    TLS context that presents it; returns (cert.pem path, context)."""
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    return cert, tls


@pytest.fixture(scope="module")
def mail_setup():
    """A daemon mailing through a STARTTLS + AUTH SMTP server; (daemon, inbox)."""
    work = tempfile.mkdtemp(prefix="anonauth-smtp-")
    cert, tls = smtp_server_tls(work)
    inbox = Inbox()
    port = free_port()
    controller = aiosmtpd_controller.Controller(
        inbox, hostname="127.0.0.1", port=port, tls_context=tls, require_starttls=True,
        authenticator=authenticator, auth_require_tls=True)
    controller.start()
    credentials = os.path.join(work, "smtp-credentials")
    with open(os.open(credentials, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(f"{SMTP_USER}:{SMTP_PASSWORD}\n")
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--firebase-emulator-listen", "127.0.0.1:0",
                      "--smtp-url", f"smtp://127.0.0.1:{port}", "--smtp-credentials-file", credentials,
                      "--smtp-ca-file", cert, "--smtp-from", "Demo App <no-reply@example.com>",
                      "--mail-retry-base-ms", "200"])
    yield d, inbox
    assert d.stop() == 0
    controller.stop()


def api(d, method, body, headers=None):
    """A client call through the emulator listener: (status, JSON body)."""
    host, port = d.emulator
    url = (f"http://{host}:{port}/identitytoolkit.googleapis.com/v1/accounts:{method}"
           f"?key={d.client_json['api_key']}")
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def ok(d, method, body, headers=None):
    status, out = api(d, method, body, headers)
    assert status == 200, out
    return out


def error_message(d, method, body):
    status, out = api(d, method, body)
    assert status == 400, out
    return out["error"]["message"]


def refresh(d, refresh_token):
    host, port = d.emulator
    url = f"http://{host}:{port}/securetoken.googleapis.com/v1/token?key={d.client_json['api_key']}"
    data = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh_token}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def link_of(mail):
    """The action link in a mail's plain-text part, and its query."""
    text = mail["message"].get_body(preferencelist=("plain",)).get_content()
    line = next(word for word in text.split() if "oobCode=" in word)
    return line, dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(line).query))


def wait_log(d, text, timeout=60):
    """The daemon's log once it holds `text` (its lines are written asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        log = d.log_lines_text()
        if text in log:
            return log
        assert time.monotonic() < deadline, f"no {text!r} in the log"
        time.sleep(0.05)


def emulator_codes(d):
    host, port = d.emulator
    url = f"http://{host}:{port}/emulator/v1/projects/{d.client_json['project_id']}/oobCodes"
    with urllib.request.urlopen(url, timeout=30) as reply:
        return json.loads(reply.read())["oobCodes"]


def sign_up(d, email_address, password="first-password"):
    return ok(d, "signUp", {"email": email_address, "password": password, "returnSecureToken": True})


def test_reset_flow_end_to_end_from_the_mails_link(mail_setup):
    d, inbox = mail_setup
    user = sign_up(d, "reset@example.com")
    sent = ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "Reset@Example.com"})
    assert sent == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": "reset@example.com"}
    [mail] = inbox.wait_for("reset@example.com")
    # Delivered over STARTTLS, after AUTH, from the configured sender.
    assert mail["tls"] and mail["authenticated"]
    assert mail["from"] == "no-reply@example.com"
    assert mail["message"]["From"] == "Demo App <no-reply@example.com>"
    assert "Reset your password" in mail["message"]["Subject"]
    assert mail["message"].get_body(preferencelist=("html",)) is not None
    link, query = link_of(mail)
    assert query["mode"] == "resetPassword" and query["apiKey"] == d.client_json["api_key"]
    code = query["oobCode"]
    # The send is logged, the code never.
    log = wait_log(d, "mail sent")
    assert "email action queued" in log and code not in log

    # Checking the code spends nothing; setting the password ends every session.
    checked = ok(d, "resetPassword", {"oobCode": code})
    assert checked["email"] == "reset@example.com" and checked["requestType"] == "PASSWORD_RESET"
    ok(d, "resetPassword", {"oobCode": code, "newPassword": "second-password"})
    status, out = refresh(d, user["refreshToken"])
    assert status == 400 and out["error"]["message"].startswith("TOKEN_EXPIRED"), out
    assert error_message(d, "signInWithPassword", {"email": "reset@example.com", "password": "first-password"}) \
        == "INVALID_LOGIN_CREDENTIALS"
    ok(d, "signInWithPassword", {"email": "reset@example.com", "password": "second-password"})
    # A code works once.
    assert error_message(d, "resetPassword", {"oobCode": code, "newPassword": "third-password"}) \
        == "INVALID_OOB_CODE"
    assert error_message(d, "resetPassword", {"oobCode": "not-a-code"}) == "INVALID_OOB_CODE"


def test_a_newer_code_and_a_password_change_spend_older_codes(mail_setup):
    d, _ = mail_setup
    user = sign_up(d, "newer@example.com")
    ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "newer@example.com"})
    ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "newer@example.com"})
    first, second = [c["oobCode"] for c in emulator_codes(d) if c["email"] == "newer@example.com"]
    assert error_message(d, "resetPassword", {"oobCode": first}) == "INVALID_OOB_CODE"
    assert ok(d, "resetPassword", {"oobCode": second})["email"] == "newer@example.com"
    # The signed-in user changes the password: the mailed code is spent.
    ok(d, "update", {"idToken": user["idToken"], "password": "changed-password", "returnSecureToken": True})
    assert error_message(d, "resetPassword", {"oobCode": second}) == "INVALID_OOB_CODE"


def test_enumeration_protection_answers_the_same_and_sends_nothing(mail_setup):
    d, inbox = mail_setup
    sign_up(d, "known@example.com")
    unknown = ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "nobody@example.com"})
    known = ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "known@example.com"})
    assert set(unknown) == set(known) and unknown["kind"] == known["kind"]
    assert unknown["email"] == "nobody@example.com"
    inbox.wait_for("known@example.com")
    assert inbox.to("nobody@example.com") == []
    assert "nobody@example.com" not in [c["email"] for c in emulator_codes(d)]


def test_an_anonymous_user_upgraded_by_an_email_link_keeps_its_uid(mail_setup):
    d, inbox = mail_setup
    anonymous = ok(d, "signUp", {"returnSecureToken": True})
    uid = anonymous["localId"]
    settings = {"continueUrl": "http://localhost/finish?x=1", "canHandleCodeInApp": True,
                "iOSBundleId": "com.example.app"}
    ok(d, "sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": "upgrade@example.com", **settings},
       headers={"X-Firebase-Locale": "de"})
    [mail] = inbox.wait_for("upgrade@example.com")
    link, query = link_of(mail)
    assert query["mode"] == "signIn" and query["continueUrl"] == "http://localhost/finish?x=1"
    assert query["lang"] == "de"
    # The mail is in the request's language (X-Firebase-Locale), English by default.
    assert mail["message"]["Subject"] == "Anmeldung bei demo-project"
    # Another address with the code is refused and spends nothing.
    assert error_message(d, "signInWithEmailLink", {"email": "other@example.com", "oobCode": query["oobCode"]}) \
        == "INVALID_EMAIL"
    linked = ok(d, "signInWithEmailLink",
                {"email": "upgrade@example.com", "oobCode": query["oobCode"], "idToken": anonymous["idToken"]})
    assert linked["localId"] == uid and linked["email"] == "upgrade@example.com"
    assert linked["isNewUser"] is False
    [account] = ok(d, "lookup", {"idToken": linked["idToken"]})["users"]
    assert account["localId"] == uid and account["emailVerified"] is True
    assert [p["providerId"] for p in account["providerUserInfo"]] == ["password"]
    # The email-link account sets a password as a password account changes one.
    with_password = ok(d, "update", {"idToken": linked["idToken"], "password": "link-password",
                                     "returnSecureToken": True})
    assert with_password["localId"] == uid
    assert ok(d, "signInWithPassword", {"email": "upgrade@example.com", "password": "link-password"})[
        "localId"] == uid
    # A later link signs in to the same account.
    ok(d, "sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": "upgrade@example.com", **settings})
    code = [c for c in emulator_codes(d) if c["email"] == "upgrade@example.com"][-1]["oobCode"]
    again = ok(d, "signInWithEmailLink", {"email": "upgrade@example.com", "oobCode": code})
    assert again["localId"] == uid


def test_email_verification_and_email_change(mail_setup):
    d, inbox = mail_setup
    user = sign_up(d, "verify@example.com")
    ok(d, "sendOobCode", {"requestType": "VERIFY_EMAIL", "idToken": user["idToken"]})
    [mail] = inbox.wait_for("verify@example.com")
    _, query = link_of(mail)
    applied = ok(d, "update", {"oobCode": query["oobCode"]})
    assert applied["email"] == "verify@example.com" and applied["emailVerified"] is True
    ok(d, "sendOobCode", {"requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": user["idToken"],
                          "newEmail": "changed@example.com"})
    [mail] = inbox.wait_for("changed@example.com")
    _, query = link_of(mail)
    assert ok(d, "resetPassword", {"oobCode": query["oobCode"]})["newEmail"] == "changed@example.com"
    changed = ok(d, "update", {"oobCode": query["oobCode"]})
    assert changed["email"] == "changed@example.com" and changed["emailVerified"] is True
    ok(d, "signInWithPassword", {"email": "changed@example.com", "password": "first-password"})


def test_continue_urls_only_to_authorized_domains(mail_setup):
    d, _ = mail_setup
    sign_up(d, "redirect@example.com")
    base = {"requestType": "PASSWORD_RESET", "email": "redirect@example.com"}
    message = error_message(d, "sendOobCode", {**base, "continueUrl": "https://evil.example.net/x"})
    assert message.startswith("UNAUTHORIZED_DOMAIN")
    assert error_message(d, "sendOobCode", {**base, "continueUrl": "javascript:alert(1)"}) \
        .startswith("INVALID_CONTINUE_URI")
    assert error_message(d, "sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": "redirect@example.com"}) \
        .startswith("INVALID_CONTINUE_URI")
    assert error_message(d, "sendOobCode", {"requestType": "NOPE", "email": "redirect@example.com"}) \
        .startswith("INVALID_ARGUMENT")


def test_a_server_that_refuses_then_accepts_gets_the_mail(mail_setup):
    d, inbox = mail_setup
    sign_up(d, "retry@example.com")
    with inbox.lock:
        inbox.fail_next = 1
    ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "retry@example.com"})
    [mail] = inbox.wait_for("retry@example.com")
    assert inbox.refused >= 1
    assert metrics(d)['anonauth_mails_total{outcome="retried"}'] >= 1
    wait_log(d, "mail not delivered: retried later")


def test_sends_are_limited_per_address(mail_setup):
    d, _ = mail_setup
    body = {"requestType": "PASSWORD_RESET", "email": "flood@example.com"}
    answers = [api(d, "sendOobCode", body) for _ in range(7)]
    assert [status for status, _ in answers[:5]] == [200] * 5
    status, out = answers[5]
    assert status == 400 and out["error"]["message"].startswith("TOO_MANY_ATTEMPTS_TRY_LATER"), out


def test_admin_links_through_the_project_path(mail_setup):
    d, inbox = mail_setup
    sign_up(d, "admin-link@example.com")
    host, port = d.emulator
    url = (f"http://{host}:{port}/identitytoolkit.googleapis.com/v1/projects/"
           f"{d.client_json['project_id']}/accounts:sendOobCode")
    body = {"requestType": "PASSWORD_RESET", "email": "admin-link@example.com", "returnOobLink": True}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "Authorization": "Bearer owner"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        out = json.loads(reply.read())
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(out["oobLink"]).query))
    assert query["oobCode"] == out["oobCode"] and query["mode"] == "resetPassword"
    assert ok(d, "resetPassword", {"oobCode": out["oobCode"]})["email"] == "admin-link@example.com"
    assert inbox.to("admin-link@example.com") == []
    # An app cannot ask for the link.
    assert error_message(d, "sendOobCode", {**body}).startswith("INSUFFICIENT_PERMISSION")


def test_the_cli_reset_and_admin_link(mail_setup, tmp_path):
    """`anonauth reset-password` (send, then confirm with the mail's link) and
    `anonauth admin action-link`."""
    from test_ops_and_cli import CLI, cli
    d, inbox = mail_setup
    sign_up(d, "cli@example.com")
    assert "on its way" in cli(d, "reset-password", "--email", "cli@example.com").stdout
    [mail] = inbox.wait_for("cli@example.com")
    link, _ = link_of(mail)
    checked = json.loads(cli(d, "reset-password", "--code", link, "--check", "--json").stdout)
    assert checked == {"email": "cli@example.com", "request_type": "PASSWORD_RESET"}
    confirmed = subprocess.run([CLI, "reset-password", "--code", link, "--password-stdin", "--data-dir", d.dir],
                               input="cli-password-2\n", capture_output=True, text=True, timeout=30)
    assert confirmed.returncode == 0, confirmed.stderr
    ok(d, "signInWithPassword", {"email": "cli@example.com", "password": "cli-password-2"})
    made = json.loads(cli(d, "admin", "action-link", "verify-email", "cli@example.com", "--json").stdout)
    assert "mode=verifyEmail" in made["link"] and made["email"] == "cli@example.com"
    verified = json.loads(cli(d, "verify-email", "--code", made["link"], "--json").stdout)
    assert verified["email_verified"] == "true"


def test_the_native_transport_and_the_admin_sdk(mail_setup, pb, monkeypatch):
    """SendOobCode and ResetPassword as native calls (the gRPC path is generated from the
    same routes), and the Admin SDK's generate_password_reset_link on the emulator
    listener."""
    d, inbox = mail_setup
    sign_up(d, "native@example.com")
    meta = {"x-api-key": d.client_json["api_key"]}
    with d.connect() as s:
        bad = pb.account.SendOobCodeRequest(request_type="NOPE", email="native@example.com")
        status, _ = call(s, pb, "/anonauth.v1.AccountService/SendOobCode", bad, metadata=meta)
        assert status.code == 3 and status.reason == "INVALID_ARGUMENT", status
        request = pb.account.SendOobCodeRequest(request_type="PASSWORD_RESET", email="native@example.com")
        status, sent = call(s, pb, "/anonauth.v1.AccountService/SendOobCode", request,
                            pb.account.SendOobCodeResponse, metadata=meta, call_id=2)
        assert status.code == 0 and sent.email == "native@example.com" and not sent.oob_link
        [mail] = inbox.wait_for("native@example.com")
        _, query = link_of(mail)
        used = pb.account.ResetPasswordRequest(oob_code=query["oobCode"], new_password="native-2")
        status, answer = call(s, pb, "/anonauth.v1.AccountService/ResetPassword", used,
                              pb.account.ResetPasswordResponse, metadata=meta, call_id=3)
        assert status.code == 0 and answer.request_type == "PASSWORD_RESET", status
        status, _ = call(s, pb, "/anonauth.v1.AccountService/ResetPassword", used, metadata=meta, call_id=4)
        assert status.code == 3 and status.reason == "INVALID_OOB_CODE", status

    firebase_admin = pytest.importorskip("firebase_admin")
    from firebase_admin import auth
    host, port = d.emulator
    monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", f"{host}:{port}")
    app = firebase_admin.initialize_app(options={"projectId": d.client_json["project_id"]},
                                        name=f"email-{time.monotonic_ns()}")
    try:
        link = auth.generate_password_reset_link("native@example.com", app=app)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
        assert ok(d, "resetPassword", {"oobCode": query["oobCode"]})["email"] == "native@example.com"
        settings = auth.ActionCodeSettings(url="http://localhost/done", handle_code_in_app=True)
        link = auth.generate_sign_in_with_email_link("fresh@example.com", settings, app=app)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
        fresh = ok(d, "signInWithEmailLink", {"email": "fresh@example.com", "oobCode": query["oobCode"]})
        assert fresh["isNewUser"] is True
        with pytest.raises(auth.EmailNotFoundError):
            auth.generate_email_verification_link("nobody-admin@example.com", app=app)
    finally:
        firebase_admin.delete_app(app)


def test_a_mail_accepted_before_a_kill_is_delivered_after_the_restart(tmp_path):
    """The outbox is in the store: the mail server is down when the mail is accepted, the
    daemon is killed (SIGKILL), and once the server is up the restarted daemon sends it."""
    work = str(tmp_path)
    cert, tls = smtp_server_tls(work)
    port = free_port()
    flags = [*TEST_DAEMON_FLAGS, "--firebase-emulator-listen", "127.0.0.1:0",
             "--smtp-url", f"smtp://127.0.0.1:{port}", "--smtp-ca-file", cert, "--mail-retry-base-ms", "100"]
    first = Daemon(extra=flags)
    sign_up(first, "durable@example.com")
    ok(first, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "durable@example.com"})
    wait_log(first, "mail not delivered: retried later")
    first.proc.kill()
    first.proc.wait(timeout=30)

    inbox = Inbox()
    controller = aiosmtpd_controller.Controller(inbox, hostname="127.0.0.1", port=port, tls_context=tls,
                                                require_starttls=True)
    controller.start()
    second = Daemon(extra=flags, data_dir=first.dir)
    try:
        [mail] = inbox.wait_for("durable@example.com")
        _, query = link_of(mail)
        assert ok(second, "resetPassword", {"oobCode": query["oobCode"]})["email"] == "durable@example.com"
    finally:
        assert second.stop() == 0
        controller.stop()


def test_implicit_tls_with_auth_login_and_a_certificate_that_is_not_trusted(tmp_path):
    """smtps:// (TLS from the first byte) to a server that offers AUTH LOGIN only; the same
    server's certificate without --smtp-ca-file is not trusted: nothing is sent to it."""
    work = str(tmp_path)
    cert, tls = smtp_server_tls(work)
    inbox = Inbox()
    port = free_port()
    controller = aiosmtpd_controller.Controller(
        inbox, hostname="127.0.0.1", port=port, ssl_context=tls, authenticator=authenticator,
        auth_require_tls=False, auth_exclude_mechanism=["PLAIN"])
    controller.start()
    credentials = os.path.join(work, "smtp-credentials")
    with open(os.open(credentials, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(f"{SMTP_USER}:{SMTP_PASSWORD}\n")
    flags = [*TEST_DAEMON_FLAGS, "--smtp-url", f"smtps://127.0.0.1:{port}", "--smtp-credentials-file",
             credentials, "--firebase-emulator-listen", "127.0.0.1:0", "--mail-retry-base-ms", "100"]
    trusting = Daemon(extra=[*flags, "--smtp-ca-file", cert])
    untrusting = Daemon(extra=flags)
    try:
        sign_up(trusting, "implicit@example.com")
        ok(trusting, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "implicit@example.com"})
        [mail] = inbox.wait_for("implicit@example.com")
        assert mail["authenticated"]
        sign_up(untrusting, "untrusted@example.com")
        ok(untrusting, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "untrusted@example.com"})
        log = wait_log(untrusting, "mail not delivered: retried later")
        assert "TLS handshake" in log and "certificate verify failed" in log
        assert inbox.to("untrusted@example.com") == []
    finally:
        assert trusting.stop() == 0
        assert untrusting.stop() == 0
        controller.stop()


class PipeliningRelay:
    """A local relay in plain text (allowed to loopback only) that offers PIPELINING, keeps
    each read as it came, and refuses recipients whose address holds "reject" with 550."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        self.reads = []
        self.delivered = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.session, args=(conn,), daemon=True).start()

    def session(self, conn):
        with conn:
            conn.sendall(b"220 relay ready\r\n")
            buffer, rejected, in_data, rcpt = b"", False, False, None
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                with self.lock:
                    self.reads.append(chunk)
                buffer += chunk
                while True:
                    if in_data:
                        end = buffer.find(b"\r\n.\r\n")
                        if end < 0:
                            break
                        with self.lock:
                            self.delivered.append(rcpt)
                        buffer, in_data = buffer[end + 5:], False
                        conn.sendall(b"250 2.0.0 queued\r\n")
                        continue
                    line, sep, rest = buffer.partition(b"\r\n")
                    if not sep:
                        break
                    buffer = rest
                    verb = line.split(b" ")[0].split(b":")[0].upper()
                    if verb == b"EHLO":
                        conn.sendall(b"250-relay\r\n250-PIPELINING\r\n250 8BITMIME\r\n")
                    elif verb == b"MAIL":
                        conn.sendall(b"250 2.1.0 ok\r\n")
                    elif verb == b"RCPT":
                        rcpt = line.decode()
                        rejected = b"reject" in line
                        conn.sendall(b"550 5.1.1 no such user\r\n" if rejected else b"250 2.1.5 ok\r\n")
                    elif verb == b"DATA":
                        if rejected:
                            conn.sendall(b"554 5.5.1 no valid recipients\r\n")
                        else:
                            in_data = True
                            conn.sendall(b"354 go ahead\r\n")
                    elif verb == b"QUIT":
                        conn.sendall(b"221 bye\r\n")
                        return
                    else:
                        conn.sendall(b"502 5.5.2 not implemented\r\n")


def test_pipelining_and_a_permanent_refusal_to_a_local_relay():
    """MAIL, RCPT and DATA go in one write when the relay offers PIPELINING; a 550 for the
    recipient drops the mail at once (no retry) and counts it as failed."""
    relay = PipeliningRelay()
    d = Daemon(extra=[*TEST_DAEMON_FLAGS, "--smtp-url", f"smtp://127.0.0.1:{relay.port}",
                      "--firebase-emulator-listen", "127.0.0.1:0", "--mail-retry-base-ms", "100"])
    try:
        sign_up(d, "piped@example.com")
        ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "piped@example.com"})
        wait_log(d, "mail sent")
        with relay.lock:
            assert any(b"MAIL FROM:" in r and b"RCPT TO:" in r and b"DATA" in r for r in relay.reads), relay.reads
            assert len(relay.delivered) == 1 and "piped@example.com" in relay.delivered[0]
        sign_up(d, "reject@example.com")
        ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "reject@example.com"})
        log = wait_log(d, "mail refused: dropped")
        assert "550 5.1.1 no such user" in log
        assert metrics(d)['anonauth_mails_total{outcome="failed"}'] == 1
        assert metrics(d)['anonauth_mails_total{outcome="retried"}'] == 0
    finally:
        assert d.stop() == 0
        relay.server.close()


@pytest.mark.parametrize("flags, message", [
    (["--smtp-url", "http://mail.example.com"], "--smtp-url: must start with smtp://"),
    (["--smtp-url", "smtp://user:pw@mail.example.com"], "credentials go in --smtp-credentials-file"),
    (["--smtp-credentials-file", "CREDENTIALS"], "--smtp-credentials-file needs --smtp-url"),
    (["--smtp-url", "smtp://mail.example.com", "--smtp-credentials-file", "CREDENTIALS"], "chmod 600"),
    (["--smtp-from", "no address"], "--smtp-from: expected"),
])
def test_bad_mail_settings_stop_the_start(tmp_path, flags, message):
    """Each bad mail setting is exit 2 with one line naming it, before anything is served."""
    from conftest import ROOT
    credentials = tmp_path / "creds"
    credentials.write_text("user:password\n")
    os.chmod(credentials, 0o644)
    binary = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))
    args = [str(credentials) if f == "CREDENTIALS" else f for f in flags]
    result = subprocess.run([binary, "--dev", "--data-dir", str(tmp_path / "data"), "--listen", "127.0.0.1:0",
                             "--ops-listen", "127.0.0.1:0", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result
    assert message in result.stderr and result.stdout == "", result.stderr


def test_a_projects_own_template_in_the_requests_language(mail_setup, tmp_path):
    """email_templates (set with the CLI) replaces the built-in text for its kind and
    language, with Firebase's placeholders; other languages keep the built-in text."""
    from test_ops_and_cli import cli
    d, inbox = mail_setup
    templates = tmp_path / "templates.json"
    templates.write_text(json.dumps([{
        "request_type": "PASSWORD_RESET", "language": "fr", "subject": "Nouveau mot de passe pour %APP_NAME%",
        "text": "Bonjour %EMAIL%, cliquez : %LINK%", "html": ""}]))
    cli(d, "admin", "update-config", f"email_templates=@{templates}")
    try:
        sign_up(d, "template@example.com")
        ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "template@example.com"},
           headers={"X-Firebase-Locale": "fr-CA"})
        [mail] = inbox.wait_for("template@example.com")
        assert mail["message"]["Subject"] == "Nouveau mot de passe pour demo-project"
        assert not mail["message"].is_multipart()
        text = mail["message"].get_content()
        assert text.startswith("Bonjour template@example.com, cliquez : http") and "oobCode=" in text
        ok(d, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "template@example.com"})
        _, english = inbox.wait_for("template@example.com", count=2)
        assert english["message"]["Subject"] == "Reset your password for demo-project"
    finally:
        (tmp_path / "none.json").write_text("[]")
        cli(d, "admin", "update-config", f"email_templates=@{tmp_path / 'none.json'}")
