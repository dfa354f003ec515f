"""reboot, pause, unpause, kill, rebuild, PATCH update, rename, resize_container, security groups."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
