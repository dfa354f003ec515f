"""Queries on ``registry`` (private registry credentials), and the cipher that keeps
their passwords encrypted at rest.

The password column holds a Fernet token (AES-128-CBC + HMAC-SHA256, from the
``cryptography`` package). The key comes from ``[DEFAULT]auth_encryption_key``
(any secret string; the Fernet key is derived from it with HKDF-SHA256), or, when
that option is unset, from ``<state_path>/registry.key``, a random key berth writes
on first use with mode 0600. Every process that reads registries (the API and each
compute agent) needs the same key: on several machines, set auth_encryption_key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from berth.common import exceptions as exc
from berth.db import paging, rows
from berth.db.containers import is_uuid_like
from berth.db.engine import Database
from berth.db.models import Container, Registry

LOG = logging.getLogger(__name__)

KEY_FILE = "registry.key"
FILTERS = ("name", "domain", "username", "project_id", "user_id")


# -- the cipher ---------------------------------------------------------------------

def derive_key(secret: str) -> bytes:
    """The Fernet key for the configured ``auth_encryption_key``: HKDF-SHA256 (RFC 5869,
    no salt, 32 bytes) of the secret, urlsafe-base64 encoded.

    Written with the standard library's HMAC rather than cryptography's HKDF (same
    output, checked in tests/unit/db/test_registry_cipher.py): every API and agent
    process derives the key at start-up, and importing cryptography for it costs each
    of them about 7 MiB of resident memory that only a registry pull needs."""
    prk = hmac.new(b"\0" * 32, secret.encode(), hashlib.sha256).digest()       # extract
    okm = hmac.new(prk, b"berth registry passwords" + b"\x01", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(okm)     # one expand block is the 32 bytes Fernet needs


def load_key(secret: str | None, state_path: str) -> bytes:
    """The key from ``secret`` when set, else the one in ``<state_path>/registry.key``
    (created, mode 0600, when absent; a concurrent creator's key wins)."""
    if secret:
        return derive_key(secret)
    path = os.path.join(state_path, KEY_FILE)
    try:
        with open(path, "rb") as fh:
            return fh.read().strip()
    except FileNotFoundError:
        pass
    os.makedirs(state_path, exist_ok=True)
    key = base64.urlsafe_b64encode(os.urandom(32))   # what Fernet.generate_key() makes
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        with open(path, "rb") as fh:
            return fh.read().strip()
    with os.fdopen(fd, "wb") as fh:
        fh.write(key + b"\n")
    LOG.info("generated the registry password key %s (set [DEFAULT]auth_encryption_key "
             "to share one key between machines)", path)
    return key


class PasswordCipher:
    """Encrypts registry passwords for the database and decrypts them for a pull."""

    def __init__(self, key: bytes) -> None:
        from cryptography.fernet import Fernet

        self._fernet = Fernet(key)

    def encrypt(self, password: str) -> str:
        return self._fernet.encrypt(password.encode()).decode("ascii")

    def decrypt(self, token: str) -> str:
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet.decrypt(token.encode("ascii")).decode()
        except (InvalidToken, ValueError) as err:
            raise exc.Invalid(
                "A registry password stored in the database cannot be decrypted with this "
                "process's key: [DEFAULT]auth_encryption_key (or state_path/registry.key) "
                "differs from the one it was saved with. Use the same key everywhere, or "
                "set the password again with `zun registry-update --password`.") from err


# -- queries ------------------------------------------------------------------------

def create(db: Database, values: Mapping[str, Any]) -> Registry:
    row = Registry(**values)
    row.uuid = row.uuid or str(uuidlib.uuid4())
    with db.writer() as s:
        s.add(row)
    return row


def get(db: Database, ident: str, project_id: str | None) -> Registry:
    """By uuid or name within ``project_id`` (None: all projects). RegistryNotFound,
    or Conflict when the name matches several registries."""
    with db.reader() as s:
        base = select(Registry)
        if project_id is not None:
            base = base.where(Registry.project_id == project_id)
        if is_uuid_like(ident):
            row = s.scalars(base.where(Registry.uuid == ident.lower())).first()
            if row is not None:
                return row
        rows = s.scalars(base.where(Registry.name == ident).limit(2)).all()
    if not rows:
        raise exc.RegistryNotFound(registry=ident)
    if len(rows) > 1:
        raise exc.Conflict(f"Multiple registries exist with the name {ident}; use the "
                           f"uuid instead.")
    return rows[0]


def find_by_id(db: Database, registry_id: int) -> Registry | None:
    with db.reader() as s:
        return s.get(Registry, registry_id)


def list_(db: Database, *, project_id: str | None, filters: Mapping[str, Any], limit: int,
          marker: str | None, sort_key: str, sort_dir: str) -> list[Registry]:
    where = [getattr(Registry, k) == v for k, v in filters.items()]
    if project_id is not None:
        where.append(Registry.project_id == project_id)
    return paging.page(db, Registry, where=where, limit=limit, marker=marker,
                       sort_key=sort_key, sort_dir=sort_dir, what="registry",
                       not_found=lambda m: exc.RegistryNotFound(registry=m))


def update_(db: Database, uuid: str, values: Mapping[str, Any]) -> Registry:
    with db.writer() as s:
        row = s.scalars(select(Registry).where(Registry.uuid == uuid)).first()
        if row is None:
            raise exc.RegistryNotFound(registry=uuid)
        for key, value in values.items():
            setattr(row, key, value)
        s.flush()
        return row


def destroy(db: Database, uuid: str) -> bool:
    return rows.destroy_by_uuid(db, Registry, uuid)


def containers_using(db: Database, registry_id: int, limit: int = 5) -> list[str]:
    """Uuids of (at most ``limit``) containers whose images come from this registry."""
    with db.reader() as s:
        return list(s.scalars(select(Container.uuid).where(
            Container.registry_id == registry_id).limit(limit)).all())
