"""Queries on ``image``: one row per image a user asked a node to pull
(``POST /v1/images``). The API inserts the row; the node's agent fills in
``image_id`` and ``size`` after the pull and removes the row after ``docker rmi``."""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from berth.common import exceptions as exc
from berth.db import paging, rows
from berth.db.engine import Database
from berth.db.models import Image


def not_found(ident: str) -> exc.ResourceNotFound:
    return exc.ResourceNotFound(
        f"Image {ident} could not be found. Images are looked up by uuid: list them "
        f"with `zun image-list`.", resource=f"Image {ident}")


def create(db: Database, values: Mapping[str, Any]) -> Image:
    """Insert; Conflict when the node already has a row for this repo and tag."""
    row = Image(**values)
    row.uuid = row.uuid or str(uuidlib.uuid4())
    try:
        with db.writer() as s:
            s.add(row)
    except IntegrityError:
        raise exc.Conflict(
            f"Image {row.repo}:{row.tag} has already been pulled to host {row.host} "
            f"(see `zun image-list`); delete that record first to pull it again.") from None
    return row


def get(db: Database, uuid: str) -> Image:
    with db.reader() as s:
        row = s.scalars(select(Image).where(Image.uuid == uuid.lower())).first()
    if row is None:
        raise not_found(uuid)
    return row


def find(db: Database, uuid: str) -> Image | None:
    with db.reader() as s:
        return s.scalars(select(Image).where(Image.uuid == uuid)).first()


def list_(db: Database, *, limit: int, marker: str | None, sort_key: str, sort_dir: str
          ) -> list[Image]:
    return paging.page(db, Image, limit=limit, marker=marker, sort_key=sort_key,
                       sort_dir=sort_dir, not_found=not_found, what="image")


def update_(db: Database, uuid: str, values: Mapping[str, Any]) -> Image | None:
    """Update the row; None when it is gone (deleted meanwhile)."""
    with db.writer() as s:
        row = s.scalars(select(Image).where(Image.uuid == uuid)).first()
        if row is None:
            return None
        for key, value in values.items():
            setattr(row, key, value)
        s.flush()
        return row


def destroy(db: Database, uuid: str) -> bool:
    return rows.destroy_by_uuid(db, Image, uuid)


def payload(row: Image) -> dict[str, Any]:
    """The ``image`` argument of image_pull / image_delete: the row as JSON-able data."""
    out: dict[str, Any] = {}
    for column in Image.__table__.columns:
        value = getattr(row, column.name)
        out[column.name] = value.isoformat() if isinstance(value, dt.datetime) else value
    return out
