"""Optional mutual TLS for service callers: a client certificate from the configured CAs
makes a caller trusted (x-end-user-ip believed) and can be required for AdminService."""

import datetime
import os
import ssl
import tempfile

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Daemon, call_frame, read_frame, send_frame
from stub_server import write_certificate, write_private_key


def make_ca(directory, name):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    path = os.path.join(directory, name + ".pem")
    write_certificate(path, cert)
    return key, cert, path


def make_client(directory, ca_key, ca_cert, name):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path = os.path.join(directory, name + ".crt")
    key_path = os.path.join(directory, name + ".key")
    write_certificate(cert_path, cert)
    write_private_key(key_path, key)
    return cert_path, key_path


@pytest.fixture
def mtls():
    directory = tempfile.mkdtemp(prefix="anonauth-mtls-")
    ca_key, ca_cert, ca_path = make_ca(directory, "services-ca")
    other_key, other_cert, _ = make_ca(directory, "other-ca")
    good = make_client(directory, ca_key, ca_cert, "billing-service")
    stranger = make_client(directory, other_key, other_cert, "stranger")
    daemon = Daemon(extra=["--client-ca-file", ca_path, "--admin-requires-client-cert"])
    yield daemon, good, stranger
    assert daemon.stop() == 0


def connect(daemon, client=None):
    ctx = daemon.context()
    if client:
        ctx.load_cert_chain(*client)
    return daemon.connect(ctx=ctx)


def call(sock, pb, method, request, metadata, call_id=1):
    send_frame(sock, call_frame(pb, call_id, method, request.SerializeToString(), metadata))
    return read_frame(sock, pb).reply


def test_admin_needs_the_client_certificate_besides_the_admin_key(mtls, pb):
    daemon, good, _ = mtls
    admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
    request = pb.admin.GetUsageRequest(project_id="demo-project")
    with connect(daemon) as plain:
        reply = call(plain, pb, "/anonauth.v1.AdminService/GetUsage", request, admin)
        assert (reply.status.code, reply.status.reason) == (16, "CLIENT_CERTIFICATE_REQUIRED")
        # Without a certificate the connection still serves everyone else.
        check = call(plain, pb, "/anonauth.v1.HealthService/Check", pb.health.CheckRequest(), {}, 2)
        assert check.status.code == 0
    with connect(daemon, good) as service:
        assert call(service, pb, "/anonauth.v1.AdminService/GetUsage", request, admin).status.code == 0
        wrong_key = call(service, pb, "/anonauth.v1.AdminService/GetUsage", request,
                         {"authorization": "Bearer aak_wrong"}, 2)
        assert wrong_key.status.reason == "ADMIN_KEY_INVALID"


def test_a_certificate_from_another_ca_fails_the_handshake(mtls):
    daemon, _, stranger = mtls
    with pytest.raises(ssl.SSLError) as info:
        with connect(daemon, stranger) as s:
            s.sendall(b"\0\0\0\0")  # TLS 1.3: the client learns of the refusal on first use
            s.recv(1)
    assert "UNKNOWN CA" in str(info.value).upper(), info.value


def test_a_certified_service_caller_is_trusted_with_x_end_user_ip(mtls, pb):
    daemon, good, _ = mtls
    admin = {"authorization": "Bearer " + daemon.client_json["admin_key"]}
    update = pb.admin.UpdateProjectConfigRequest(update_mask=["sign_up_quota_per_hour"])
    update.config.project_id = "demo-project"
    update.config.sign_up_quota_per_hour = 1
    with connect(daemon, good) as service:
        assert call(service, pb, "/anonauth.v1.AdminService/UpdateProjectConfig", update, admin).status.code == 0
    sign_up = pb.account.SignUpRequest()
    sign_up.anonymous.SetInParent()
    key = {"x-api-key": daemon.client_json["api_key"]}
    with connect(daemon, good) as service:
        # One sign-up per hour per IP: two different end users both get in ...
        for i, ip in enumerate(["198.51.100.1", "198.51.100.2"]):
            reply = call(service, pb, "/anonauth.v1.AccountService/SignUp", sign_up,
                         {**key, "x-end-user-ip": ip}, 10 + i)
            assert reply.status.code == 0, reply.status
        again = call(service, pb, "/anonauth.v1.AccountService/SignUp", sign_up,
                     {**key, "x-end-user-ip": "198.51.100.1"}, 20)
        assert again.status.reason == "TOO_MANY_ATTEMPTS_TRY_LATER"
    with connect(daemon) as plain:
        # ... while without a certificate the header is ignored and the peer counts.
        first = call(plain, pb, "/anonauth.v1.AccountService/SignUp", sign_up, {**key, "x-end-user-ip": "203.0.113.9"})
        second = call(plain, pb, "/anonauth.v1.AccountService/SignUp", sign_up,
                      {**key, "x-end-user-ip": "203.0.113.10"}, 2)
        assert first.status.code == 0
        assert second.status.reason == "TOO_MANY_ATTEMPTS_TRY_LATER"


def test_admin_requires_client_cert_needs_a_client_ca():
    import subprocess
    from conftest import ROOT
    binary = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))
    result = subprocess.run([binary, "--dev", "--admin-requires-client-cert", "--data-dir", tempfile.mkdtemp()],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["anonauthd: --admin-requires-client-cert needs --client-ca-file"]
