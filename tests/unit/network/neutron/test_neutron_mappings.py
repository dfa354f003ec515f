"""Pure mappings of the Neutron driver: exposed ports to security group rules, a port
to Zun's ``addresses`` items."""

from __future__ import annotations

from berth.compute.neutron_networks import exposed_rules
from berth.network.addresses import of_port
from berth.network.neutron.client import Port


def test_exposed_ports_become_ingress_rules_for_both_families() -> None:
    rules = exposed_rules({"80/tcp": {}, "53/udp": {}})
    assert {(r["protocol"], r["port_range_min"], r["ethertype"]) for r in rules} == {
        ("tcp", 80, "IPv4"), ("tcp", 80, "IPv6"), ("udp", 53, "IPv4"), ("udp", 53, "IPv6")}


def test_addresses_carry_the_real_port_id_and_the_ip_version() -> None:
    port = Port(id="port-1", network_id="net", mac="fa:16:3e:00:00:01",
                fixed_ips=(("10.0.0.5", "sub4"), ("fd00::5", "sub6")), status="ACTIVE",
                device_id="c", project_id="p")
    items = of_port(port, {"network": "net", "ifname": "eth0", "fixed_ip": None,
                           "port": "port-1", "preserve_on_delete": True}, "eth0")
    assert [(a["addr"], a["version"], a["port"], a["subnet_id"]) for a in items] == [
        ("10.0.0.5", 4, "port-1", "sub4"), ("fd00::5", 6, "port-1", "sub6")]
    assert all(a["preserve_on_delete"] for a in items)
