"""Certificates for the cluster's mutual TLS in the interop tests: a cluster CA, node
certificates it signs, and the wrong ones the cluster port must refuse (another CA's,
an expired one). Made with the `cryptography` package (EC P-256, as
docs/replicated-store.md's openssl commands make them)."""

import datetime
import os
import ssl

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write(path, data, mode=0o600):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def _key_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class Authority:
    """A cluster CA whose files live in `directory` (ca.crt; its key stays in memory)."""

    def __init__(self, directory, name="test cluster CA"):
        os.makedirs(directory, mode=0o700, exist_ok=True)
        self.directory = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=1))
                     .not_valid_after(now + datetime.timedelta(days=30))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                     .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                                    critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.ca_file = os.path.join(directory, "ca.crt")
        _write(self.ca_file, self.cert.public_bytes(serialization.Encoding.PEM), 0o644)

    def node(self, name, expired=False):
        """(cert_file, key_file) of a node certificate this CA signs."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        start, end = ((now - datetime.timedelta(days=10), now - datetime.timedelta(days=1)) if expired
                      else (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)))
        cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(self.cert.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(start).not_valid_after(end)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                      ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                .sign(self.key, hashes.SHA256()))
        cert_file = os.path.join(self.directory, f"{name}.crt")
        key_file = os.path.join(self.directory, f"{name}.key")
        _write(cert_file, cert.public_bytes(serialization.Encoding.PEM), 0o644)
        _write(key_file, _key_pem(key))
        return cert_file, key_file


def client_context(ca_file, cert_file=None, key_file=None):
    """A TLS 1.3 client context for the cluster port: trusts `ca_file`, presents the
    certificate if given, checks no host name (the cluster's identity is the CA)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(ca_file)
    if cert_file:
        context.load_cert_chain(cert_file, key_file)
    return context
