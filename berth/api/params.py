"""Zun's parameter binding (api-v1.md §1.1): query parameters and the top-level keys
of a JSON body form one parameter set; on a clash the query string wins. The
literal string ``None`` (what zunclient sends for an unset value) means absent."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from berth.common import exceptions as exc


async def read_json_body(request: Request, required: bool = False) -> Any:
    """The parsed JSON body, or None when there is none. With ``required`` the body
    must be JSON (415 otherwise) and must parse (400 otherwise)."""
    raw = await request.body()
    ctype = request.headers.get("content-type", "")
    if required and "application/json" not in ctype.lower():
        raise exc.UnsupportedMediaType(content_type=ctype or "(none)")
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        if required:
            raise exc.Invalid("The request body is not valid JSON.") from None
        return None


async def merged(request: Request) -> dict[str, Any]:
    """Query parameters merged over the JSON body's top-level keys."""
    body = await read_json_body(request)
    out: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    for key, value in request.query_params.items():
        out[key] = value
    return out


def absent(value: Any) -> bool:
    return value is None or value == "None"
