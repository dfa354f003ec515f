"""Console tokens: what lets one websocket open one console, once.

Zun's console token was a uuid stored on the container row: it never expired and
could be replayed until the next attach replaced it. berth's token is:

* random: ``secrets.token_urlsafe(32)`` (256 bits);
* stored hashed: only its SHA-256 is in ``console_token``, so a database reader cannot
  open consoles; the presented token's hash is compared in constant time;
* bound: to one container (and, for an exec console, one exec id);
* short-lived: it expires ``[websocket_proxy] token_ttl`` seconds after it was issued;
* single-use: consuming it is one ``UPDATE ... WHERE used_at IS NULL AND expires_at >
  now``; of two connections racing with the same token exactly one wins;
* gone with its container: the table's foreign key cascades on container delete.

Times are naive UTC, like every timestamp in the database. ``now`` is injectable so
that tests need no sleeping.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import delete, select, update

from berth.common.exceptions import NotAuthorized
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import ConsoleToken, Container

LOG = logging.getLogger(__name__)

KIND_ATTACH = "attach"
KIND_EXEC = "exec"

#: Longer "tokens" are refused before hashing (ours are 43 characters).
_MAX_TOKEN_LENGTH = 256

Clock = Callable[[], dt.datetime]


class TokenRefused(NotAuthorized):
    """The presented console token does not open this console; ``reason`` says why
    (for the log and the refusal text)."""

    message = "Console token refused: %(reason)s"


@dataclass(frozen=True, slots=True)
class Grant:
    """What a consumed token opens."""

    container_uuid: str
    kind: str                  # KIND_ATTACH | KIND_EXEC
    exec_id: str | None


def digest(token: str) -> str:
    """The stored form of ``token``: SHA-256, hex (64 characters)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue(db: Database, container_uuid: str, *, ttl: float, exec_id: str | None = None,
          kind: str | None = None, now: Clock = utcnow) -> str:
    """A new token for the container's attach console, or for exec ``exec_id`` in it.
    ``kind`` KIND_ATTACH with an ``exec_id``: an attach stream recorded under that id
    (a member of a CRI pod).

    Returns the token itself (only its hash is stored). Expired tokens of any container
    are deleted on the way, so the table holds only live and recently used ones.
    """
    token = secrets.token_urlsafe(32)
    issued = now()
    with db.writer() as s:
        s.execute(delete(ConsoleToken).where(ConsoleToken.expires_at < issued))
        s.add(ConsoleToken(token_hash=digest(token), container_uuid=container_uuid,
                           exec_id=exec_id,
                           kind=kind or (KIND_EXEC if exec_id else KIND_ATTACH),
                           expires_at=issued + dt.timedelta(seconds=ttl)))
    what = f"exec {exec_id[:12]}" if exec_id and kind != KIND_ATTACH else "attach"
    LOG.info("issued a console token for %s of container %s, valid %s s", what,
             container_uuid, ttl)
    return token


def consume(db: Database, token: str | None, container: str | None,
            exec_id: str | None = None, now: Clock = utcnow) -> Grant:
    """Spend ``token`` on the console of ``container`` (its uuid, or its name) and, for
    an exec console, ``exec_id``. Returns what it opens, or raises
    :class:`TokenRefused`: unknown token, another container, another exec (or attach
    vs exec), expired, already used. A token presented for the wrong container or exec
    is not spent."""
    if not token or len(token) > _MAX_TOKEN_LENGTH:
        raise TokenRefused(reason="the URL carries no valid token")
    presented = digest(token)
    with db.reader() as s:
        row = s.scalars(select(ConsoleToken).where(ConsoleToken.token_hash == presented)
                        ).first()
        name = s.scalars(select(Container.name).where(
            Container.uuid == row.container_uuid)).first() if row is not None else None
    # The lookup by hash leaks nothing useful about the token; the explicit
    # constant-time comparison keeps the check honest whatever the index does.
    if row is None or not hmac.compare_digest(row.token_hash, presented):
        raise TokenRefused(reason="unknown token; ask the API for a new console URL")
    if not container:
        raise TokenRefused(reason="the URL names no container (uuid=)")
    if container not in (row.container_uuid, name):
        raise TokenRefused(reason=f"the token was issued for another container, not "
                                  f"{container}")
    if not hmac.compare_digest((exec_id or "").encode(), (row.exec_id or "").encode()):
        what = f"exec {row.exec_id}" if row.exec_id else "the attach console"
        raise TokenRefused(reason=f"the token was issued for {what}")
    at = now()
    with db.writer() as s:
        result = s.execute(
            update(ConsoleToken)
            .where(ConsoleToken.id == row.id, ConsoleToken.used_at.is_(None),
                   ConsoleToken.expires_at > at)
            .values(used_at=at))
        spent = int(getattr(result, "rowcount", 0) or 0)
    if spent != 1:
        if row.expires_at <= at:
            raise TokenRefused(reason="the token has expired; ask the API for a new "
                                      "console URL")
        raise TokenRefused(reason="the token was already used; ask the API for a new "
                                  "console URL")
    return Grant(container_uuid=row.container_uuid, kind=row.kind, exec_id=row.exec_id)
