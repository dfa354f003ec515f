"""``berth db import-zun`` and what Zun's kuryr driver left: its ``network`` rows (one
per Neutron network and host, the node's Docker network) and containers it plugged
(addresses, no CNI VIF). With berth's ``[network]driver = kuryr`` they are mapped to
the records berth's kuryr driver keeps; with another driver such a container is
refused, naming it and what to do, and so is a cni-plugged one under kuryr. The real
command on a Zun 18 database of the test's own (MariaDB), into SQLite."""

from __future__ import annotations

import json
from pathlib import Path

from support.zun_database import checksums, insert, url_of

from berth.db.networks import docker_placeholder

from . import zun_rows
from .test_import_zun import conf_for, import_zun, rows

HOST2 = "takeover-node-2"
KURYR_PORT = "7c1d0a7e-3b1f-4a7a-9f0a-5b2c3d4e0002"


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state' / 'berth.sqlite'}"


def kuryr_deployment(db: str) -> zun_rows.Deployment:
    """A Zun whose kuryr driver ran on two nodes: the Neutron network's Docker network
    on each (two rows), a container it plugged, and a row of no node."""
    d = zun_rows.Deployment()
    for id_, key, host, docker_id in ((1, "net-node1", zun_rows.HOST, "a" * 64),
                                      (2, "net-node2", HOST2, "b" * 64),
                                      (3, "net-nowhere", None, "c" * 64)):
        insert(db, "network", id=id_, uuid=d.u(key), name=zun_rows.NET,
               neutron_net_id=zun_rows.NET, host=host, network_id=docker_id,
               project_id=zun_rows.PROJECT, user_id=zun_rows.USER)
    zun_rows._container(db, d, "kuryr", 1, "Running", started_at=zun_rows.T0,
                        addresses={zun_rows.NET: [{"addr": "10.123.0.9", "version": 4,
                                                   "port": KURYR_PORT, "subnet_id": "s1",
                                                   "preserve_on_delete": False}]})
    return d


def test_kuryr_networks_and_containers_are_mapped_for_berths_kuryr_driver(
        zun_db, tmp_path) -> None:
    d = kuryr_deployment(zun_db)
    before = checksums(zun_db)
    conf = conf_for(tmp_path, sqlite_url(tmp_path), network_driver="kuryr")
    dry = import_zun(conf, url_of(zun_db), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    # the row of no node, named with what to do
    assert (f"network {d.u('net-nowhere')}: it has no neutron_net_id, no uuid or no host"
            in dry.stdout)
    assert "delete it in Zun's database" in dry.stdout
    done = import_zun(conf, url_of(zun_db), "--leave-behind")
    assert done.returncode == 0, done.stderr
    assert checksums(zun_db) == before
    nets = {r["uuid"]: r for r in rows(sqlite_url(tmp_path), "SELECT * FROM network")}
    assert set(nets) == {d.u("net-node1"), d.u("net-node2")}
    for key, host, docker_id in (("net-node1", zun_rows.HOST, "a" * 64),
                                 ("net-node2", HOST2, "b" * 64)):
        net = nets[d.u(key)]
        # the record berth's kuryr driver finds (db.networks.find_docker) for the node
        assert (net["neutron_net_id"], net["host"], net["network_id"], net["subnet"],
                net["bridge"]) == (zun_rows.NET, host, docker_id,
                                   docker_placeholder(zun_rows.NET, host), "")
    [container] = rows(sqlite_url(tmp_path), "SELECT uuid, addresses, cni_metadata "
                                             "FROM container")
    assert container["uuid"] == d.u("kuryr")
    assert json.loads(container["cni_metadata"] or "null") is None   # no VIF: Docker plugs it
    assert json.loads(container["addresses"])[zun_rows.NET][0]["port"] == KURYR_PORT

    from berth.db import networks as db_networks
    from berth.db.engine import Database

    db = Database(sqlite_url(tmp_path))
    try:
        found = db_networks.find_docker(db, zun_rows.NET, HOST2)
        assert found is not None and found.network_id == "b" * 64
    finally:
        db.dispose()


def test_containers_plugged_by_the_other_driver_are_refused_naming_them(
        zun_db, tmp_path) -> None:
    d = kuryr_deployment(zun_db)
    # and one Zun's cni driver plugged (a VIF recorded)
    zun_rows._container(zun_db, d, "cni", 2, "Running", started_at=zun_rows.T0,
                        addresses={zun_rows.NET: [{"addr": "10.123.0.5", "port": "p"}]},
                        cni_metadata={"vif": {}, "pid": 1})
    for driver, refused, other in (("cni", "kuryr", "cni"), ("kuryr", "cni", "kuryr"),
                                   ("local", "kuryr", "cni")):
        state = tmp_path / driver
        state.mkdir()
        conf = conf_for(state, sqlite_url(state), network_driver=driver)
        out = import_zun(conf, url_of(zun_db))
        assert out.returncode == 1, out.stdout
        assert (f"container {d.u(refused)}: Zun's {refused} driver plugged its Neutron ports "
                f"({zun_rows.NET}) and berth's [network]driver is {driver}: set "
                f"[network]driver = {refused}") in out.stderr
        assert not (state / "state" / "berth.sqlite").exists()       # nothing written
        carried = f"container {d.u(other)}:" not in out.stderr
        assert carried == (driver == other)
