"""Fair admission of expensive work against the real daemon (the exposure review, docs/security.md): one address with
ten accounts signing in successfully in a loop, on many connections, used to keep the
password pool full (a success gave its attempt back, so nothing ever stopped it) and took
every other user's sign-in, in every project, from about 94 ms to 4.6 s. Now its work is
paced and capped per address, and the pools serve sources in turn: a bystander from
another address, in the same project and in another, is answered, and the attacker is
told TOO_MANY_ATTEMPTS_TRY_LATER with retry_after_seconds.

Addresses are real: Linux routes all of 127/8 on lo, so the attacker connects from
127.0.0.41 and the bystander from 127.0.0.42.

Run as a script, it measures the bystander's sign-in latency, quiet and under the attack
(no assertion): `ANONAUTHD=.build/debug/anonauthd python Tests/Interop/test_hostile_admission.py
[SECONDS [DAEMON FLAGS...]]`."""

import socket
import statistics
import sys
import threading
import time
from collections import Counter

from conftest import TEST_DAEMON_FLAGS, Daemon, call, call_frame, read_frame, send_frame

ACCOUNT = "/anonauth.v1.AccountService/"
ADMIN = "/anonauth.v1.AdminService/"
ATTACKER = "127.0.0.41"
BYSTANDER = "127.0.0.42"
PASSWORD = "secret-password-1"
TOO_MANY = "TOO_MANY_ATTEMPTS_TRY_LATER"


def connect_from(daemon, source, timeout=30):
    raw = socket.create_connection(daemon.rpc, timeout=timeout, source_address=(source, 0))
    return daemon.context().wrap_socket(raw, server_hostname="localhost")


def admin_call(daemon, pb, method, request, response_type):
    admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
    with daemon.connect() as s:
        st, response = call(s, pb, ADMIN + method, request, response_type, admin)
    assert st.code == 0, st
    return response


def enable_passwords(daemon, pb, project_id):
    update = pb.admin.UpdateProjectConfigRequest(update_mask=["email_password_enabled", "sign_up_quota_per_hour"])
    update.config.project_id = project_id
    update.config.email_password_enabled = True
    update.config.sign_up_quota_per_hour = 1000
    admin_call(daemon, pb, "UpdateProjectConfig", update, pb.admin.ProjectConfig)


def second_project(daemon, pb):
    """A second project with email/password sign-in on; returns its API key."""
    admin_call(daemon, pb, "CreateProject", pb.admin.CreateProjectRequest(project_id="other-project"),
               pb.admin.ProjectConfig)
    enable_passwords(daemon, pb, "other-project")
    return admin_call(daemon, pb, "CreateApiKey", pb.admin.CreateApiKeyRequest(project_id="other-project"),
                      pb.admin.CreateApiKeyResponse).api_key


def sign_up(daemon, pb, api_key, email, source):
    request = pb.account.SignUpRequest()
    request.email_password.email = email
    request.email_password.password = PASSWORD
    with connect_from(daemon, source) as s:
        st, _ = call(s, pb, ACCOUNT + "SignUp", request, pb.account.AuthResponse, {"x-api-key": api_key})
    assert st.code == 0, st


def sign_in(daemon, pb, api_key, email, source):
    """One sign-in on a new connection: (status, seconds)."""
    request = pb.account.SignInWithPasswordRequest(email=email, password=PASSWORD)
    with connect_from(daemon, source) as s:
        started = time.monotonic()
        st, auth = call(s, pb, ACCOUNT + "SignInWithPassword", request, pb.account.AuthResponse,
                        {"x-api-key": api_key})
        elapsed = time.monotonic() - started
    assert st.code != 0 or auth.id_token, st
    return st, elapsed


