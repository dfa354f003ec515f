"""P4: rows read from the database by one node's periodic sync_container_state, with
100 hosts × 100 containers in the database. Zun's sync reads all 10,000 rows on every
node every minute. Counted here independently of berth's own report: every container
row the ORM loads during one run is counted through a SQLAlchemy ``load`` event."""

from __future__ import annotations

import logging
import tempfile
import uuid

from sqlalchemy import event

from bench.common import Berth, Result, engine_url
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.periodic.sync_state import sync_container_state
from berth.db import migrate
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime.docker import DockerRuntime


def p4(berth: Berth, hosts: int = 100, per_host: int = 100) -> Result:
    path = tempfile.mktemp(prefix="berth-p4-", suffix=".sqlite")
    url = f"sqlite:///{path}"
    migrate.upgrade(url)
    db = Database(url)
    own = "p4-host-0"
    with db.writer() as s:
        for h in range(hosts):
            for i in range(per_host):
                s.add(Container(uuid=str(uuid.uuid4()), name=f"c-{h}-{i}", image="x",
                                status="Running", host=f"p4-host-{h}", project_id="p",
                                user_id="u", container_id=uuid.uuid4().hex * 2,
                                memory="64", cpu=0.1, container_type=0))
    runtime = DockerRuntime(engine_url())
    deps = AgentDeps(db=db, runtime=runtime, tracker=ResourceTracker(db, own),
                     settings=AgentSettings(host=own), capsules=DockerCapsules())
    loaded: set[str] = set()
    foreign: set[str] = set()

    def count(target, context):  # type: ignore[no-untyped-def]
        (loaded if target.host == own else foreign).add(target.uuid)

    event.listen(Container, "load", count)
    # The seeded rows name Docker containers that do not exist: the sync marks the
    # node's 100 Error, each with a warning that says nothing about the benchmark.
    reconcile_log = logging.getLogger("berth.compute.flows.sync")
    level = reconcile_log.level
    reconcile_log.setLevel(logging.ERROR)
    try:
        report = sync_container_state(deps, service_down_time=180)
    finally:
        reconcile_log.setLevel(level)
        event.remove(Container, "load", count)
        runtime.close()
        db.dispose()
    total = hosts * per_host
    read = len(loaded) + len(foreign)
    return Result("P4", f"distinct rows read by one node's sync ({hosts} hosts × {per_host})",
                  float(read), float(total), "rows", "= the node's own rows",
                  not foreign and len(loaded) <= per_host, read / total,
                  {"berth_reported_rows_read": report.rows_read, "own_rows": per_host,
                   "other_hosts_rows_read": len(foreign)})


