"""``[DEFAULT]use_json``: every record is one line of JSON that a log shipper reads
without a pattern, container and traceback included."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from berth.common import log


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_each_record_is_one_json_line_with_its_container_and_traceback(
        root_logging: None) -> None:
    out = io.StringIO()
    log.setup(stream=out, use_json=True)
    logger = logging.getLogger("berth.test")
    with log.container_context("c0ffee"):
        logger.warning("stopped by Docker\n(exit %d)", 137)
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("sync failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    first, second = map(json.loads, lines)
    assert {k: first[k] for k in ("level", "logger", "container", "message")} == {
        "level": "WARNING", "logger": "berth.test", "container": "c0ffee",
        "message": "stopped by Docker\n(exit 137)"}
    assert first["time"].endswith("+00:00") and "exception" not in first
    assert second["container"] == "-" and second["message"] == "sync failed"
    assert "ValueError: boom" in second["exception"]


def test_text_stays_the_default(root_logging: None) -> None:
    out = io.StringIO()
    log.setup(stream=out)
    with log.container_context("c0ffee"):
        logging.getLogger("berth.test").info("hello")
    assert out.getvalue().rstrip().endswith("berth.test [container=c0ffee] hello")
