"""Request bodies: read within a size bound, refused when nested too deeply, then
decoded. A body the API cannot or will not parse is a 400 in Zun's error format, and
costs little: the size is checked before the body is read (Content-Length) and while
it is read, and the nesting depth on the raw bytes, before any decoding (a body of
100,000 nested arrays made the stdlib decoder raise RecursionError, a 500)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Collection
from typing import Any

from fastapi import Request

from berth.api.schemas.types import invalid
from berth.common import exceptions as exc
from berth.common import unstorable
from berth.conf.api import BODY_TIMEOUT, MAX_REQUEST_BODY_SIZE

#: Deepest nesting of arrays and objects a body may have. Zun's deepest bodies (a
#: capsule template: spec, containers, resources, requests) nest about six levels.
MAX_DEPTH = 32

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
#: An opening bracket as +1, a closing one as -1 (signed bytes).
_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_CHUNK = 65536


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects deeper than ``limit``.
    In C but for one step per 64 KiB of brackets: strings are cut out, everything but
    brackets dropped, each bracket made a +1 or -1, and the running sum (the depth)
    accumulated a chunk at a time, stopping at the first chunk that goes too deep.
    A sum that goes below zero is a body that is not JSON: the decoder says so."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False                      # too few brackets to nest that deep
    steps = memoryview(_STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
                       .translate(_STEP)).cast("b")
    depth = 0
    for start in range(0, len(steps), _CHUNK):
        sums = list(itertools.accumulate(steps[start:start + _CHUNK], initial=depth))
        if max(sums) > limit:
            return True
        if min(sums) < 0:
            return False
        depth = sums[-1]
    return False


def decode(raw: bytes, binary: Collection[str] = ()) -> Any:
    """The JSON value of ``raw``; Invalid (400) when it is nested too deeply, is not
    JSON, or holds a string berth cannot store or pass on (``refuse_unstorable``;
    ``binary`` names top-level fields that carry bytes as text, where a NUL is data)."""
    if too_deep(raw):
        raise exc.Invalid(f"The request body nests arrays or objects more than {MAX_DEPTH} "
                          f"levels deep; no request of this API needs that.")
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise exc.Invalid("The request body is not valid JSON.") from None
    if unstorable.ESCAPE.search(raw):
        refuse_unstorable(value, binary)
    return value


def refuse_unstorable(value: Any, binary: Collection[str] = ()) -> None:
    """InvalidParameterValue (400) naming the first field (key or value, at any depth)
    of the decoded body ``value`` that holds a NUL or a lone surrogate: the database,
    the engine and the response's UTF-8 cannot take it (``berth.common.unstorable``).
    In a top-level field named in ``binary`` (put_archive's ``data`` before API 1.25:
    a tar archive as text, which has NULs) only a lone surrogate is refused.
    Such a character reaches a decoded body only as a JSON escape (raw, it is not
    UTF-8, or a control character JSON refuses), so ``decode`` walks only bodies that
    have one of those escapes."""
    carried = {k: v for k, v in value.items() if k in binary} \
        if binary and isinstance(value, dict) else {}
    rest = {k: v for k, v in value.items() if k not in carried} if carried else value
    found = unstorable.first_unstorable(rest)
    if found is None:
        for key, text in carried.items():
            if isinstance(text, str) and unstorable.SURROGATE.search(text):
                found = key, text
                break
    if found is not None:
        field, text = found
        raise invalid(field, unstorable.escaped(text), unstorable.why(text))


async def read(request: Request, limit: int, timeout: float | None = None) -> bytes:
    """The whole body, refused (400) as soon as it is known to exceed ``limit`` bytes:
    by its Content-Length before anything is read, else while it streams in; and
    refused (400) when it has not all arrived within ``timeout`` seconds."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
    except TimeoutError:
        raise exc.Invalid(f"The request body did not arrive within {timeout:g} s "
                          f"([api]body_timeout); send it faster.") from None
    body = b"".join(chunks)
    request._body = body    # what Request.body() answers from now on
    return body


def _too_large(limit: int) -> exc.Invalid:
    return exc.Invalid(f"The request body is larger than {limit} bytes "
                       f"([api]max_request_body_size); send less.")


def size_limit(request: Request) -> int:
    """``[api]max_request_body_size`` of the app serving ``request``."""
    return int(getattr(_settings(request), "max_request_body_size", MAX_REQUEST_BODY_SIZE))


def time_limit(request: Request) -> float:
    """``[api]body_timeout`` of the app serving ``request``."""
    return float(getattr(_settings(request), "body_timeout", BODY_TIMEOUT))


async def read_bounded(request: Request) -> bytes:
    """``read`` within the app's size and time limits."""
    return await read(request, size_limit(request), time_limit(request))


def _settings(request: Request) -> Any:
    return getattr(getattr(request.app.state, "berth", None), "settings", None)
