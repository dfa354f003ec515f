"""/v1/hosts."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
