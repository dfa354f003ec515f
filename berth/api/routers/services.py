"""/v1/services."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
