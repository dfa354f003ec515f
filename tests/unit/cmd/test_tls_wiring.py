"""berth-api and berth-wsproxy refuse to start on TLS settings that cannot work,
before they touch the database or the broker, saying which option and file; the API
hands out wss:// console URLs when the proxy serves TLS only."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import pytest
from oslo_config import cfg
from support.tls_ca import TestCA

import berth.conf
from berth.cmd import tls


def _conf(tmp_path: Path, text: str) -> tuple[cfg.ConfigOpts, Path]:
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    path = tmp_path / "berth.conf"
    # No database and no broker that answer: the commands must stop before them.
    path.write_text(f"[DEFAULT]\ntransport_url = rabbit://nobody:x@127.0.0.1:9/\n"
                    f"state_path = {tmp_path / 'state'}\n[database]\n"
                    f"connection = sqlite:///{tmp_path / 'none' / 'berth.sqlite'}\n{text}")
    return conf, path


@pytest.mark.parametrize(("module_name", "text", "says"), [
    ("berth.cmd.api", "[api]\nenable_ssl_api = true\n[ssl]\ncert_file = {missing}\n",
     "berth-api cannot start: [ssl]cert_file = {missing} cannot be read"),
    ("berth.cmd.api", "[api]\nenable_ssl_api = true\n",
     "berth-api cannot start: [api]enable_ssl_api = true but [ssl]cert_file is not set"),
    ("berth.cmd.wsproxy", "[websocket_proxy]\nssl_only = true\ncert = {missing}\n",
     "berth-wsproxy cannot start: [websocket_proxy]cert = {missing} cannot be read"),
], ids=["api-unreadable", "api-no-cert", "wsproxy-unreadable"])
def test_a_bad_tls_setting_stops_the_command(module_name: str, text: str, says: str,
                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    module = importlib.import_module(module_name)
    missing = tmp_path / "nowhere.pem"
    conf, path = _conf(tmp_path, text.format(missing=missing))
    monkeypatch.setattr(module, "CONF", conf)
    monkeypatch.setattr(module.log, "setup", lambda **kwargs: None)
    with caplog.at_level(logging.ERROR):
        assert module.main(["--config-file", str(path)]) == 2
    assert says.format(missing=missing) in caplog.text


def test_console_urls_follow_ssl_only(tmp_path: Path) -> None:
    files = TestCA(tmp_path / "ca").server()
    conf, path = _conf(tmp_path, "[websocket_proxy]\nbase_url = ws://10.0.0.31:6784/\n")
    conf(args=["--config-file", str(path)], default_config_files=[])
    assert tls.console_base_url(conf) == "ws://10.0.0.31:6784/"
    assert tls.console_context(conf) is None and tls.unused_console_cert(conf) is None
    path.write_text(path.read_text() + f"ssl_only = true\ncert = {files.cert}\n"
                                       f"key = {files.key}\n")
    conf(args=["--config-file", str(path)], default_config_files=[])
    assert tls.console_base_url(conf) == "wss://10.0.0.31:6784/"
    assert tls.console_context(conf) is not None
    path.write_text(path.read_text().replace("ssl_only = true", "ssl_only = false"))
    conf(args=["--config-file", str(path)], default_config_files=[])
    assert "cert is set but ssl_only is false" in (tls.unused_console_cert(conf) or "")


def test_a_proxy_starting_with_an_unused_certificate_says_so(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    files = TestCA(tmp_path / "ca").server()
    conf, path = _conf(tmp_path, f"[websocket_proxy]\ncert = {files.cert}\n")
    conf(args=["--config-file", str(path)], default_config_files=[])
    with caplog.at_level(logging.WARNING, logger="berth.cmd.tls"):
        assert tls.console_server_context(conf) is None
    assert "cert is set but ssl_only is false" in caplog.text
    caplog.clear()
    path.write_text(path.read_text() + f"ssl_only = true\nkey = {files.key}\n")
    conf(args=["--config-file", str(path)], default_config_files=[])
    with caplog.at_level(logging.WARNING, logger="berth.cmd.tls"):
        assert tls.console_server_context(conf) is not None
    assert caplog.text == ""
