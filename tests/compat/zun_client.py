"""Clients for the two services the compatibility tests compare.

* ``zun_session()``: an httpx client on the real Zun (``BERTH_ZUN_URL``, from
  ``.ci/zun-ci.sh env``) with a token of the CI Keystone's admin (Zun's users are the
  Keystone's); ``None`` when ``BERTH_ZUN_URL`` is not set.
* ``ZUN_SKIP``: the reason the Zun-side tests are skipped without it.

Both sides speak microversion 1.40 unless a scenario says otherwise.
"""

from __future__ import annotations

import os

import httpx

ZUN_URL = os.environ.get("BERTH_ZUN_URL", "")
ZUN_IMAGE = os.environ.get("BERTH_ZUN_IMAGE", "127.0.0.1:5000/berth-test/busybox:latest")
ZUN_NETWORK = os.environ.get("BERTH_ZUN_NETWORK", "zun-ci-net")
KEYSTONE_URL = os.environ.get("BERTH_ZUN_KEYSTONE_URL", "http://127.0.0.1:5001/v3")
NEUTRON_URL = os.environ.get("BERTH_NEUTRON_URL", "http://127.0.0.1:9696")
ZUN_SKIP = ("BERTH_ZUN_URL is not set: start the real Zun with `bash .ci/zun-ci.sh start` "
            "and export the assignments of `bash .ci/zun-ci.sh env`")
VERSION = "container 1.40"


def keystone_token() -> tuple[str, str]:
    """A token of the CI Keystone's admin in project admin, and that project's id."""
    body = {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "admin"}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    r = httpx.post(f"{KEYSTONE_URL}/auth/tokens", json=body, timeout=30)
    r.raise_for_status()
    return r.headers["X-Subject-Token"], r.json()["token"]["project"]["id"]


def zun_session(version: str = VERSION) -> httpx.Client | None:
    if not ZUN_URL:
        return None
    token, _ = keystone_token()
    return httpx.Client(base_url=ZUN_URL, timeout=120, headers={
        "X-Auth-Token": token, "OpenStack-API-Version": version})
