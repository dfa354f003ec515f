"""berth.db.paging: one page of any table with api-v1.md §5 semantics, here on the
image table of a real migrated SQLite database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.migrated_sqlite import migrated_url

from berth.common import exceptions as exc
from berth.db import images, paging
from berth.db.engine import Database
from berth.db.models import Image

REPOS = ["b", None, "a", "c", None, "a"]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(migrated_url(tmp_path))
    for n, repo in enumerate(REPOS):
        images.create(database, {"repo": repo, "tag": f"t{n}", "host": "h"})
    yield database
    database.dispose()


def walk(db: Database, sort_key: str, sort_dir: str, limit: int) -> list[Image]:
    out: list[Image] = []
    marker = None
    while True:
        rows = paging.page(db, Image, limit=limit, marker=marker, sort_key=sort_key,
                           sort_dir=sort_dir, what="image", not_found=images.not_found)
        out += rows
        if len(rows) < limit:
            return out
        marker = rows[-1].uuid


@pytest.mark.parametrize("limit", [1, 2, 4, 10])
def test_pages_follow_each_other_with_nulls_first_ascending(db: Database, limit: int) -> None:
    rows = walk(db, "repo", "asc", limit)
    assert [r.repo for r in rows] == [None, None, "a", "a", "b", "c"]
    assert len({r.uuid for r in rows}) == len(REPOS)
    # ties are broken by id, in the sort direction
    assert [r.tag for r in rows if r.repo == "a"] == ["t2", "t5"]


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_descending_pages_put_nulls_last(db: Database, limit: int) -> None:
    rows = walk(db, "repo", "desc", limit)
    assert [r.repo for r in rows] == ["c", "b", "a", "a", None, None]
    assert [r.tag for r in rows if r.repo is None] == ["t4", "t1"]


def test_bad_sort_keys_directions_and_markers_are_refused(db: Database) -> None:
    with pytest.raises(exc.InvalidParameterValue) as err:
        paging.page(db, Image, limit=5, marker=None, sort_key="colour", sort_dir="asc",
                    what="image", not_found=images.not_found)
    assert "image's fields" in err.value.msg and "repo" in err.value.msg
    with pytest.raises(exc.InvalidParameterValue):
        paging.page(db, Image, limit=5, marker=None, sort_key="id", sort_dir="up",
                    what="image", not_found=images.not_found)
    with pytest.raises(exc.ResourceNotFound) as err:
        paging.page(db, Image, limit=5, marker="11111111-1111-1111-1111-111111111111",
                    sort_key="id", sort_dir="asc", what="image", not_found=images.not_found)
    assert "11111111" in err.value.msg


def test_an_image_pulled_twice_to_one_host_is_a_conflict(db: Database) -> None:
    with pytest.raises(exc.Conflict) as err:
        images.create(db, {"repo": "a", "tag": "t2", "host": "h"})
    assert "already been pulled" in err.value.msg
    images.create(db, {"repo": "a", "tag": "t2", "host": "other"})     # another host: fine
