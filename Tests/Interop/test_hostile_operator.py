"""Operator safety against the real binaries: a client.json planted in the current
directory does not get the operator's admin key; the daemon runs without core dumps;
exports list each provider once; and export then import round-trips every account the
service's own doors made (anonymous, email/password with a display name, OIDC sign-in
and link, custom claims, a disabled account), field by field, into a fresh daemon."""

import json
import os
import pathlib
import resource
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import signal
import time
import urllib.request

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import ROOT, Daemon, call, der_fingerprint, make_certificate
from test_operations import Deployment, peer_fingerprint, wait_for_log

CLI = os.environ.get("ANONAUTH_CLI", str(ROOT / ".build/debug/anonauth"))
ANONAUTHD = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))
ACCOUNT = "/anonauth.v1.AccountService/"
ADMIN = "/anonauth.v1.AdminService/"


class Listener:
    """A TLS server posing as a daemon, run by the test: it records every byte any
    client sends it (the CLI's admin key would arrive in a call's metadata)."""

    def __init__(self, directory):
        self.cert, key = make_certificate(directory, "hostile", cn="127.0.0.1")
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(self.cert, key)
        self.context.set_alpn_protocols(["anonauth/1"])
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.address = "127.0.0.1:%d" % self.server.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while self.running:
            try:
                raw, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            raw.settimeout(10)
            try:
                with self.context.wrap_socket(raw, server_side=True) as conn:
                    while True:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        self.received.extend(chunk)
            except (OSError, ssl.SSLError):
                pass

    def close(self):
        self.running = False
        self.thread.join(timeout=10)
        self.server.close()


