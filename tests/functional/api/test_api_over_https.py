"""The API over HTTPS (``[api]enable_ssl_api`` with ``[ssl]cert_file``/``key_file``)
on a real ``berth serve``, with a certificate authority made by the test: the
clients users run trust it through their own CA option, a plain HTTP request to the
port is refused, and a certificate that cannot be read stops berth before it starts."""

from __future__ import annotations

import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.berth_proc import BerthProcess, bin_path
from support.tls_ca import TestCA, tls_conf


@pytest.fixture
def ca(tmp_path: Path) -> TestCA:
    return TestCA(tmp_path / "ca")


@pytest.fixture(scope="module")
def https_berth(docker_url: str, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[BerthProcess]:
    """One berth over HTTPS for the tests that only talk to it (its start is most of
    their time); it makes no container."""
    module_ca = TestCA(tmp_path_factory.mktemp("https") / "ca")
    berth = BerthProcess(tls_conf(module_ca, console=False), ca_file=str(module_ca.cert))
    berth.start()
    yield berth
    berth.stop()


def test_clients_reach_the_api_over_https_with_the_ca(https_berth: BerthProcess) -> None:
    berth = https_berth
    assert berth.url.startswith("https://")
    # python-zunclient, given the CA (cacert=, as OS_CACERT gives it)
    zun = berth.client()
    assert zun.containers.list() == []
    with berth.http() as http:                  # the links berth writes say https
        assert http.get("/").json()["versions"][0]["links"][0]["href"] == f"{berth.url}/v1/"
    # the zun and openstack commands, with OS_CACERT and --os-cacert
    out = subprocess.run([bin_path("zun"), "list"], env=berth.zun_cli_env(),
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    env = berth.openstack_env()
    cacert = env.pop("OS_CACERT")
    out = subprocess.run([bin_path("openstack"), "--os-cacert", cacert, "appcontainer",
                          "list", "-f", "value"], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    # without the CA the certificate is not trusted: TLS is really in use
    out = subprocess.run([bin_path("openstack"), "appcontainer", "list"], env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode != 0
    assert "CERTIFICATE_VERIFY_FAILED" in out.stdout + out.stderr
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{berth.url}/healthcheck", timeout=10)


def test_plain_http_is_refused_on_the_https_port(https_berth: BerthProcess) -> None:
    berth = https_berth
    plain = berth.url.replace("https://", "http://")
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{plain}/healthcheck", timeout=10)
    with berth.http() as http:        # the server is still up and serving HTTPS
        assert http.get("/healthcheck").status_code == 200


def test_the_api_negotiates_only_the_configured_tls_version(berth_factory, ca: TestCA
                                                            ) -> None:
    berth = berth_factory(tls_conf(ca, console=False) + "[ssl]\nversion = TLSv1_3\n",
                          ca_file=str(ca.cert)).start()
    tls12 = ssl.create_default_context(cafile=str(ca.cert))
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{berth.url}/healthcheck", verify=tls12, timeout=10)
    assert httpx.get(f"{berth.url}/healthcheck", verify=berth.verify,
                     timeout=10).status_code == 200


def _serve_exits(conf_text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``berth serve`` with this configuration, which must exit on its own."""
    conf = tmp_path / "bad.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n{conf_text}")
    return subprocess.run([sys.executable, "-m", "berth.cmd.main", "--config-file", str(conf),
                           "serve"], capture_output=True, text=True, timeout=60, check=False)


def test_a_certificate_that_cannot_be_read_stops_berth_serve(tmp_path: Path, ca: TestCA
                                                             ) -> None:
    missing = tmp_path / "nowhere" / "api.pem"
    out = _serve_exits(f"[api]\nenable_ssl_api = true\n[ssl]\ncert_file = {missing}\n"
                       f"key_file = {missing}\n", tmp_path)
    assert out.returncode == 2
    assert f"[ssl]cert_file = {missing} cannot be read" in out.stderr + out.stdout
    out = _serve_exits("[api]\nenable_ssl_api = true\n", tmp_path)
    assert out.returncode == 2
    assert "[ssl]cert_file is not set" in out.stderr + out.stdout
    files = ca.server()
    out = _serve_exits(f"[websocket_proxy]\nssl_only = true\ncert = {files.cert}\n"
                       f"key = {ca.cert}\n", tmp_path)       # a certificate, not its key
    assert out.returncode == 2
    assert f"[websocket_proxy]key = {ca.cert}" in out.stderr + out.stdout

