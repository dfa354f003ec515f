"""``exec_instance`` rows: which exec ids were created in which container through the
API (an interactive or deferred exec, ``run=false``). The agent records them; the API
checks an ``execute_resize`` against them, because that RPC names no container and a
user must not resize another project's exec. The rows go with their container
(foreign key cascade)."""

from __future__ import annotations

from sqlalchemy import select

from berth.db.engine import Database
from berth.db.models import ExecInstance


def record(db: Database, container_row_id: int, exec_id: str, url: str | None = None) -> None:
    """Remember that ``exec_id`` belongs to the container whose row id is given.
    ``url`` says where the exec lives (the engine's address), for operators."""
    with db.writer() as s:
        s.add(ExecInstance(container_id=container_row_id, exec_id=exec_id, url=url))


def url_of(db: Database, container_row_id: int, exec_id: str) -> str | None:
    """The recorded URL of ``exec_id`` in that container (None: none recorded)."""
    with db.reader() as s:
        return s.scalars(select(ExecInstance.url).where(
            ExecInstance.container_id == container_row_id,
            ExecInstance.exec_id == exec_id)).first()


def belongs(db: Database, container_row_id: int, exec_id: str) -> bool:
    """Whether ``exec_id`` was created in that container through berth."""
    with db.reader() as s:
        found = s.scalars(select(ExecInstance.id).where(
            ExecInstance.container_id == container_row_id,
            ExecInstance.exec_id == exec_id)).first()
    return found is not None
