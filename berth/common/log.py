"""Logging set-up. A context variable carries the container uuid that the current
thread works on; a filter puts it on every record, so each line says which
container it is about (``container=<uuid>``) without every call passing it.

Lines are text, or with ``[DEFAULT]use_json`` one JSON object each (``JsonFormatter``)
for log shippers, which then need no pattern to find the container, the level or
where a traceback ends."""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_container: contextvars.ContextVar[str] = contextvars.ContextVar("berth_container", default="-")

FORMAT = "%(asctime)s %(levelname)-7s %(name)s [container=%(container)s] %(message)s"


class ContainerFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "container"):
            record.container = _container.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line: ``time`` (UTC, ISO 8601), ``level``,
    ``logger``, ``container`` (uuid or "-"), ``message``, ``process``, ``thread``, and
    ``exception`` (the formatted traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "container": getattr(record, "container", "-"),
            "message": record.getMessage(),
            "process": record.process,
            "thread": record.threadName,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


@contextmanager
def container_context(uuid: str | None) -> Iterator[None]:
    """Within the block, log lines of this thread carry ``container=<uuid>``."""
    token = _container.set(uuid or "-")
    try:
        yield
    finally:
        _container.reset(token)


def setup(debug: bool = False, stream=None, use_json: bool = False) -> None:  # type: ignore[no-untyped-def]
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if use_json else logging.Formatter(FORMAT))
    handler.addFilter(ContainerFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    for noisy in ("urllib3", "docker", "alembic.runtime.migration", "alembic.runtime.plugins",
                  "stevedore",
                  "oslo.messaging", "oslo_messaging", "amqp", "kombu", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
