"""Logging set-up. A context variable carries the container uuid that the current
thread works on; a filter puts it on every record, so each line says which
container it is about (``container=<uuid>``) without every call passing it."""

from __future__ import annotations

import contextvars
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


@contextmanager
def container_context(uuid: str | None) -> Iterator[None]:
    """Within the block, log lines of this thread carry ``container=<uuid>``."""
    token = _container.set(uuid or "-")
    try:
        yield
    finally:
        _container.reset(token)


def setup(debug: bool = False, stream=None) -> None:  # type: ignore[no-untyped-def]
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(ContainerFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    for noisy in ("urllib3", "docker", "alembic.runtime.migration", "alembic.runtime.plugins",
                  "stevedore",
                  "oslo.messaging", "oslo_messaging", "amqp", "kombu", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
