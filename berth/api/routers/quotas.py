"""/v1/quotas and /v1/quota_classes."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
