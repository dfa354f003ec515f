"""A rebuild that fails after it took its resources undoes them (``flows/rebuild.py``
composing ``berth.compute.steps`` on an ExitStack, as create does): python-zunclient
against a private ``berth serve`` on the real Docker engine, the node's usage read
from host-show (counted from the container rows, as the scheduler counts) and the allocations
from the embedded Placement's tables in berth's SQLite database. The engine is reached
through tests/support/engine_proxy.py, which holds the failing pull long enough to
see what the rebuild took."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from support.berth_proc import BerthProcess, wait_for
from support.engine_proxy import EngineProxy, Rule
from support.lifecycle import Made, database_of, settled, wait_action

from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.embedded import EmbeddedPlacement

MISSING_IMAGE = "127.0.0.1:5000/berth-test/does-not-exist:latest"
UNREACHABLE_IMAGE = "127.0.0.1:1/berth-steps/missing:latest"   # nothing listens there
NO_IMAGE_CHECK = "[api]\nenable_image_validation = false\n"


def allocations(db: Database) -> list[tuple[str, str, int]]:
    with db.reader() as s:
        return [(str(c), str(rc), int(used)) for c, rc, used in s.execute(text(
            "SELECT consumer_id, resource_class, used FROM allocation "
            "ORDER BY consumer_id, resource_class")).all()]


def usage(proc: BerthProcess) -> tuple[float, int]:
    """The node's cpu and memory in use, as host-show says."""
    with proc.http() as http:
        host = http.get("/v1/hosts").json()["hosts"][0]
    return host["cpu_used"], host["mem_used"]


def test_a_rebuild_failing_at_its_pull_leaves_usage_and_allocations_as_before(
        berth_factory: Any, docker_client: Any, proxy: EngineProxy) -> None:
    proc = berth_factory(f"{NO_IMAGE_CHECK}[docker]\napi_url = {proxy.url}\n").start()
    zun = proc.client()
    made = Made(zun, docker_client)
    try:
        with database_of(proc) as db:
            rp = nodes.get_compute_node(db, proc.host).rp_uuid
            placement = EmbeddedPlacement(db)
            # Another container holds its share throughout.
            kept = made.create(cpu=0.5, memory="32")
            # A failed create: Error, holding nothing (no claim, no allocation).
            failed = zun.containers.create(image=MISSING_IMAGE, image_pull_policy="always",
                                           command=["sleep", "300"], cpu=1, memory="64")
            made.uuids.append(failed.uuid)
            wait_for(lambda: settled(zun, failed.uuid, "Error"), 60, what="the failed create")
            wait_for(lambda: usage(proc) == (0.5, 32), 30,
                     what="the node's usage to show only the running container")
            before = (usage(proc), allocations(db))
            assert {c for c, _, _ in before[1]} == {kept}
            generation = placement.get_provider(rp).generation

            # Rebuild from Error: the claim (status Rebuilding, checked against the
            # node) and the allocation are taken, then the pull, held 3 s by the
            # proxy so that they can be seen, fails.
            slow_pull = Rule("POST", "berth-steps", before=3.0)
            proxy.rules.append(slow_pull)
            zun.containers.rebuild(failed.uuid, image=UNREACHABLE_IMAGE)
            wait_for(lambda: usage(proc) == (1.5, 96), 30,
                     what="the rebuild's claim to show in the node's usage")
            wait_for(lambda: {c for c, _, _ in allocations(db)} == {kept, failed.uuid}, 30,
                     what="the rebuild's allocation")
            action, events = wait_action(db, failed.uuid, "rebuild")
            assert slow_pull.hits >= 1
            assert action.message == "Error"
            assert events == {"compute__do_container_rebuild": "Error"}

            row = containers.find_by_uuid(db, failed.uuid)
            assert row is not None and row.status == "Error" and row.task_state is None
            assert (row.status_reason or "").startswith("Rebuild failed: "), row.status_reason
            assert "127.0.0.1:1" in (row.status_reason or ""), row.status_reason
            assert row.host == proc.host and row.container_id is None
            # What the rebuild took is given back: the node's usage as shown, and
            # Placement's allocations, are those of before.
            assert (usage(proc), allocations(db)) == before
            assert placement.get_provider(rp).generation >= generation + 2   # made, removed
            assert placement.get_allocation(failed.uuid) == {}
            assert settled(zun, kept, "Running")
    finally:
        made.cleanup()
