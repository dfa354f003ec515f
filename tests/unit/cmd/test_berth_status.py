"""``berth-status upgrade check`` end to end on SQLite files: its table (as JSON) and
its exit status, oslo.upgradecheck's (0 success, 1 warning, 2 failure)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from oslo_config import cfg
from oslo_upgradecheck import upgradecheck
from support.migrated_sqlite import migrated_url

import berth.conf
from berth.cmd import status
from berth.db import nodes
from berth.db.base import utcnow
from berth.db.engine import Database


def _check(tmp_path: Path, settings: str, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, tuple[int, str]]]:
    """Run the command with a config file holding ``settings``; its exit status and
    each check's (result, details)."""
    conf_file = tmp_path / "berth.conf"
    conf_file.write_text(settings)
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    monkeypatch.setattr(status, "CONF", conf)
    monkeypatch.setattr(upgradecheck, "CONF", None)
    code = status.main(["upgrade", "check", "--json", "--config-file", str(conf_file)])
    out = json.loads(capsys.readouterr().out)
    return code, {c["check"]: (c["result"], c["details"]) for c in out["checks"]}


def _database(url: str) -> str:
    return f"[database]\nconnection = {url}\n"


def test_a_migrated_database_and_the_defaults_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, checks = _check(tmp_path, _database(migrated_url(tmp_path)), monkeypatch, capsys)
    assert {name: result for name, (result, _) in checks.items()} == {
        "Database schema": 0, "Compute agents": 0, "Rows with unstorable strings": 0,
        "RabbitMQ": 0, "Placement": 0,
        "Options berth ignores": 0, "Option values": 0,
        "Unsafe or refused settings": 0}
    assert code == 0


def test_an_unmigrated_database_fails_and_says_to_run_berth_db_upgrade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'never-migrated.sqlite'}"
    code, checks = _check(tmp_path, _database(url), monkeypatch, capsys)
    result, details = checks["Database schema"]
    assert (code, result) == (2, 2)
    assert "berth db upgrade" in details and "no berth schema" in details


def test_a_database_at_another_revision_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = migrated_url(tmp_path)
    db = Database(url)
    with db.write_connection() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0001'")
    db.dispose()
    code, checks = _check(tmp_path, _database(url), monkeypatch, capsys)
    assert code == 2
    assert "revision 0001" in checks["Database schema"][1]
    assert "berth db upgrade" in checks["Database schema"][1]


def test_an_agent_without_a_recent_heartbeat_is_a_warning_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = migrated_url(tmp_path)
    db = Database(url)
    nodes.report_service_up(db, "alive", nodes.COMPUTE_BINARY, "nova")
    nodes.report_service_up(db, "gone", nodes.COMPUTE_BINARY, "nova")
    nodes.update_service(db, "gone", nodes.COMPUTE_BINARY,
                         {"last_seen_up": utcnow() - dt.timedelta(seconds=181)})
    db.dispose()
    code, checks = _check(tmp_path, _database(url) + "[DEFAULT]\nservice_down_time = 180\n",
                          monkeypatch, capsys)
    result, details = checks["Compute agents"]
    assert (code, result) == (1, 1)
    assert "1 of 2" in details and "gone (" in details and "alive" not in details


def test_recent_agents_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    url = migrated_url(tmp_path)
    db = Database(url)
    nodes.report_service_up(db, "node1", nodes.COMPUTE_BINARY, "nova")
    db.dispose()
    code, checks = _check(tmp_path, _database(url), monkeypatch, capsys)
    assert (code, checks["Compute agents"][0]) == (0, 0)
    assert "1 compute agent" in checks["Compute agents"][1]


def test_an_option_berth_ignores_is_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = _database(migrated_url(tmp_path)) + "[scheduler]\ndriver = chance_scheduler\n"
    code, checks = _check(tmp_path, settings, monkeypatch, capsys)
    assert (code, checks["Options berth ignores"][0]) == (1, 1)
    assert "[scheduler]driver" in checks["Options berth ignores"][1]


def test_zuns_tls_and_nova_sharing_options_are_not_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """berth serves TLS and shares Nova's provider now: these are used, not listed as
    ignored; settings that would stop berth (no certificate) or not share (berth's
    own Placement) are reported as such."""
    from support.tls_ca import TestCA

    files = TestCA(tmp_path / "ca").server()
    good = (f"[api]\nenable_ssl_api = true\n[ssl]\ncert_file = {files.cert}\n"
            f"key_file = {files.key}\n[websocket_proxy]\nssl_only = true\n"
            f"cert = {files.cert}\nkey = {files.key}\n")
    code, checks = _check(tmp_path, _database(migrated_url(tmp_path)) + good, monkeypatch,
                          capsys)
    assert (code, checks["Options berth ignores"][0],
            checks["Unsafe or refused settings"][0]) == (0, 0, 0)
    missing = tmp_path / "gone.pem"
    bad = (f"[api]\nenable_ssl_api = true\n[ssl]\ncert_file = {missing}\n"
           f"[websocket_proxy]\nssl_only = true\n[compute]\nhost_shared_with_nova = true\n")
    code, checks = _check(tmp_path, _database(migrated_url(tmp_path)) + bad, monkeypatch,
                          capsys)
    result, details = checks["Unsafe or refused settings"]
    assert (code, result, checks["Options berth ignores"][0]) == (2, 2, 0)
    assert f"[ssl]cert_file = {missing} cannot be read" in details
    assert "[websocket_proxy]cert is not set" in details
    assert "[placement]driver = openstack" in details
    unused = f"[websocket_proxy]\ncert = {files.cert}\n"
    code, checks = _check(tmp_path, _database(migrated_url(tmp_path)) + unused, monkeypatch,
                          capsys)
    result, details = checks["Unsafe or refused settings"]
    assert (code, result) == (1, 1)
    assert "cert is set but ssl_only is false" in details


