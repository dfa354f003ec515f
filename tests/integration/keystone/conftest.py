"""berth with ``[api]auth_strategy = keystone`` against a real Keystone (PyPI, loopback).

* ``keystone`` (session): Keystone answers on 127.0.0.1:5001; when it does not,
  ``.ci/ci-services.sh start keystone`` installs it into a venv under /var/tmp and starts
  it (stopped again at the end). A Keystone that cannot start FAILS the tests with the
  script's output, never skips them. Then berth's service user, two projects and users
  with the admin, member and reader roles are made (``support.keystone``).
* ``berth_ks`` (session): one ``berth serve`` (real Docker) validating tokens with that
  Keystone through a cuttable relay (``support.tcp_relay``), with a policy file of its
  own (``policy_file``) that tests may rewrite and must restore.
* ``tokens`` (session): a project-scoped token per test user.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import keystone as ks
from support.berth_proc import TEST_IMAGE, BerthProcess, remove_local_networks, wait_for
from support.tcp_relay import TcpRelay

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
IMAGE = TEST_IMAGE
VERSION = "container 1.40"
RELAY_REGION = "berth-relay"


@pytest.fixture(scope="session")
def keystone() -> Iterator[ks.Keystone]:
    started = False
    if not ks.answers():
        t0 = time.monotonic()
        proc = subprocess.run(["bash", str(SCRIPT), "start", "keystone"], check=False,
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not ks.answers():
            pytest.fail(f"could not start Keystone with {SCRIPT} (exit {proc.returncode}):\n"
                        f"{proc.stdout}\n{proc.stderr}")
        started = True
        print(f"Keystone started in {time.monotonic() - t0:.1f} s")
    admin = ks.Keystone()
    admin.set_up()
    yield admin
    admin.close()
    if started:
        subprocess.run(["bash", str(SCRIPT), "stop", "keystone"], check=False,
                       capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def keystone_relay(keystone: ks.Keystone) -> Iterator[TcpRelay]:
    relay = TcpRelay(5001).start()
    yield relay
    relay.stop()


@pytest.fixture(scope="session")
def berth_ks(keystone: ks.Keystone, keystone_relay: TcpRelay) -> Iterator[BerthProcess]:
    auth_url = f"http://127.0.0.1:{keystone_relay.port}/v3"
    # Tokens are validated at the identity endpoint of the catalog, so the relay is
    # made the identity endpoint of a region of berth's own.
    keystone.identity_region(RELAY_REGION, auth_url)
    proc = BerthProcess(extra_conf="[api]\nauth_strategy = keystone\n"
                        + ks.authtoken_conf(auth_url, region=RELAY_REGION))
    policy = proc.dir / "policy.yaml"
    policy.write_text("{}\n")
    with open(proc.conf, "a") as conf:   # a second [api] section adds to the first
        conf.write(f"[oslo_policy]\npolicy_file = {policy}\n")
    proc.start(timeout=60)
    yield proc
    proc.stop()
    remove_local_networks(proc)


@pytest.fixture
def policy_file(berth_ks: BerthProcess) -> Iterator[Path]:
    """berth's policy file; put back to no overrides after the test."""
    path = berth_ks.dir / "policy.yaml"
    yield path
    path.write_text("{}\n")
    time.sleep(1.2)   # berth looks at the file at most once a second


@pytest.fixture(scope="session")
def tokens(keystone: ks.Keystone) -> dict[str, str]:
    """user name -> a token scoped to the user's project (one per session: Keystone
    takes about a second to issue one; tests that revoke or need a fresh token get
    their own)."""
    return {u.name: ks.issue_token(u.name, project=u.project) for u in ks.USERS}


def client(berth: BerthProcess, token: str | None) -> httpx.Client:
    headers = {"OpenStack-API-Version": VERSION}
    if token is not None:
        headers["X-Auth-Token"] = token
    return httpx.Client(base_url=berth.url, timeout=60, headers=headers)


def create_container(http: httpx.Client, **extra: object) -> dict:  # type: ignore[type-arg]
    """A running busybox container of the token's project (waits until Running)."""
    body = {"image": IMAGE, "command": ["sleep", "3600"], **extra}
    response = http.post("/v1/containers?run=true", json=body)
    assert response.status_code == 202, response.text
    uuid = response.json()["uuid"]

    def running() -> bool:
        status = http.get(f"/v1/containers/{uuid}").json()["status"]
        assert status != "Error", http.get(f"/v1/containers/{uuid}").json()
        return status == "Running"

    wait_for(running, 60, what=f"container {uuid} to run")
    return http.get(f"/v1/containers/{uuid}").json()  # type: ignore[no-any-return]


def delete_container(http: httpx.Client, uuid: str) -> None:
    response = http.delete(f"/v1/containers/{uuid}", params={"stop": "true"})
    assert response.status_code in (204, 404), response.text

    def gone() -> bool:
        return http.get(f"/v1/containers/{uuid}").status_code == 404

    wait_for(gone, 60, what=f"container {uuid} to be deleted")