def clean_env(**extra):
    """The environment without the operator's ANONAUTH_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANONAUTH_")}
    env.update(extra)
    return env


def plant(cwd, mode=0o600, **client):
    """./anonauth-data/client.json in `cwd`, as someone who can write there would leave it
    (by default 0600 and the user's own, as from an archive they unpacked)."""
    data = os.path.join(cwd, "anonauth-data")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(data, "client.json")
    with open(path, "w") as f:
        json.dump(client, f)
    os.chmod(path, mode)
    return path


def operator_key(directory):
    path = os.path.join(directory, "operator-admin.key")
    with open(path, "w") as f:
        f.write("operator-secret-admin-key-0123456789abcdef\n")
    os.chmod(path, 0o600)
    return path, "operator-secret-admin-key-0123456789abcdef"


@pytest.mark.parametrize("how", ["flag", "env", "rpc-flag-ca-from-file"])
def test_cli_never_sends_its_admin_key_to_a_planted_client_json(tmp_path, how):
    """A client.json in the current directory names the test's listener (and its CA): the
    operator's key from --admin-key-file or ANONAUTH_ADMIN_KEY_FILE never reaches it, and
    the CLI says what to pass instead (exit 2)."""
    listener = Listener(str(tmp_path))
    try:
        cwd = tmp_path / "cloned-repo"
        cwd.mkdir()
        plant(str(cwd), rpc=listener.address, ca_file=listener.cert, api_key="k", project_id="p")
        key_file, key = operator_key(str(tmp_path))
        args, env = ["admin", "usage", "--timeout-ms", "3000"], clean_env()
        if how == "env":
            env["ANONAUTH_ADMIN_KEY_FILE"] = key_file
        else:
            args += ["--admin-key-file", key_file]
        if how == "rpc-flag-ca-from-file":
            args += ["--rpc", listener.address]
        result = subprocess.run([CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
        time.sleep(0.5)  # anything sent would have arrived: the CLI has exited
        assert key.encode() not in bytes(listener.received)
        assert listener.connections == 0
        assert result.returncode == 2, result
        assert "--rpc" in result.stderr and "--data-dir" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    finally:
        listener.close()


@pytest.mark.parametrize("owner", ["mode-644", "another-user"])
def test_cli_sends_no_password_to_a_client_json_it_did_not_write(tmp_path, owner):
    """A client.json found by default that is open to others or not the user's (a cloned
    repository, a shared folder) is not used at all: a sign-up's password never reaches
    the daemon it names."""
    listener = Listener(str(tmp_path))
    try:
        cwd = tmp_path / "shared"
        cwd.mkdir()
        path = plant(str(cwd), mode=0o644 if owner == "mode-644" else 0o600, rpc=listener.address,
                     ca_file=listener.cert, api_key="k", project_id="p")
        if owner == "another-user":
            os.chown(path, os.geteuid() + 1, -1) if os.geteuid() == 0 else pytest.skip("needs root to chown")
        result = subprocess.run([CLI, "signup", "email", "--email", "me@example.com", "--password-stdin", "--timeout-ms",
                                 "3000"], cwd=cwd, env=clean_env(), input="my-real-password\n",
                                capture_output=True, text=True, timeout=60)
        time.sleep(0.5)
        assert b"my-real-password" not in bytes(listener.received)
        assert listener.connections == 0
        assert result.returncode == 2, result
        assert "--rpc" in result.stderr and "--data-dir" in result.stderr, result.stderr
    finally:
        listener.close()


def test_cli_admin_key_still_goes_where_the_operator_says(tmp_path):
    """With the planted file still in the current directory: a key from --admin-key-file
    reaches a daemon named by --rpc and --ca-file; `make run`'s own client.json (found by
    default, with its own admin key) still works with no flags."""
    cwd = tmp_path / "work"
    (cwd / "anonauth-data").mkdir(parents=True)
    daemon = Daemon(data_dir=str(cwd / "anonauth-data"))
    try:
        key_file = str(tmp_path / "admin.key")
        with open(key_file, "w") as f:
            f.write(daemon.client_json["admin_key"] + "\n")
        os.chmod(key_file, 0o600)
        rpc = "%s:%d" % daemon.rpc
        # The dev daemon's own client.json, found by default: its key goes to its daemon.
        plain = subprocess.run([CLI, "admin", "usage"], cwd=cwd, env=clean_env(), capture_output=True,
                               text=True, timeout=60)
        assert plain.returncode == 0, plain.stderr
        named = subprocess.run([CLI, "admin", "usage", "--admin-key-file", key_file, "--rpc", rpc, "--ca-file",
                                daemon.ca_file, "--project", daemon.client_json["project_id"]],
                               cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=60)
        assert named.returncode == 0, named.stderr
        # The same file named by --data-dir is the operator's choice.
        chosen = subprocess.run([CLI, "admin", "usage", "--admin-key-file", key_file, "--data-dir", daemon.dir],
                                env=clean_env(), capture_output=True, text=True, timeout=60)
        assert chosen.returncode == 0, chosen.stderr
        # And a key of the operator's own with only the default file: refused before connecting.
        refused = subprocess.run([CLI, "admin", "usage", "--admin-key-file", key_file], cwd=cwd,
                                 env=clean_env(), capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "--rpc" in refused.stderr, refused
    finally:
        assert daemon.stop() == 0


def daemon_for(user):
    """The daemon binary as `user` can run it: a copy in a folder of its own when `user`
    is another user, since the checkout may lie in a folder only root can enter (a CI
    clone under a 0700 temporary directory)."""
    if user == os.geteuid():
        return ANONAUTHD
    folder = tempfile.mkdtemp(prefix="anonauth-bin-")
    os.chmod(folder, 0o755)
    copy = os.path.join(folder, "anonauthd")
    shutil.copy(ANONAUTHD, copy)
    os.chmod(copy, 0o755)
    return copy


def forget_copy(binary):
    if binary != ANONAUTHD:
        shutil.rmtree(os.path.dirname(binary), ignore_errors=True)


def proc_owner(pid):
    """The owner the kernel gives /proc/PID's private files (environ, mem, fd/): the
    process's user while it is dumpable, root once it is not. (/proc/PID itself keeps
    the user either way.)"""
    return os.stat(f"/proc/{pid}/environ").st_uid


def test_daemon_runs_without_core_dumps(tmp_path):
    """RLIMIT_CORE is 0 whatever limit the daemon was started with, and the process is not
    dumpable: /proc/PID/environ then belongs to root instead of the daemon's user (so the daemon
    runs as nobody when the test is root). The daemon still counts its own descriptors."""
    data = tempfile.mkdtemp(prefix="anonauth-nodump-")
    user = os.geteuid()
    kwargs = {}
    if user == 0:
        user = 65534
        os.chown(data, user, user)
        kwargs = dict(user=user, group=user, extra_groups=[])
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]

    def allow_cores():
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))

    binary = daemon_for(user)
    proc = subprocess.Popen([binary, "--dev", "--data-dir", data, "--listen", "127.0.0.1:0", "--ops-listen",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=allow_cores, **kwargs)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        ready = json.loads(line)
        assert ready["event"] == "ready"
        with open(f"/proc/{proc.pid}/limits") as f:
            core = next(row for row in f if row.startswith("Max core file size"))
        assert core.split()[4:6] == ["0", "0"], core
        with open(f"/proc/{proc.pid}/status") as f:
            uids = next(row for row in f if row.startswith("Uid:")).split()[1:]
        assert int(uids[1]) == user and user != 0
        assert proc_owner(proc.pid) == 0, "the daemon is dumpable"
        host, port = ready["ops"].rsplit(":", 1)
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as r:
            metrics = r.read().decode()
        fds = [row for row in metrics.splitlines() if row.startswith("anonauth_process_open_fds ")
               or row.startswith("process_open_fds ")]
        assert fds and int(float(fds[0].split()[1])) > 0, fds
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
        shutil.rmtree(data, ignore_errors=True)
        forget_copy(binary)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make root's files and run the daemon as another user")
def test_secrets_as_kubernetes_mounts_them_start_and_wider_modes_do_not():
    """The layout of deploy/kubernetes (a Secret with fsGroup, defaultMode 0440) and of
    Scripts/deploy_smoke.py: files root:GROUP 0440, the daemon running as a user of GROUP.
    It starts; the Kubernetes default (0644) is refused with the chmod to run, exit 2."""
    nobody = 65534
    # Not under tmp_path: pytest's base directory is root's alone.
    secrets_dir = pathlib.Path(tempfile.mkdtemp(prefix="anonauth-k8s-secrets-"))
    os.chmod(secrets_dir, 0o755)
    cert, key = make_certificate(str(secrets_dir), "tls")
    master = secrets_dir / "master.key"
    master.write_text("ab" * 32 + "\n")
    for path in (cert, key, str(master)):
        os.chown(path, 0, nobody)
        os.chmod(path, 0o440)

    binary = daemon_for(nobody)

    def start(data):
        os.chown(data, nobody, nobody)
        return subprocess.Popen([binary, "--tls-cert", cert, "--tls-key", key, "--master-key-file", str(master),
                                 "--data-dir", data, "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, user=nobody,
                                group=nobody, extra_groups=[], env=clean_env())

    proc = start(tempfile.mkdtemp(prefix="anonauth-k8s-"))
    try:
        line = proc.stdout.readline()
        assert line and json.loads(line)["event"] == "ready", proc.stderr.read()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
    os.chmod(master, 0o644)
    refused = start(tempfile.mkdtemp(prefix="anonauth-k8s-"))
    out, err = refused.communicate(timeout=60)
    assert refused.returncode == 2 and out == ""
    assert err == (f"anonauthd: --master-key-file {master}: mode 644 lets group or others read this secret; "
                   f"run: chmod 600 {master}\n")
    shutil.rmtree(secrets_dir, ignore_errors=True)
    forget_copy(binary)


def test_a_renewed_tls_key_open_to_others_is_not_loaded(pb, tmp_path):
    """SIGHUP with a new key that group or others may read: the reload is refused (its log
    line says the chmod to run) and the daemon keeps serving the current certificate."""
    dep = Deployment(tmp_path)
    d = dep.start()
    try:
        dep.install(dep.second)
        os.chmod(dep.key, 0o644)
        d.proc.send_signal(signal.SIGHUP)
        failed = wait_for_log(d, "tls reload failed; keeping the current certificate", timeout=30)
        assert f"chmod 600 {dep.key}" in failed["error"], failed
        with d.connect() as s:
            assert peer_fingerprint(s) == der_fingerprint(dep.first[0])
    finally:
        assert d.stop() == 0


# Export then import: every door of the service, into a fresh daemon.

def oidc_provider(daemon, pb, provider_id):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid="k1", alg="RS256", use="sig")
    update = pb.admin.UpdateProjectConfigRequest(update_mask=["idps"])
    update.config.project_id = daemon.client_json["project_id"]
    idp = update.config.idps.add()
    idp.provider_id, idp.enabled, idp.client_id = provider_id, True, "client-1"
    idp.issuer, idp.jwks_json = "https://issuer.test", json.dumps({"keys": [jwk]})
    with daemon.connect() as s:
        st, _ = call(s, pb, ADMIN + "UpdateProjectConfig", update, pb.admin.ProjectConfig, admin(daemon))
        assert st.code == 0, st

    def token(sub, **claims):
        now = int(time.time())
        body = {"iss": "https://issuer.test", "aud": "client-1", "sub": sub, "iat": now, "exp": now + 600}
        body.update(claims)
        return jwt.encode(body, key, algorithm="RS256", headers={"kid": "k1"})

    return token


def admin(daemon):
    return {"authorization": "Bearer " + daemon.client_json["admin_key"]}


def user(daemon, ip):
    return {"x-api-key": daemon.client_json["api_key"], **admin(daemon), "x-end-user-ip": ip}


def must(result):
    status, response = result
    assert status.code == 0, status
    return response


def make_accounts(daemon, pb):
    """One account through each door; returns their uids."""
    provider_id = "oidc.MyIdP"  # capitals: the IdP config takes them
    token = oidc_provider(daemon, pb, provider_id)
    uids = []
    with daemon.connect() as s:
        def sign_up(request, ip):
            return must(call(s, pb, ACCOUNT + "SignUp", request, pb.account.AuthResponse, user(daemon, ip)))

        anonymous = pb.account.SignUpRequest()
        anonymous.anonymous.SetInParent()
        uids.append(sign_up(anonymous, "192.0.2.1").local_id)
        with_password = pb.account.SignUpRequest()
        with_password.email_password.email = "Ann@Example.com"
        with_password.email_password.password = "secret-password-1"
        with_password.email_password.display_name = "Ann Émile"
        uids.append(sign_up(with_password, "192.0.2.2").local_id)
        idp = pb.account.SignInWithIdpRequest()
        idp.credential.provider_id = provider_id
        idp.credential.id_token = token("sub-signed-in", email="Bo@Example.com", email_verified=True,
                                        name="Bo Provider")
        uids.append(must(call(s, pb, ACCOUNT + "SignInWithIdp", idp, pb.account.AuthResponse,
                              user(daemon, "192.0.2.3"))).local_id)
        linked = sign_up(anonymous, "192.0.2.4")
        link = pb.account.LinkWithCredentialRequest(id_token=linked.id_token)
        link.credential.provider_id = provider_id
        link.credential.id_token = token("sub-linked", name="Linked Name")
        uids.append(must(call(s, pb, ACCOUNT + "LinkWithCredential", link, pb.account.AuthResponse,
                              user(daemon, "192.0.2.4"))).local_id)
        project = daemon.client_json["project_id"]
        claimed = sign_up(anonymous, "192.0.2.5").local_id
        must(call(s, pb, ADMIN + "SetCustomClaims", pb.admin.SetCustomClaimsRequest(
            project_id=project, local_id=claimed, custom_claims_json='{"role":"editor","level":3}'), None,
            admin(daemon)))
        uids.append(claimed)
        must(call(s, pb, ADMIN + "DisableAccount", pb.admin.DisableAccountRequest(
            project_id=project, local_id=uids[1], disabled=True), None, admin(daemon)))
    return uids


def export_all(daemon, pb):
    out, token = [], ""
    with daemon.connect() as s:
        while True:
            page = must(call(s, pb, ADMIN + "ExportAccounts", pb.admin.ExportAccountsRequest(
                project_id=daemon.client_json["project_id"], page_size=2, page_token=token),
                pb.admin.ExportAccountsResponse, admin(daemon)))
            out.extend(page.accounts)
            token = page.next_page_token
            if not token:
                return out


def as_import(pb, exported):
    a = exported.account
    return pb.admin.ImportedAccount(
        local_id=a.local_id, email=a.email, email_verified=a.email_verified, display_name=a.display_name,
        photo_url=exported.photo_url, disabled=a.disabled, created_at_ms=a.created_at_ms,
        last_sign_in_at_ms=a.last_sign_in_at_ms, custom_claims_json=a.custom_claims_json,
        anonauth_password_hash=exported.anonauth_password_hash,
        providers=[pb.admin.ImportedProvider(provider_id=p.provider_id, raw_id=p.raw_id, email=p.email,
                                             display_name=p.display_name, photo_url=photo)
                   for p, photo in zip(a.providers, exported.provider_photo_urls)])


def comparable(exported):
    """What an account is, less what a move cannot keep (its sessions and their times)."""
    a = exported.account
    return {
        "local_id": a.local_id, "is_anonymous": a.is_anonymous, "email": a.email,
        "email_verified": a.email_verified, "display_name": a.display_name, "disabled": a.disabled,
        "created_at_ms": a.created_at_ms, "last_sign_in_at_ms": a.last_sign_in_at_ms,
        "custom_claims_json": a.custom_claims_json, "photo_url": exported.photo_url,
        "has_password": bool(exported.anonauth_password_hash or exported.firebase_password_hash),
        "providers": [(p.provider_id, p.raw_id, p.email, p.display_name) for p in a.providers],
        "provider_photo_urls": list(exported.provider_photo_urls),
    }


def test_export_then_import_round_trips_every_door(pb, tmp_path):
    first, second = Daemon(), Daemon()
    try:
        uids = make_accounts(first, pb)
        exported = export_all(first, pb)
        assert sorted(e.account.local_id for e in exported) == sorted(uids)
        for e in exported:  # each provider once
            ids = [p.provider_id for p in e.account.providers]
            assert len(ids) == len(set(ids)), ids
        with second.connect() as s:
            response = must(call(s, pb, ADMIN + "ImportAccounts", pb.admin.ImportAccountsRequest(
                project_id=second.client_json["project_id"], accounts=[as_import(pb, e) for e in exported]),
                pb.admin.ImportAccountsResponse, admin(second)))
        assert (response.imported, list(response.errors)) == (len(exported), []), response
        back = {e.account.local_id: comparable(e) for e in export_all(second, pb)}
        for e in exported:
            assert back[e.account.local_id] == comparable(e), e.account.local_id
        # The password still signs in (the account was disabled: enable it first).
        with second.connect() as s:
            must(call(s, pb, ADMIN + "DisableAccount", pb.admin.DisableAccountRequest(
                project_id=second.client_json["project_id"], local_id=uids[1], disabled=False), None,
                admin(second)))
            signed = must(call(s, pb, ACCOUNT + "SignInWithPassword", pb.account.SignInWithPasswordRequest(
                email="ann@example.com", password="secret-password-1"), pb.account.AuthResponse,
                user(second, "192.0.2.9")))
        assert signed.local_id == uids[1]

        # The Firebase-format export of the CLI lists the password provider once.
        file = tmp_path / "firebase.json"
        done = subprocess.run([CLI, "admin", "export-firebase", str(file), "--data-dir", first.dir, "--json"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        users = {u["localId"]: u for u in json.loads(file.read_text())["users"]}
        listed = [p["providerId"] for p in users[uids[1]]["providerUserInfo"]]
        assert listed == ["password"], listed
        assert [p["providerId"] for p in users[uids[3]]["providerUserInfo"]] == ["oidc.MyIdP"]
    finally:
        assert first.stop() == 0
        assert second.stop() == 0
