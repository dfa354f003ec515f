"""Server-side TLS: an ``ssl.SSLContext`` from a certificate, its key and the
settings oslo.service's ``[ssl]`` group names, with every problem reported as a
:class:`TLSConfigError` that names the option and the file, so that a process with a
bad setting refuses to start saying what to fix.

Used by the API (``[api]enable_ssl_api`` with ``[ssl]``) and by the console proxy
(``[websocket_proxy]ssl_only`` with ``cert`` and ``key``). The caller says which
options the values came from (:class:`ServerTLS`'s ``*_option`` fields).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

#: ``[ssl]version`` values (lower case) and the (min, max) TLS versions they allow;
#: (None, None): whatever the system's OpenSSL allows. oslo.service maps TLSv1_2 to
#: that version alone, and so does berth.
_VERSIONS: dict[str, tuple[ssl.TLSVersion | None, ssl.TLSVersion | None]] = {
    "sslv23": (None, None),
    "tls": (None, None),
    "tlsv1_2": (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
    "tlsv1_3": (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
}
_REFUSED_VERSIONS = frozenset({"sslv2", "sslv3", "tlsv1", "tlsv1_1"})


class TLSConfigError(ValueError):
    """A TLS setting that cannot work; the message names the option and says what to do."""


@dataclass(frozen=True, slots=True)
class ServerTLS:
    """What a TLS listener serves. ``key_file`` None: the key is in ``cert_file``.
    ``ca_file``: clients must present a certificate signed by it."""

    cert_file: str
    key_file: str | None = None
    ca_file: str | None = None
    version: str | None = None
    ciphers: str | None = None
    cert_option: str = "[ssl]cert_file"
    key_option: str = "[ssl]key_file"
    ca_option: str = "[ssl]ca_file"
    version_option: str = "[ssl]version"
    ciphers_option: str = "[ssl]ciphers"

    def context(self) -> ssl.SSLContext:
        """A server context; TLSConfigError when a file cannot be read or does not
        hold what it should, or a setting is not accepted."""
        _readable(self.cert_file, self.cert_option)
        if self.key_file:
            _readable(self.key_file, self.key_option)
        if self.ca_file:
            _readable(self.ca_file, self.ca_option)
        low, high = self._versions()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        if low is not None:
            ctx.minimum_version = low
        if high is not None:
            ctx.maximum_version = high
        try:
            ctx.load_cert_chain(self.cert_file, self.key_file or None)
        except (ssl.SSLError, ValueError) as err:
            if self.key_file:
                where = (f"{self.cert_option} = {self.cert_file} and {self.key_option} = "
                         f"{self.key_file} are not a PEM certificate and its unencrypted "
                         f"private key")
                fix = "point both at the certificate and its own key"
            else:
                where = (f"{self.cert_option} = {self.cert_file} is not a PEM certificate "
                         f"followed by its unencrypted private key")
                fix = f"set {self.key_option} to the certificate's key file"
            raise TLSConfigError(f"{where} ({_why(err)}): {fix}") from err
        if self.ca_file:
            try:
                ctx.load_verify_locations(cafile=self.ca_file)
            except (ssl.SSLError, ValueError) as err:
                raise TLSConfigError(f"{self.ca_option} = {self.ca_file} holds no PEM CA "
                                     f"certificate ({_why(err)})") from err
            ctx.verify_mode = ssl.CERT_REQUIRED
        if self.ciphers:
            try:
                ctx.set_ciphers(self.ciphers)
            except ssl.SSLError as err:
                raise TLSConfigError(f"{self.ciphers_option} = {self.ciphers}: OpenSSL "
                                     f"knows none of these ciphers") from err
        return ctx

    def _versions(self) -> tuple[ssl.TLSVersion | None, ssl.TLSVersion | None]:
        if not self.version:
            return None, None
        key = self.version.strip().lower()
        if key in _VERSIONS:
            return _VERSIONS[key]
        if key in _REFUSED_VERSIONS:
            raise TLSConfigError(f"{self.version_option} = {self.version} is insecure and "
                                 f"not offered: set TLSv1_2 or TLSv1_3, or leave it unset")
        raise TLSConfigError(f"{self.version_option} = {self.version} is not a TLS version "
                             f"berth knows: set TLSv1_2 or TLSv1_3, or leave it unset")


def _readable(path: str, option: str) -> None:
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as err:
        raise TLSConfigError(f"{option} = {path} cannot be read ({err.strerror or err}); "
                             f"point it at a readable PEM file") from err


def _why(err: Exception) -> str:
    return str(getattr(err, "reason", None) or err)


def api_tls(enable_ssl_api: bool, cert_file: str | None, key_file: str | None,
            ca_file: str | None, version: str | None, ciphers: str | None
            ) -> ServerTLS | None:
    """The API's TLS from ``[api]enable_ssl_api`` and ``[ssl]``; None when TLS is off.
    TLSConfigError when it is on without a certificate."""
    if not enable_ssl_api:
        return None
    if not cert_file:
        raise TLSConfigError("[api]enable_ssl_api = true but [ssl]cert_file is not set: "
                             "set [ssl]cert_file and [ssl]key_file to the API's PEM "
                             "certificate and key, or set enable_ssl_api = false")
    return ServerTLS(cert_file=cert_file, key_file=key_file or None, ca_file=ca_file or None,
                     version=version or None, ciphers=ciphers or None)


def console_tls(ssl_only: bool, cert: str | None, key: str | None) -> ServerTLS | None:
    """The console proxy's TLS from ``[websocket_proxy]``; None when ``ssl_only`` is
    off. TLSConfigError when it is on without a certificate."""
    if not ssl_only:
        return None
    if not cert:
        raise TLSConfigError("[websocket_proxy]ssl_only = true but [websocket_proxy]cert "
                             "is not set: set cert (and key) to the console proxy's PEM "
                             "certificate and key, or set ssl_only = false")
    return ServerTLS(cert_file=cert, key_file=key or None,
                     cert_option="[websocket_proxy]cert", key_option="[websocket_proxy]key")


def console_base_url(base_url: str, ssl_only: bool) -> str:
    """The console URL clients are given: ``base_url``, with its ``ws`` scheme made
    ``wss`` when the proxy serves TLS only (a ws:// URL could not reach it)."""
    if not ssl_only:
        return base_url
    parts = urlsplit(base_url)
    if parts.scheme.lower() != "ws":
        return base_url
    return urlunsplit(("wss", *parts[1:]))
