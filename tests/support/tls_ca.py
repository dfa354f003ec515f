"""A throw-away certificate authority for TLS tests: a self-signed CA and server
certificates it signs (for 127.0.0.1 and localhost by default), written as PEM files."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class ServerFiles:
    cert: Path
    key: Path


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class TestCA:
    """``TestCA(directory)`` writes ``ca.pem``; ``server(name)`` writes a certificate
    and its key signed by it."""

    __test__ = False   # not a test class, whatever pytest thinks of the name

    def __init__(self, directory: Path, name: str = "berth test CA") -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = dt.datetime.now(dt.UTC)
        self._cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                      .public_key(self._key.public_key())
                      .serial_number(x509.random_serial_number())
                      .not_valid_before(now - dt.timedelta(minutes=5))
                      .not_valid_after(now + dt.timedelta(days=2))
                      .add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
                      .add_extension(x509.KeyUsage(
                          digital_signature=True, content_commitment=False,
                          key_encipherment=False, data_encipherment=False,
                          key_agreement=False, key_cert_sign=True, crl_sign=True,
                          encipher_only=False, decipher_only=False), True)
                      .add_extension(x509.SubjectKeyIdentifier.from_public_key(
                          self._key.public_key()), False)
                      .sign(self._key, hashes.SHA256()))
        self.cert = self.dir / "ca.pem"
        self.cert.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    def server(self, name: str = "server", hosts: tuple[str, ...] = ("127.0.0.1", "localhost")
               ) -> ServerFiles:
        key = ec.generate_private_key(ec.SECP256R1())
        sans: list[x509.GeneralName] = []
        for host in hosts:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                sans.append(x509.DNSName(host))
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
                .issuer_name(self._cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName(sans), False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
                .add_extension(x509.ExtendedKeyUsage([x509.ExtendedKeyUsageOID.SERVER_AUTH]),
                               False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                    self._key.public_key()), False)
                .sign(self._key, hashes.SHA256()))
        files = ServerFiles(cert=self.dir / f"{name}.pem", key=self.dir / f"{name}.key")
        files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        files.key.write_bytes(_key_pem(key))
        files.key.chmod(0o600)
        return files


def tls_conf(ca: TestCA, api: bool = True, console: bool = True) -> str:
    """``berth.conf`` lines serving the API (``[api]enable_ssl_api``, ``[ssl]``) and
    the consoles (``[websocket_proxy]ssl_only``) with certificates ``ca`` signs."""
    lines = []
    if api:
        files = ca.server("api")
        lines += ["[api]", "enable_ssl_api = true",
                  "[ssl]", f"cert_file = {files.cert}", f"key_file = {files.key}"]
    if console:
        files = ca.server("wsproxy")
        lines += ["[websocket_proxy]", "ssl_only = true", f"cert = {files.cert}",
                  f"key = {files.key}"]
    return "\n".join(lines) + "\n"