class Attack:
    """`connections` threads from ATTACKER, each signing in to the ten accounts in a loop,
    `pipelined` calls at a time; counts answers by reason and keeps one refusal."""

    def __init__(self, daemon, pb, api_key, emails, connections=16, pipelined=8):
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answers = Counter()
        self.refusal = None
        self.threads = [threading.Thread(target=self._loop, args=(daemon, pb, api_key, emails, pipelined), daemon=True)
                        for _ in range(connections)]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)

    def _loop(self, daemon, pb, api_key, emails, pipelined):
        n = 0
        while not self.stop.is_set():
            try:
                with connect_from(daemon, ATTACKER) as s:
                    while not self.stop.is_set():
                        for i in range(pipelined):
                            n += 1
                            request = pb.account.SignInWithPasswordRequest(email=emails[n % len(emails)],
                                                                           password=PASSWORD)
                            send_frame(s, call_frame(pb, i + 1, ACCOUNT + "SignInWithPassword",
                                                     request.SerializeToString(), {"x-api-key": api_key}))
                        for _ in range(pipelined):
                            status = read_frame(s, pb).reply.status
                            with self.lock:
                                self.answers[status.reason or "OK"] += 1
                                if status.reason == TOO_MANY and self.refusal is None:
                                    self.refusal = status
            except (OSError, EOFError):
                self.stop.wait(0.05)


def prepare(daemon, pb):
    """Ten accounts for the attacker, one for the bystander in each project."""
    api_key = daemon.client_json["api_key"]
    enable_passwords(daemon, pb, daemon.client_json["project_id"])
    other_key = second_project(daemon, pb)
    emails = [f"attacker-{i}@example.com" for i in range(10)]
    for email in emails:
        sign_up(daemon, pb, api_key, email, ATTACKER)
    sign_up(daemon, pb, api_key, "bystander@example.com", BYSTANDER)
    sign_up(daemon, pb, other_key, "bystander@example.com", BYSTANDER)
    return api_key, other_key, emails


def test_one_address_signing_in_in_a_loop_does_not_starve_a_bystander(pb):
    daemon = Daemon(extra=TEST_DAEMON_FLAGS)
    try:
        api_key, other_key, emails = prepare(daemon, pb)
        with Attack(daemon, pb, api_key, emails) as attack:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and attack.answers[TOO_MANY] == 0:
                time.sleep(0.05)
            time.sleep(1)  # the attacker keeps at it
            for key in (api_key, other_key, api_key):
                st, _ = sign_in(daemon, pb, key, "bystander@example.com", BYSTANDER)
                assert st.code == 0, st
        assert attack.answers["OK"] > 0, attack.answers
        assert attack.refusal is not None, attack.answers
        assert attack.refusal.code == 8, attack.refusal
        assert 1 <= int(attack.refusal.details["retry_after_seconds"]) <= 3600, attack.refusal
        # Throttled by admission, not by the failed-sign-in lockout: every attempt was right.
        assert set(attack.answers) <= {"OK", TOO_MANY}, attack.answers
    finally:
        assert daemon.stop() == 0


def measure(seconds=10.0, flags=()):
    """Bystander sign-in latency, quiet and under the attack, printed (no assertion);
    `flags` go to the daemon."""
    from conftest import load_pb
    pb = load_pb()
    daemon = Daemon(extra=[*TEST_DAEMON_FLAGS, *flags])
    try:
        api_key, _, emails = prepare(daemon, pb)

        def run(label, attack=None):
            times, codes = [], Counter()
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                st, elapsed = sign_in(daemon, pb, api_key, "bystander@example.com", BYSTANDER)
                codes[st.reason or "OK"] += 1
                times.append(elapsed * 1000)
                time.sleep(0.5)
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            extra = f" attacker answers {dict(attack.answers)}" if attack else ""
            print(f"{label}: n={len(times)} p50={statistics.median(times):.0f} ms p99={p99:.0f} ms "
                  f"max={times[-1]:.0f} ms bystander answers {dict(codes)}{extra}")

        run("quiet")
        with Attack(daemon, pb, api_key, emails) as attack:
            time.sleep(1)
            run("under attack", attack)
    finally:
        daemon.stop()


if __name__ == "__main__":
    measure(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0, sys.argv[2:])
