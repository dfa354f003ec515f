"""Images and registries.

A registry's password is stored encrypted by each service. Zun's Fernet key is its
``[DEFAULT]auth_encryption_key``'s first 32 characters, base64-encoded (Zun's own
default key when the operator never set one); berth's comes from its own
configuration (``berth.db.registries``). Each password is decrypted with Zun's key
(``--zun-encryption-key``) and encrypted again with berth's; one that does not decrypt
is a row the import cannot carry.
"""

from __future__ import annotations

import base64
import uuid as uuidlib
from collections.abc import Callable

from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows

#: Zun's [DEFAULT]auth_encryption_key default (zun/conf/utils.py).
ZUN_DEFAULT_KEY = "notgood but just long enough i t"


def zun_decrypter(key: str) -> Callable[[str], str]:
    """Decrypts a password Zun stored with [DEFAULT]auth_encryption_key ``key``."""
    from cryptography.fernet import Fernet

    fernet = Fernet(base64.b64encode(key[:32].encode()))
    return lambda token: fernet.decrypt(token.encode()).decode()


def convert_registries(zun: ZunRows, plan: Plan, decrypt: Callable[[str], str],
                       encrypt: Callable[[str], str]) -> set[int]:
    """The registry rows; returns the ids carried."""
    from cryptography.fernet import InvalidToken

    carried: set[int] = set()
    for row in zun["registry"]:
        ident = row.get("uuid") or f"id={row['id']}"
        password = row.get("password")
        if password is not None:
            try:
                password = encrypt(decrypt(password))
            except (InvalidToken, ValueError):
                plan.refuse("registry", ident,
                            "its password does not decrypt with the Zun key given: pass "
                            "Zun's [DEFAULT]auth_encryption_key as --zun-encryption-key")
                continue
        plan.add("registry", carry(row, "registry", password=password,
                                   uuid=row.get("uuid") or str(uuidlib.uuid4())))
        carried.add(row["id"])
    return carried


def convert_images(zun: ZunRows, plan: Plan) -> None:
    for row in zun["image"]:
        plan.add("image", carry(row, "image", uuid=row.get("uuid") or str(uuidlib.uuid4())))
