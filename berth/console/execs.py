"""``exec_instance`` rows: which exec ids were created in which container through the
API (an interactive or deferred exec, ``run=false``). The agent records them; the API
checks an ``execute_resize`` against them, because that RPC names no container and a
user must not resize another project's exec. The rows go with their container
(foreign key cascade)."""

from __future__ import annotations

from sqlalchemy import select, update

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


def find_by_exec_id(db: Database, exec_id: str) -> ExecInstance | None:
    """The record of ``exec_id`` in whichever container (an exec resize names no
    container; the API checked that the caller's container has it)."""
    with db.reader() as s:
        return s.scalars(select(ExecInstance).where(ExecInstance.exec_id == exec_id)).first()


def ask_size(db: Database, record_id: int, height: int, width: int) -> None:
    """Ask for a TTY of ``height`` x ``width`` on the recorded console (a CRI stream:
    the console proxy holding it sends the size; ``size_of``)."""
    with db.writer() as s:
        s.execute(update(ExecInstance).where(ExecInstance.id == record_id)
                  .values(tty_size=f"{height}x{width}"))


def size_of(db: Database, container_row_id: int, exec_id: str) -> tuple[int, int] | None:
    """The TTY size last asked for that console: (height, width), or None."""
    with db.reader() as s:
        text = s.scalars(select(ExecInstance.tty_size).where(
            ExecInstance.container_id == container_row_id,
            ExecInstance.exec_id == exec_id)).first()
    if not text:
        return None
    height, _, width = text.partition("x")
    return int(height), int(width)


def latest_with_url(db: Database, container_row_id: int, marker: str) -> ExecInstance | None:
    """The newest record of the container whose URL contains ``marker`` (a CRI
    runtime's ``/attach/`` streams: a TTY resize of the container goes to its attach)."""
    with db.reader() as s:
        return s.scalars(select(ExecInstance).where(
            ExecInstance.container_id == container_row_id,
            ExecInstance.url.contains(marker)).order_by(ExecInstance.id.desc())).first()
