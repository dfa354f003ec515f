"""logs, top, stats, get_archive/put_archive, commit."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
