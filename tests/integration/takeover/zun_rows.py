"""A small Zun deployment's rows, as Zun 18 writes them (JSON columns as text, booleans
as tinyint, a capsule as a row of container_type 1 with its members pointing at it)."""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib
from dataclasses import dataclass, field

from support.zun_database import insert, zun_encrypt

HOST = "takeover-node-1"
PROJECT = "takeover-project"
USER = "takeover-user"
NET = "5d0b5b3c-0c2e-4b39-9a44-4e1d1a2f0001"
PORT = "7c1d0a7e-3b1f-4a7a-9f0a-5b2c3d4e0001"
RP_UUID = "0c8f2c59-8a4f-4bb4-9d3c-1f2e3d4c5b01"
T0 = dt.datetime(2026, 11, 30, 8, 0, 0)

#: What berth's tables hold after ``fill`` is imported (embedded Placement): every row,
#: and an allocation of VCPU and MEMORY_MB for each of the 4 containers and capsules
#: placed on the node (the one in Error has no host; members count in their capsule).
IMPORTED = {"registry": 1, "container": 7, "exec_instance": 1, "volume": 2,
            "volume_mapping": 2, "image": 1, "quotas": 2, "quota_classes": 1,
            "compute_node": 1, "zun_service": 1, "container_actions": 1,
            "container_actions_events": 1, "network": 1, "resource_provider": 1,
            "allocation": 8}


@dataclass
class Deployment:
    uuids: dict[str, str] = field(default_factory=dict)

    def u(self, key: str) -> str:
        return self.uuids.setdefault(key, str(uuidlib.uuid4()))


def _container(db: str, d: Deployment, key: str, id_: int, status: str, **extra: object) -> None:
    values: dict[str, object] = dict(  # noqa: C408 - Zun's columns as keywords
        id=id_, uuid=d.u(key), name=f"takeover-{key}", project_id=PROJECT, user_id=USER,
        image="127.0.0.1:5000/berth-test/busybox:latest", image_driver="docker",
        image_pull_policy="ifnotpresent", command=["sleep", "3600"], entrypoint=[],
        cpu=0.5, cpu_policy="shared", cpuset={"cpuset_cpus": None, "cpuset_mems": None},
        memory="128", disk=0, status=status, status_reason=None, task_state=None,
        environment={"A": "1"}, workdir=None, ports=[], hostname=None, labels={"app": key},
        addresses={}, security_groups=["default"], host=HOST,
        restart_policy={"Name": "no", "MaximumRetryCount": "0"}, interactive=0, tty=0,
        auto_remove=0, auto_heal=0, runtime="runc", privileged=0, healthcheck={},
        exposed_ports={}, container_type=0, created_at=T0, updated_at=T0,
        container_id="d" * 64 if status != "Error" else None)
    values.update(extra)
    insert(db, "container", **values)


def fill(db: str, *, bad_registry: bool = False) -> Deployment:
    """Rows of every table group; ``bad_registry`` adds a registry whose password was
    encrypted with another key (a row the import cannot carry with the default key)."""
    d = Deployment()
    insert(db, "registry", id=1, uuid=d.u("registry"), name="local", domain="127.0.0.1:5000",
           username="ci", password=zun_encrypt("s3cret"), project_id=PROJECT, user_id=USER)
    if bad_registry:
        insert(db, "registry", id=2, uuid=d.u("registry-other-key"), name="other",
               domain="r.example", username="u",
               password=zun_encrypt("x", "another key of thirty-two chars!"))
    vif = {"versioned_object.name": "VIFState", "versioned_object.data": {}}
    _container(db, d, "running", 1, "Running", started_at=T0, registry_id=1,
               addresses={NET: [{"addr": "10.123.0.5", "version": 4, "port": PORT,
                                 "subnet_id": "s1", "preserve_on_delete": False}]},
               cni_metadata={"vif": vif, "pid": 4242}, annotations={"k": "v"})
    _container(db, d, "stopped", 2, "Stopped", status_reason="exited 0")
    _container(db, d, "error", 3, "Error", status_reason="failed to configure network",
               host=None)
    _container(db, d, "busy", 4, "Running", task_state="container_stopping")
    _container(db, d, "capsule", 5, "Running", container_type=1, cpu=1.0, memory="256")
    _container(db, d, "member", 6, "Running", container_type=2, capsule_id=5)
    _container(db, d, "init", 7, "Stopped", container_type=3, capsule_id=5)
    insert(db, "exec_instance", id=1, container_id=1, exec_id="e" * 64, token="tok",
           url="ws://x")
    insert(db, "volume", id=1, uuid=d.u("cinder-volume"), volume_provider="cinder",
           cinder_volume_id=d.u("cinder-id"), connection_info='{"driver_volume_type": "nfs"}',
           host=HOST, auto_remove=0, project_id=PROJECT, user_id=USER)
    insert(db, "volume", id=2, uuid=d.u("file-volume"), volume_provider="local",
           contents="aGVsbG8=", host=HOST, auto_remove=1, project_id=PROJECT)
    insert(db, "volume_mapping", id=1, uuid=d.u("mapping-1"), volume_id=1,
           container_uuid=d.u("running"), container_path="/data", project_id=PROJECT)
    insert(db, "volume_mapping", id=2, uuid=d.u("mapping-2"), volume_id=2,
           container_uuid=d.u("running"), container_path="/etc/hello", project_id=PROJECT)
    insert(db, "image", id=1, uuid=d.u("image"), repo="127.0.0.1:5000/berth-test/busybox",
           tag="latest", image_id="sha256:" + "a" * 64, size="4300000", host=HOST,
           project_id=PROJECT)
    insert(db, "quotas", id=1, project_id=PROJECT, resource="containers", hard_limit=10)
    insert(db, "quotas", id=2, project_id=PROJECT, resource="memory", hard_limit=None)
    insert(db, "quota_classes", id=1, class_name="default", resource="containers",
           hard_limit=40)
    insert(db, "quota_usages", id=1, project_id=PROJECT, resource="containers", in_use=4,
           reserved=0)
    insert(db, "compute_node", uuid=d.u("node"), rp_uuid=RP_UUID, hostname=HOST,
           mem_total=8000, mem_free=4000, mem_available=4000, mem_used=4000,
           total_containers=7, running_containers=4, paused_containers=0,
           stopped_containers=2, cpus=2, cpu_used=1.5, disk_total=50, disk_used=1,
           disk_quota_supported=0, runtimes=["runc"], enable_cpu_pinning=0, labels={},
           numa_topology={"nodes": []})
    insert(db, "zun_service", id=1, host=HOST, binary="zun-compute", disabled=0,
           forced_down=0, report_count=12, last_seen_up=T0, availability_zone="nova")
    insert(db, "container_actions", id=1, action="create", container_uuid=d.u("running"),
           request_id="req-1", user_id=USER, project_id=PROJECT, start_time=T0,
           finish_time=T0)
    insert(db, "container_actions_events", id=1, event="compute__do_container_create",
           action_id=1, start_time=T0, finish_time=T0, result="Success")
    insert(db, "network", id=1, uuid=d.u("network"), name="zun-net", neutron_net_id=NET,
           host=HOST, network_id="f" * 64, project_id=PROJECT, user_id=USER)
    return d
