"""What the multi-node page needs from the shared services of the test machines, and
the cleanup of what the page made in them.

The services are checked, never started or stopped here: each one that does not answer
fails the test with the command that starts it (they are shared with other sessions,
which may be using them).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
KEYSTONE = "http://127.0.0.1:5001/v3"
PLACEMENT = "http://127.0.0.1:8778"
PG_ADMIN = "postgresql://berth:berth@127.0.0.1:5432/berth"


def _answers(get: Callable[[], object]) -> bool:
    try:
        get()
    except Exception:  # noqa: BLE001 - any failure means: not there
        return False
    return True


def _rabbit() -> None:
    import kombu

    with kombu.Connection("amqp://berth:berth@127.0.0.1:5672/berth",
                          connect_timeout=5) as conn:
        conn.ensure_connection(max_retries=1)


def _postgres() -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, connect_timeout=5) as conn:
        conn.execute("SELECT 1")


def _http(url: str) -> Callable[[], object]:
    return lambda: httpx.get(url, timeout=5).raise_for_status()


REQUIRED = {
    "rabbitmq": _rabbit,
    "postgres": _postgres,
    "keystone": _http(f"{KEYSTONE}/"),
    "placement": _http(f"{PLACEMENT}/"),
}


def missing() -> list[str]:
    """The command that starts each required service that does not answer."""
    return [f"bash .ci/ci-services.sh start {name}" for name, probe in REQUIRED.items()
            if not _answers(probe)]


def ci_services(*args: str) -> None:
    done = subprocess.run(["bash", str(SCRIPT), *args], check=False, capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"ci-services.sh {' '.join(args)} exited {done.returncode}:\n"
                             f"{done.stdout}\n{done.stderr}")


def drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def delete_vhost(name: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", "delete_vhost", name], check=False,
                   capture_output=True, timeout=120)


def delete_resource_providers(names: list[str]) -> None:
    """The nodes' providers in the shared Placement (their names are the page's
    host names, which are this run's own), with the allocations a failed page left
    on them (Placement refuses to delete a provider that has some)."""
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.28"}
    with httpx.Client(base_url=PLACEMENT, headers=headers, timeout=30) as http:
        for name in names:
            for rp in http.get("/resource_providers", params={"name": name}
                               ).json().get("resource_providers", []):
                held = http.get(f"/resource_providers/{rp['uuid']}/allocations").json()
                for consumer in held.get("allocations", {}):
                    http.delete(f"/allocations/{consumer}")
                http.delete(f"/resource_providers/{rp['uuid']}")


class KeystoneRegion:
    """A region of this run's own in the shared Keystone: the page's endpoints go there
    (nobody else's catalog lookups find them), with identity endpoints so that the
    client finds Keystone in it too; ``delete()`` removes the region's endpoints, a
    ``container`` service the page made (``openstack service create``) once it has no
    endpoint left, and the region. A service left behind would make the next run's
    ``openstack service show container`` ambiguous, and the page would add one more."""

    def __init__(self, name: str) -> None:
        from support import keystone as ks

        self.name = name
        self.http = httpx.Client(base_url=KEYSTONE, timeout=30, headers={
            "X-Auth-Token": ks.issue_token("admin", "admin", "admin")})
        self.http.post("/regions", json={"region": {"id": name}}).raise_for_status()
        self.services_before = self._container_services()
        sid = self.http.get("/services", params={"type": "identity"}
                            ).json()["services"][0]["id"]
        for interface in ("public", "internal", "admin"):
            self.http.post("/endpoints", json={"endpoint": {
                "service_id": sid, "interface": interface, "region_id": name,
                "url": KEYSTONE}}).raise_for_status()

    def _container_services(self) -> set[str]:
        return {s["id"] for s in self.http.get("/services", params={"type": "container"}
                                               ).json()["services"]}

    def delete(self) -> None:
        try:
            for endpoint in self.http.get("/endpoints").json()["endpoints"]:
                if endpoint["region_id"] == self.name:
                    self.http.delete(f"/endpoints/{endpoint['id']}")
            for sid in self._container_services() - self.services_before:
                left = self.http.get("/endpoints", params={"service_id": sid}
                                     ).json()["endpoints"]
                if not left:
                    self.http.delete(f"/services/{sid}")
            self.http.delete(f"/regions/{self.name}")
        finally:
            self.http.close()
