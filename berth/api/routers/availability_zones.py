"""/v1/availability_zones."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
