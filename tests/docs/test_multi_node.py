"""docs/multi-node.md, run as written on this machine: berth-api and two compute nodes
(berth-compute + berth-wsproxy each, on a Docker engine of their own in a network
namespace: ``ci-services.sh node-start``) over RabbitMQ and PostgreSQL, with users'
tokens from Keystone and the nodes' inventory in OpenStack Placement.

What the page makes in the shared services is this run's own and removed afterwards:
a RabbitMQ vhost, a database, a Keystone region with its endpoints, the nodes'
Placement providers. Keystone's project ``demo`` and users ``berth`` and ``demo`` stay
(the page creates them with ``--or-show``, so a second run finds them)."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest
from support.berth_proc import TEST_IMAGE, free_port

from docs import services
from docs.runner import run_page

NODES = ("docs1", "docs2")


def test_multi_node_page_runs_as_written(tmp_path: Path, docker_engine: None) -> None:
    absent = services.missing()
    if absent:
        pytest.fail("docs/multi-node.md needs the shared services; start them with: "
                    + "; ".join(absent))
    tag = uuid.uuid4().hex[:6]
    db, vhost, region = f"berth_docs_{tag}", f"berth_docs_{tag}", f"docs-{tag}"
    hosts = {"compute1": f"docs{tag}-compute1", "compute2": f"docs{tag}-compute2"}
    api, metrics = free_port(), {n: free_port() for n in hosts}
    wsproxy = {n: free_port() for n in hosts}
    subs = [
        # the controller's services as the test machines run them
        ("controller:5000", "127.0.0.1:5001"), ("@controller/berth", f"@127.0.0.1:5432/{db}"),
        ("CREATE DATABASE berth OWNER", f"CREATE DATABASE {db} OWNER"),
        ("5672/berth", f"5672/{vhost}"), ("add_vhost berth", f"add_vhost {vhost}"),
        ("-p berth ", f"-p {vhost} "),
        ("controller:9517", f"127.0.0.1:{api}"), ("10.0.0.11:9517", f"127.0.0.1:{api}"),
        ("10.0.0.31:9518", f"127.0.0.1:{metrics['compute1']}"),
        ("10.0.0.32:9518", f"127.0.0.1:{metrics['compute2']}"),
        ("10.0.0.31:6784", f"127.0.0.1:{wsproxy['compute1']}"),
        ("10.0.0.32:6784", f"127.0.0.1:{wsproxy['compute2']}"),
        ("controller:", "127.0.0.1:"),
        ("10.0.0.11", "127.0.0.1"), ("10.0.0.31", "127.0.0.1"), ("10.0.0.32", "127.0.0.1"),
        ("9517", str(api)),
        ("--region RegionOne", f"--region {region}"),
        ("OS_REGION_NAME=RegionOne", f"OS_REGION_NAME={region}"),
        # the passwords: the shared RabbitMQ and PostgreSQL users' own, bootstrap's admin
        ("RABBIT_PASS", "berth"), ("BERTH_DBPASS", "berth"), ("ADMIN_PASS", "admin"),
        ("BERTH_PASS", "berth-docs-pw"), ("DEMO_PASS", "demo-docs-pw"),
        ("local/busybox", TEST_IMAGE.split(":")[0]),
        # host names of this run's own: Placement keeps providers by name
        *hosts.items(),
    ]
    files = {
        "controller.conf": [("/var/lib/berth", str(tmp_path / "controller"))],
        **{f"{n}.conf": [("/var/lib/berth", str(tmp_path / n)),
                         ("unix:///var/run/docker.sock", f"unix:///run/berth-node-{node}.sock"),
                         ("6784", str(wsproxy[n])), ("9518", str(metrics[n]))]
           for n, node in zip(hosts, NODES, strict=True)},
    }
    services.ci_services("node-start", *NODES)
    keystone_region = None
    try:
        image = subprocess.run(["docker", "save", TEST_IMAGE], check=True,
                               capture_output=True, timeout=120).stdout
        for node in NODES:
            subprocess.run(["docker", "-H", f"unix:///run/berth-node-{node}.sock", "load"],
                           input=image, check=True, capture_output=True, timeout=120)
        keystone_region = services.KeystoneRegion(region)
        seconds = run_page("multi-node.md", tmp_path, subs, file_substitutions=files)
        print(f"multi-node.md ran in {seconds:.1f} s")
    finally:
        cleanups = [lambda: services.ci_services("node-stop", *NODES),
                    lambda: services.delete_resource_providers(list(hosts.values())),
                    lambda: services.drop_database(db),
                    lambda: services.delete_vhost(vhost)]
        if keystone_region is not None:
            cleanups.append(keystone_region.delete)
        failed = []
        for cleanup in cleanups:      # each one, whatever the others did
            try:
                cleanup()
            except Exception as err:  # noqa: BLE001 - reported below
                failed.append(repr(err))
        assert not failed, f"cleanup failed: {failed}"

