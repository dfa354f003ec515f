"""/v1/images."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
