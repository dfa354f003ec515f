"""Copying files out of and into a container (``zun cp``; behaviours.md §6.6).

The tar archive travels inside the RPC payload: base64 text from API 1.25 on
(``encode_data``/``decode_data`` true), before that the bytes as text, of which only
UTF-8 content survives (as in Zun; invalid bytes become U+FFFD).
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.flows.inspection import (
    container_gone,
    created_row,
    engine_words,
    gone_error,
)
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def container_get_archive(deps: AgentDeps, uuid: str, path: str, encode_data: bool
                          ) -> list[Any]:
    """``[data, stat]``: the tar of ``path`` and its stat
    (``{name, size, mode, mtime, linkTarget}``). A missing path is a 400 with the
    engine's message."""
    row, container_id = created_row(deps, uuid)
    try:
        archive = deps.runtime.get_archive(container_id, path)
    except rt.RuntimeNotFound as err:
        if container_gone(deps, container_id):
            raise gone_error(deps, row, err) from err
        raise exc.InvalidParameterValue(
            err=f"{engine_words(err)}. Check the path (it must exist in the container).") from err
    stat = archive.stat
    data = (base64.b64encode(archive.data).decode("ascii") if encode_data
            else archive.data.decode("utf-8", errors="replace"))
    LOG.info("read %s from the container (%d bytes of tar)", path, len(archive.data))
    return [data, {"name": stat.name, "size": stat.size, "mode": stat.mode,
                   "mtime": stat.mtime, "linkTarget": stat.link_target}]


def tar_bytes(data: Any, decode_data: bool) -> bytes:
    """The tar archive in ``data``: base64 text when ``decode_data``, else plain text.
    InvalidParameterValue (400) for anything else."""
    if not isinstance(data, str):
        raise exc.InvalidParameterValue(
            err="Invalid input for field 'data': it must be a string holding the tar "
                "archive (base64-encoded from API version 1.25).")
    if not decode_data:
        return data.encode("utf-8")
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError) as err:
        raise exc.InvalidParameterValue(
            err=f"Invalid input for field 'data': it is not valid base64 ({err}). From "
                f"API version 1.25 the tar archive must be sent base64-encoded.") from err


def container_put_archive(deps: AgentDeps, uuid: str, path: str, data: Any,
                          decode_data: bool) -> None:
    """Extract the tar in ``data`` into the directory ``path`` of the container. A
    missing directory, a path that is not a directory, or data that is not a tar
    archive is a 400 with the engine's message."""
    payload = tar_bytes(data, decode_data)
    row, container_id = created_row(deps, uuid)
    try:
        deps.runtime.put_archive(container_id, path, payload)
    except rt.RuntimeNotFound as err:
        if container_gone(deps, container_id):
            raise gone_error(deps, row, err) from err
        raise exc.InvalidParameterValue(
            err=f"{engine_words(err)}. The destination directory must exist in the "
                f"container.") from err
    except (rt.RuntimeConflict, rt.RuntimeUnavailable):
        raise
    except rt.RuntimeDriverError as err:
        # The engine answers 500 for input it cannot extract ("extraction point is not
        # a directory", "invalid tar header"): a client error, not a server one.
        raise exc.InvalidParameterValue(
            err=f"Docker could not extract the archive into {path}: {engine_words(err)}. Send a "
                f"tar archive and name an existing directory.") from err
    LOG.info("extracted %d bytes of tar into %s", len(payload), path)
