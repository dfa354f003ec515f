"""A real Keystone for tests: users, projects and tokens through its v3 REST API.

``.ci/ci-services.sh start keystone`` runs Keystone 30 from PyPI on 127.0.0.1:5001
(SQLite, fernet tokens, bootstrap admin/admin in project admin). :class:`Keystone`
adds what berth's tests need on top, idempotently (the database outlives a session):
a service user for berth's ``[keystone_authtoken]``, two projects, and users with the
admin, member and reader roles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

URL = "http://127.0.0.1:5001"
AUTH_URL = f"{URL}/v3"
PASSWORD = "berth-test-pw"
DEFAULT_DOMAIN = {"id": "default"}


@dataclass(frozen=True)
class User:
    name: str
    project: str
    role: str


#: Two projects; in the first an admin, a member and a reader, in the second a member.
USERS = (User("berth-alpha-admin", "berth-alpha", "admin"),
         User("berth-alpha-member", "berth-alpha", "member"),
         User("berth-alpha-reader", "berth-alpha", "reader"),
         User("berth-beta-member", "berth-beta", "member"))
SERVICE = User("berth-service", "service", "admin")


def answers() -> bool:
    try:
        return httpx.get(f"{AUTH_URL}/", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


def token_response(user: str, password: str, project: str | None) -> httpx.Response:
    auth: dict[str, Any] = {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": DEFAULT_DOMAIN, "password": password}}}}
    if project:
        auth["scope"] = {"project": {"name": project, "domain": DEFAULT_DOMAIN}}
    return httpx.post(f"{AUTH_URL}/auth/tokens", json={"auth": auth}, timeout=30)


def issue_token(user: str, password: str = PASSWORD, project: str | None = None) -> str:
    response = token_response(user, password, project)
    response.raise_for_status()
    return response.headers["X-Subject-Token"]


class Keystone:
    """The admin's view of the real Keystone (bootstrap admin/admin)."""

    def __init__(self) -> None:
        self.admin_token = issue_token("admin", "admin", "admin")
        self.http = httpx.Client(base_url=AUTH_URL, timeout=30,
                                 headers={"X-Auth-Token": self.admin_token})
        self.project_ids: dict[str, str] = {}
        self.user_ids: dict[str, str] = {}

    def close(self) -> None:
        self.http.close()

    def _find(self, kind: str, name: str) -> str | None:
        response = self.http.get(f"/{kind}", params={"name": name})
        response.raise_for_status()
        found = response.json()[kind]
        return found[0]["id"] if found else None

    def project(self, name: str) -> str:
        pid = self._find("projects", name)
        if pid is None:
            response = self.http.post("/projects", json={"project": {
                "name": name, "domain_id": "default", "description": "berth tests"}})
            response.raise_for_status()
            pid = response.json()["project"]["id"]
        self.project_ids[name] = pid
        return pid

    def user(self, spec: User) -> str:
        uid = self._find("users", spec.name)
        if uid is None:
            response = self.http.post("/users", json={"user": {
                "name": spec.name, "domain_id": "default", "password": PASSWORD}})
            response.raise_for_status()
            uid = response.json()["user"]["id"]
        role = self.role(spec.role)
        project = self.project(spec.project)
        self.http.put(f"/projects/{project}/users/{uid}/roles/{role}").raise_for_status()
        self.user_ids[spec.name] = uid
        return uid

    def role(self, name: str) -> str:
        rid = self._find("roles", name)
        if rid is None:
            response = self.http.post("/roles", json={"role": {"name": name}})
            response.raise_for_status()
            rid = response.json()["role"]["id"]
        return rid

    def set_up(self) -> None:
        for spec in (SERVICE, *USERS):
            self.user(spec)
        # keystonemiddleware accepts a service token only with the role "service"
        # ([keystone_authtoken]service_token_roles), which bootstrap does not make.
        self.http.put(f"/projects/{self.project(SERVICE.project)}/users/"
                      f"{self.user_ids[SERVICE.name]}/roles/{self.role('service')}"
                      ).raise_for_status()

    def revoke(self, token: str) -> None:
        self.http.delete("/auth/tokens", headers={"X-Subject-Token": token}
                         ).raise_for_status()

    def identity_region(self, region: str, url: str) -> None:
        """A region whose identity endpoints are ``url`` (this session's relay in front
        of Keystone): a berth with ``region_name = region`` validates tokens there."""
        if self.http.get(f"/regions/{region}").status_code == 404:
            self.http.post("/regions", json={"region": {"id": region}}).raise_for_status()
        sid = self.http.get("/services", params={"type": "identity"}).json()["services"][0]["id"]
        for endpoint in self.http.get("/endpoints", params={"service_id": sid}
                                      ).json()["endpoints"]:
            if endpoint["region_id"] == region:
                self.http.delete(f"/endpoints/{endpoint['id']}").raise_for_status()
        for interface in ("public", "internal", "admin"):
            self.http.post("/endpoints", json={"endpoint": {
                "service_id": sid, "interface": interface, "region_id": region,
                "url": url}}).raise_for_status()

    def register_berth(self, url: str, region: str = "RegionOne") -> None:
        """berth's catalog entry, as an operator makes it (service type ``container``,
        as Zun's): ``openstack service create`` and ``openstack endpoint create``,
        replacing this test run's earlier endpoints."""
        services = self.http.get("/services", params={"type": "container"}).json()["services"]
        if services:
            sid = services[0]["id"]
        else:
            response = self.http.post("/services", json={"service": {
                "type": "container", "name": "berth", "description": "berth (Zun API)"}})
            response.raise_for_status()
            sid = response.json()["service"]["id"]
        for endpoint in self.http.get("/endpoints", params={"service_id": sid}
                                      ).json()["endpoints"]:
            self.http.delete(f"/endpoints/{endpoint['id']}").raise_for_status()
        for interface in ("public", "internal", "admin"):
            self.http.post("/endpoints", json={"endpoint": {
                "service_id": sid, "interface": interface, "region_id": region,
                "url": f"{url}/v1"}}).raise_for_status()


def authtoken_conf(auth_url: str = AUTH_URL, cache_time: int = 300,
                   region: str = "RegionOne") -> str:
    """berth's ``[keystone_authtoken]`` for the test service user (the options Zun's
    install guide sets)."""
    return (f"[keystone_authtoken]\nwww_authenticate_uri = {auth_url}\n"
            f"region_name = {region}\nservice_type = container\n"
            f"auth_url = {auth_url}\nauth_type = password\n"
            f"username = {SERVICE.name}\npassword = {PASSWORD}\n"
            f"project_name = {SERVICE.project}\nuser_domain_name = Default\n"
            f"project_domain_name = Default\ntoken_cache_time = {cache_time}\n"
            f"http_request_max_retries = 0\nhttp_connect_timeout = 5\n")
