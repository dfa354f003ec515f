"""What berth asks of Placement (pure functions), and how the OpenStack driver is
configured (no request is sent)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from oslo_config import cfg

from berth.conf import register_opts
from berth.conf.placement import register_openstack_opts
from berth.placement.base import (
    DISK_GB,
    MEMORY_MB,
    VCPU,
    Inventory,
    PlacementError,
    shortfall,
)
from berth.placement.openstack import MICROVERSION, OpenStackPlacement
from berth.placement.requests import (
    NodeReservations,
    container_resources,
    node_inventories,
    node_traits,
)


@pytest.mark.parametrize("cpu, memory, disk, expected", [
    (None, None, None, {VCPU: 1}),
    (0.1, "512", None, {VCPU: 1, MEMORY_MB: 512}),
    (1.0, "512", 0, {VCPU: 1, MEMORY_MB: 512}),
    (1.5, 128, 10, {VCPU: 2, MEMORY_MB: 128, DISK_GB: 10}),
    (4, "not-a-number", None, {VCPU: 4}),
])
def test_container_resources(cpu: float | None, memory: object, disk: int | None,
                             expected: dict[str, int]) -> None:
    assert container_resources(cpu, memory, disk) == expected  # type: ignore[arg-type]


def test_node_inventories_follow_compute_options() -> None:
    inv = node_inventories(8, 16000, 100, NodeReservations(
        reserved_cpus=1, reserved_memory_mb=512, reserved_disk_mb=1500,
        cpu_allocation_ratio=16.0, ram_allocation_ratio=1.5, disk_allocation_ratio=1.0))
    assert inv[VCPU] == Inventory(8, 1, 1, 8, 1, 16.0)
    assert inv[MEMORY_MB] == Inventory(16000, 512, 1, 16000, 1, 1.5)
    assert inv[DISK_GB] == Inventory(100, 2, 1, 100, 1, 1.0)     # 1500 MB rounds up to 2 GB


def test_node_inventories_leave_out_empty_classes_and_clamp_reserved() -> None:
    inv = node_inventories(2, 256, 0, NodeReservations(reserved_memory_mb=512))
    assert set(inv) == {VCPU, MEMORY_MB}
    assert inv[MEMORY_MB].reserved == 256


def test_node_traits() -> None:
    assert node_traits(True) == {"CUSTOM_ZUN_COMPUTE_STATUS_DISABLED"}
    assert node_traits(False) == frozenset()


def test_shortfall_is_placements_rule() -> None:
    inv = Inventory(total=4, reserved=1, allocation_ratio=1.5)     # capacity 4.5
    assert shortfall(VCPU, inv, used=3, amount=1) is None
    assert shortfall(VCPU, inv, used=4, amount=1) is not None
    assert shortfall(VCPU, None, used=0, amount=1) == "the provider has no VCPU inventory"


def _conf(text: str, tmp_path) -> cfg.ConfigOpts:  # type: ignore[no-untyped-def]
    path = tmp_path / "berth.conf"
    path.write_text(text)
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf(["--config-file", str(path)], project="berth", default_config_files=[])
    return conf


def test_placement_options_default_to_the_embedded_driver(tmp_path) -> None:  # type: ignore[no-untyped-def]
    conf = _conf("[placement]\nregion_name = r1\n", tmp_path)
    assert conf.placement.driver == "embedded"
    # keystoneauth1's options come with the openstack driver, and keep the file's values
    register_openstack_opts(conf)
    assert conf.placement.service_type == "placement"
    assert conf.placement.valid_interfaces == ["internal", "public"]
    assert conf.placement.region_name == "r1"
    register_openstack_opts(conf)                                  # idempotent


def test_an_agent_with_the_embedded_driver_does_not_load_keystoneauth() -> None:
    code = ("import sys, berth.cmd.compute, berth.cmd.serve\n"
            "from berth.conf import CONF\n"
            "CONF([], project='berth', default_config_files=[])\n"
            "assert CONF.placement.driver == 'embedded'\n"
            "print(sorted(m for m in sys.modules if m.startswith('keystoneauth1'))[:3])\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_openstack_driver_needs_an_endpoint_and_token_or_an_auth_type(tmp_path) -> None:  # type: ignore[no-untyped-def]
    conf = _conf("[placement]\ndriver = openstack\n", tmp_path)
    with pytest.raises(PlacementError, match="auth_type"):
        OpenStackPlacement.from_conf(conf)


@pytest.mark.parametrize("auth", ["", "auth_type = admin_token\n"])
def test_openstack_driver_with_a_static_token(tmp_path, auth: str) -> None:  # type: ignore[no-untyped-def]
    conf = _conf(f"[placement]\ndriver = openstack\n{auth}endpoint = http://127.0.0.1:1/"
                 f"\ntoken = admin\ntimeout = 7\n", tmp_path)
    driver = OpenStackPlacement.from_conf(conf)
    adapter = driver._adapter
    assert adapter.get_endpoint().rstrip("/") == "http://127.0.0.1:1"
    assert adapter.session.timeout == 7
    assert adapter.default_microversion == MICROVERSION
