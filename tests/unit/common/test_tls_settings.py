"""berth.common.tls: the server contexts of ``[api]enable_ssl_api``/``[ssl]`` and
``[websocket_proxy]ssl_only``/``cert``/``key``, and the messages that stop a process
whose TLS settings cannot work (each names the option and the file)."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from oslo_config import cfg
from support.tls_ca import TestCA

import berth.conf
from berth.common.tls import (
    ServerTLS,
    TLSConfigError,
    api_tls,
    console_base_url,
    console_tls,
)


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


def test_zuns_option_names_and_defaults(tmp_path: Path) -> None:
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    conf(args=[], default_config_files=[])
    assert conf.api.enable_ssl_api is False
    assert (conf.ssl.cert_file, conf.ssl.key_file, conf.ssl.ca_file, conf.ssl.version,
            conf.ssl.ciphers) == (None, None, None, None, None)
    w = conf.websocket_proxy
    assert (w.ssl_only, w.cert, w.key) == (False, "", "")
    assert conf.compute.host_shared_with_nova is False
    path = tmp_path / "berth.conf"
    path.write_text("[api]\nenable_ssl_api = true\n[ssl]\ncert_file = /a.pem\n"
                    "[websocket_proxy]\nssl_only = true\ncert = /b.pem\n"
                    "[compute]\nhost_shared_with_nova = true\n")
    conf(args=["--config-file", str(path)], default_config_files=[])
    assert (conf.api.enable_ssl_api, conf.ssl.cert_file) == (True, "/a.pem")
    assert (conf.websocket_proxy.ssl_only, conf.websocket_proxy.cert) == (True, "/b.pem")
    assert conf.compute.host_shared_with_nova is True
    opt = next(o for g, opts in berth.conf.list_opts() if g == "compute" for o in opts
               if o.dest == "host_shared_with_nova")
    assert not opt.deprecated_for_removal        # berth-status no longer lists it


def test_tls_off_needs_nothing() -> None:
    assert api_tls(False, None, None, None, None, None) is None
    assert console_tls(False, "", "") is None


def test_tls_on_without_a_certificate_names_the_option() -> None:
    with pytest.raises(TLSConfigError, match=r"\[api\]enable_ssl_api = true but "
                                             r"\[ssl\]cert_file is not set"):
        api_tls(True, None, "/k.pem", None, None, None)
    with pytest.raises(TLSConfigError, match=r"\[websocket_proxy\]cert is not set"):
        console_tls(True, "", "")


def test_a_good_certificate_and_key_make_a_server_context(ca: TestCA) -> None:
    files = ca.server("good")
    settings = api_tls(True, str(files.cert), str(files.key), None, None, None)
    assert settings is not None
    ctx = settings.context()
    assert ctx.verify_mode == ssl.CERT_NONE                # no client certificates asked
    # a key in the certificate's own file (key unset), as websockify allows
    both = ca.dir / "both.pem"
    both.write_bytes(files.cert.read_bytes() + files.key.read_bytes())
    console = console_tls(True, str(both), "")
    assert console is not None
    assert isinstance(console.context(), ssl.SSLContext)


def test_unreadable_files_name_the_option_and_the_file(ca: TestCA, tmp_path: Path) -> None:
    files = ca.server("files")
    missing = tmp_path / "missing.pem"
    cases = [(ServerTLS(str(missing), str(files.key)), "[ssl]cert_file"),
             (ServerTLS(str(files.cert), str(missing)), "[ssl]key_file"),
             (ServerTLS(str(files.cert), str(files.key), ca_file=str(missing)), "[ssl]ca_file")]
    for settings, option in cases:
        with pytest.raises(TLSConfigError) as err:
            settings.context()
        assert f"{option} = {missing} cannot be read (No such file or directory)" in str(err.value)


def test_a_key_that_is_not_the_certificates_is_refused(ca: TestCA) -> None:
    one, other = ca.server("one"), ca.server("other")
    with pytest.raises(TLSConfigError) as err:
        ServerTLS(str(one.cert), str(other.key)).context()
    assert f"[ssl]cert_file = {one.cert} and [ssl]key_file = {other.key}" in str(err.value)
    settings = console_tls(True, str(one.cert), "")   # no key anywhere
    assert settings is not None
    with pytest.raises(TLSConfigError, match=r"set \[websocket_proxy\]key to the"):
        settings.context()
    with pytest.raises(TLSConfigError, match=r"\[ssl\]cert_file = .* is not a PEM"):
        ServerTLS(str(one.key)).context()             # a key where the certificate goes


@pytest.mark.parametrize(("version", "low", "high"), [
    (None, None, None), ("SSLv23", None, None),
    ("TLSv1_2", ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
    ("tlsv1_3", ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)])
def test_version_pins_the_tls_version(ca: TestCA, version: str | None,
                                      low: ssl.TLSVersion | None,
                                      high: ssl.TLSVersion | None) -> None:
    files = ca.server("version")
    ctx = ServerTLS(str(files.cert), str(files.key), version=version).context()
    default = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    assert ctx.minimum_version == (low or default.minimum_version)
    assert ctx.maximum_version == (high or default.maximum_version)


@pytest.mark.parametrize("version", ["TLSv1", "TLSv1_1", "SSLv3", "TLSv9"])
def test_insecure_or_unknown_versions_are_refused(ca: TestCA, version: str) -> None:
    files = ca.server("refused")
    with pytest.raises(TLSConfigError, match=rf"\[ssl\]version = {version} .*TLSv1_2"):
        ServerTLS(str(files.cert), str(files.key), version=version).context()


def test_ciphers_and_client_certificates(ca: TestCA) -> None:
    files = ca.server("ciphers")
    with pytest.raises(TLSConfigError, match=r"\[ssl\]ciphers = NO-SUCH-CIPHER"):
        ServerTLS(str(files.cert), str(files.key), ciphers="NO-SUCH-CIPHER").context()
    ctx = ServerTLS(str(files.cert), str(files.key), ca_file=str(ca.cert),
                    ciphers="ECDHE+AESGCM").context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    with pytest.raises(TLSConfigError, match=r"\[ssl\]ca_file = .* holds no PEM CA"):
        ServerTLS(str(files.cert), str(files.key), ca_file=str(files.key)).context()


def test_console_urls_are_wss_when_the_proxy_serves_tls_only() -> None:
    assert console_base_url("ws://10.0.0.31:6784/", True) == "wss://10.0.0.31:6784/"
    assert console_base_url("WS://[::1]:6784/console", True) == "wss://[::1]:6784/console"
    assert console_base_url("wss://console.example.org/", True) == "wss://console.example.org/"
    assert console_base_url("ws://10.0.0.31:6784/", False) == "ws://10.0.0.31:6784/"
