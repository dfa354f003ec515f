"""The console's change watcher against a real (migrated SQLite) database: one read
per tick whatever the number of subscribers, and exactly the rows that changed."""

from __future__ import annotations

import asyncio

from berth.dashboard.watch import Change, ChangeWatcher, diff
from berth.db import capsules, containers
from berth.db.engine import Database


def test_diff_reports_new_changed_and_gone_rows() -> None:
    before = {"a": (0, "p1", "Running", None, 1), "b": (1, "p2", "Running", None, 1),
              "c": (0, "p1", "Stopped", None, 1)}
    after = {"a": (0, "p1", "Running", None, 1), "b": (1, "p2", "Error", None, 2),
             "d": (0, "p3", "Creating", None, 3)}
    assert set(diff(before, after)) == {
        Change("capsule", "b", "p2"), Change("container", "d", "p3"),
        Change("container", "c", "p1", deleted=True)}


def test_watcher_publishes_each_change_once_to_every_subscriber(db: Database) -> None:
    async def scenario() -> None:
        watcher = ChangeWatcher(db, interval=3600)      # ticks driven by hand below
        first, second = watcher.subscribe(), watcher.subscribe()
        await watcher.baseline()
        reads = watcher.reads
        row = containers.create(db, {"name": "web", "project_id": "p1",
                                     "status": "Creating"})
        batch = await watcher.poll_once()
        assert batch is not None
        assert batch.changes == (Change("container", row.uuid, "p1"),)
        assert first.queue.get_nowait() is batch and second.queue.get_nowait() is batch
        assert watcher.reads == reads + 1                # one read for both subscribers

        assert await watcher.poll_once() is None         # nothing changed
        containers.update_(db, row.uuid, {"status": "Running"})
        changed = await watcher.poll_once()
        assert changed is not None and changed.changes == (
            Change("container", row.uuid, "p1"),)
        containers.destroy(db, row.uuid)
        gone = await watcher.poll_once()
        assert gone is not None and gone.changes == (
            Change("container", row.uuid, "p1", deleted=True),)
        await watcher.stop()

    asyncio.run(scenario())


def test_watcher_ignores_capsule_members(db: Database) -> None:
    """Members show through their capsule (as in the API), never as containers."""
    async def scenario() -> None:
        watcher = ChangeWatcher(db, interval=3600)
        watcher.subscribe()
        await watcher.baseline()
        capsules.create(db, {"name": "pod", "project_id": "p1", "status": "Creating"},
                        [{"name": "m", "project_id": "p1", "status": "Creating",
                          "container_type": capsules.MEMBER}])
        batch = await watcher.poll_once()
        assert batch is not None
        assert [(c.kind, c.project_id) for c in batch.changes] == [("capsule", "p1")]
        await watcher.stop()

    asyncio.run(scenario())


def test_a_subscriber_that_falls_behind_is_marked_for_a_snapshot(db: Database) -> None:
    async def scenario() -> None:
        watcher = ChangeWatcher(db, interval=3600)
        sub = watcher.subscribe()
        await watcher.baseline()
        for _ in range(sub.queue.maxsize + 1):
            containers.create(db, {"name": "x", "project_id": "p1", "status": "Creating"})
            await watcher.poll_once()
        assert sub.overflowed
        await watcher.stop()

    asyncio.run(scenario())
