"""execute, execute_resize, attach, resize (console and exec)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
