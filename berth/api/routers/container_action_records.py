"""container_actions and their events."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
