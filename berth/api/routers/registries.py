"""/v1/registries."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
