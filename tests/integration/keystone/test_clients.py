"""The clients users already have, unchanged, against berth through real Keystone: a
password login, then berth found in the catalog as service type ``container``."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest
from support import keystone as ks
from support.berth_proc import BerthProcess, bin_path

from .conftest import client


@pytest.fixture(scope="module")
def registered(berth_ks: BerthProcess, keystone: ks.Keystone) -> BerthProcess:
    """berth in Keystone's catalog, as docs/multi-node.md registers it."""
    keystone.register_berth(berth_ks.url)
    return berth_ks


def _env(user: str, password: str = ks.PASSWORD) -> dict[str, str]:
    project = next(u.project for u in ks.USERS if u.name == user)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(OS_AUTH_URL=ks.AUTH_URL, OS_USERNAME=user, OS_PASSWORD=password,
               OS_PROJECT_NAME=project, OS_USER_DOMAIN_NAME="Default",
               OS_PROJECT_DOMAIN_NAME="Default", OS_IDENTITY_API_VERSION="3",
               OS_REGION_NAME="RegionOne")
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=False, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def alpha_registry(registered: BerthProcess) -> dict[str, str]:
    token = ks.issue_token("berth-alpha-member", project="berth-alpha")
    name = f"cli-{uuid.uuid4().hex[:6]}"
    with client(registered, token) as http:
        made = http.post("/v1/registries", json={"registry": {
            "name": name, "domain": "127.0.0.1:5000", "username": "u", "password": "p"}})
        assert made.status_code == 201, made.text
        yield made.json()["registry"]
        http.delete(f"/v1/registries/{made.json()['registry']['uuid']}")


def test_zun_cli_logs_in_with_a_password(registered: BerthProcess,
                                         alpha_registry: dict[str, str]) -> None:
    listed = _run([bin_path("zun"), "registry-list"], _env("berth-alpha-member"))
    assert listed.returncode == 0, listed.stderr
    assert alpha_registry["uuid"] in listed.stdout
    other = _run([bin_path("zun"), "registry-list"], _env("berth-beta-member"))
    assert other.returncode == 0, other.stderr
    assert alpha_registry["uuid"] not in other.stdout
    shown = _run([bin_path("zun"), "registry-show", alpha_registry["uuid"]],
                 _env("berth-beta-member"))
    assert shown.returncode != 0 and "could not be found" in shown.stdout + shown.stderr


def test_zun_cli_with_a_wrong_password_is_refused_by_keystone(
        registered: BerthProcess) -> None:
    refused = _run([bin_path("zun"), "list"], _env("berth-alpha-member", "wrong"))
    assert refused.returncode != 0
    assert "not authorized" in refused.stderr.lower()    # Keystone's answer to the login


def test_openstack_appcontainer_logs_in_with_a_password(registered: BerthProcess) -> None:
    admin = _run([bin_path("openstack"), "appcontainer", "host", "list", "-f", "value",
                  "-c", "hostname"], _env("berth-alpha-admin"))
    assert admin.returncode == 0, admin.stderr
    assert registered.host in admin.stdout
    member = _run([bin_path("openstack"), "appcontainer", "host", "list"],
                  _env("berth-alpha-member"))
    assert member.returncode != 0 and "host:get_all" in member.stdout + member.stderr
    listed = _run([bin_path("openstack"), "appcontainer", "list"], _env("berth-alpha-reader"))
    assert listed.returncode == 0, listed.stderr


def test_python_zunclient_on_a_keystone_session(registered: BerthProcess,
                                                alpha_registry: dict[str, str]) -> None:
    from keystoneauth1 import session
    from keystoneauth1.identity import v3
    from zunclient import client as zun_client

    auth = v3.Password(auth_url=ks.AUTH_URL, username="berth-alpha-member",
                       password=ks.PASSWORD, project_name="berth-alpha",
                       user_domain_name="Default", project_domain_name="Default")
    zun = zun_client.Client("1.40", session=session.Session(auth=auth),
                            region_name="RegionOne")
    assert alpha_registry["uuid"] in [r.uuid for r in zun.registries.list()]
    assert zun.availability_zones.list()
