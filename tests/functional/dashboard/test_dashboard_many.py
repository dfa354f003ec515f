"""A project with 1,000 containers in the console: the list holds them all but renders
only the rows in view, scrolls to the last one, narrows to one by search, and takes a
change of every row at once (one pushed batch) without a reload.

The rows are written straight into the ``berth serve``'s database, on a host no agent
owns, so that no Docker container is made (the console reads only the rows)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import delete, insert, update

from berth.db.engine import Database
from berth.db.models import Container

COUNT = 1000


@pytest.fixture
def project(berth: Any) -> Iterator[tuple[str, Database]]:
    """A project of COUNT Stopped containers named bulk-0000...; removed afterwards."""
    name = f"bulk-{uuid.uuid4().hex[:8]}"
    db = Database(f"sqlite:///{berth.dir / 'state' / 'berth.sqlite'}")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows = [{"uuid": str(uuid.uuid4()), "name": f"bulk-{i:04d}", "image": "x",
             "status": "Stopped", "host": "dashboard-ghost", "project_id": name,
             "user_id": "viewer", "memory": "64", "cpu": 0.1, "command": ["sleep"],
             "container_type": 0, "created_at": now} for i in range(COUNT)]
    with db.write_connection() as conn:
        conn.execute(insert(Container), rows)
    yield name, db
    with db.write_connection() as conn:
        conn.execute(delete(Container).where(Container.project_id == name))
    db.dispose()


def test_a_thousand_containers_render_only_what_is_in_view(page, project, artifacts) -> None:
    name, db = project
    page.get_by_label("Token").fill(f"viewer:{name}")
    page.get_by_role("button", name="Log in").click()
    count = page.locator(".count")
    expect(count).to_have_text(f"{COUNT} of {COUNT}")
    table = page.get_by_role("table", name="Containers")
    expect(table).to_have_attribute("aria-rowcount", str(COUNT + 1))
    assert page.locator(".vrow").count() < 100          # only the rows in view
    page.screenshot(path=str(artifacts / "13-thousand.png"))

    page.locator(".vbody").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    expect(page.get_by_role("row").filter(has_text="bulk-0999")).to_be_visible()
    assert page.locator(".vrow").count() < 100

    page.get_by_role("searchbox").fill("bulk-0500")
    expect(count).to_have_text(f"1 of {COUNT}")
    page.get_by_role("searchbox").fill("")

    page.get_by_label("Status").select_option("Running")
    expect(count).to_have_text(f"0 of {COUNT}")
    with db.write_connection() as conn:                  # every row changes at once
        conn.execute(update(Container).where(Container.project_id == name)
                     .values(status="Running"))
    expect(count).to_have_text(f"{COUNT} of {COUNT}")
    with db.write_connection() as conn:
        conn.execute(delete(Container).where(Container.project_id == name))
    expect(count).to_have_text("0 of 0")