def test_glance_as_the_default_driver_needs_an_identity_towards_glance(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    db = _database(migrated_url(tmp_path))
    code, checks = _check(tmp_path, db + "[DEFAULT]\ndefault_image_driver = glance\n",
                          monkeypatch, capsys)
    result, details = checks["Unsafe or refused settings"]
    assert (code, result) == (1, 1) and "[glance_client]auth_type" in details
    code, checks = _check(tmp_path, db + "[DEFAULT]\ndefault_image_driver = glance\n"
                          "image_driver_list = docker\n", monkeypatch, capsys)
    assert code == 2 and "not in [DEFAULT]image_driver_list" in \
        checks["Unsafe or refused settings"][1]
    good = ("[DEFAULT]\ndefault_image_driver = glance\n[glance_client]\n"
            "auth_type = password\nauth_url = http://127.0.0.1:5001/v3\n")
    code, checks = _check(tmp_path, db + good, monkeypatch, capsys)
    assert (code, checks["Unsafe or refused settings"][0]) == (0, 0)


def test_a_comment_after_a_value_is_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = (_database(migrated_url(tmp_path))
                + "[DEFAULT]\nhost = node1   # this node\ndefault_availability_zone = az#1\n")
    code, checks = _check(tmp_path, settings, monkeypatch, capsys)
    result, details = checks["Option values"]
    assert (code, result) == (1, 1)
    assert "[DEFAULT]host" in details and "default_availability_zone" not in details


def test_a_value_an_option_refuses_fails_every_check_that_reads_it_but_no_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = (_database(migrated_url(tmp_path))
                + "[DEFAULT]\nimage_pull_policy = always  # the default\n"
                + "[api]\nauth_strategy = none\n")
    code, checks = _check(tmp_path, settings, monkeypatch, capsys)
    result, details = checks["Option values"]
    assert (code, result) == (2, 2)
    assert "[DEFAULT]image_pull_policy: Valid values are [always, ifnotpresent, never]" \
        in details and "[api]auth_strategy" in details
    assert "# the default" not in details          # values are not printed
    assert checks["Unsafe or refused settings"][0] == 2
    assert "Not checked" in checks["Unsafe or refused settings"][1]
    assert checks["Database schema"][0] == 0


@pytest.mark.parametrize(("settings", "code", "phrase"), [
    ("[api]\nhost_ip = 0.0.0.0\n", 1, "without authentication"),
    ("[api]\nauth_strategy = keystone\n", 2, "names no service user"),
    ("[docker]\napi_url = tcp://192.0.2.1:2375\n", 2, "plain TCP"),
], ids=["noauth-exposed", "keystone-without-service-user", "docker-plain-tcp"])
def test_unsafe_or_refused_settings(
        settings: str, code: int, phrase: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    exit_code, checks = _check(tmp_path, _database(migrated_url(tmp_path)) + settings,
                               monkeypatch, capsys)
    result, details = checks["Unsafe or refused settings"]
    assert (exit_code, result) == (code, code)
    assert phrase in details


class _Placement(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the status its server was given."""

    def do_GET(self) -> None:
        status = self.server.status  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"errors": [{"status": status, "code": "x",
                                                 "detail": "answered by the test"}]}).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def placement_answering() -> Iterator[http.server.HTTPServer]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Placement)
    thread = threading.Thread(target=server.serve_forever, name="placement", daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.mark.parametrize(("status", "code"), [(404, 0), (401, 2)],
                         ids=["answers", "refuses-the-token"])
def test_openstack_placement_must_answer_with_berths_credentials(
        status: int, code: int, placement_answering: http.server.HTTPServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    placement_answering.status = status  # type: ignore[attr-defined]
    port = placement_answering.server_address[1]
    settings = (_database(migrated_url(tmp_path)) + "[placement]\ndriver = openstack\n"
                f"endpoint = http://127.0.0.1:{port}\ntoken = admin\n")
    exit_code, checks = _check(tmp_path, settings, monkeypatch, capsys)
    assert (exit_code, checks["Placement"][0]) == (code, code), checks["Placement"]
    if code:
        assert "401" in checks["Placement"][1]


def test_openstack_placement_without_credentials_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = _database(migrated_url(tmp_path)) + "[placement]\ndriver = openstack\n"
    exit_code, checks = _check(tmp_path, settings, monkeypatch, capsys)
    assert (exit_code, checks["Placement"][0]) == (2, 2)
    assert "auth_type" in checks["Placement"][1]


def test_keystone_with_a_service_user_is_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = ("[api]\nauth_strategy = keystone\n[keystone_authtoken]\nauth_type = password\n"
                "auth_url = http://127.0.0.1:5001/v3\nusername = berth\n")
    _, checks = _check(tmp_path, _database(migrated_url(tmp_path)) + settings, monkeypatch,
                       capsys)
    result, details = checks["Unsafe or refused settings"]
    assert result == 0, details
