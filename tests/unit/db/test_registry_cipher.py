"""The key and cipher that keep registry passwords encrypted at rest
(berth.db.registries)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from berth.common import exceptions as exc
from berth.db import registries


def test_without_a_secret_a_key_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    state = tmp_path / "state"
    key = registries.load_key(None, str(state))
    path = state / registries.KEY_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert registries.load_key(None, str(state)) == key          # read back, not remade
    assert path.read_bytes().strip() == key


def test_a_key_file_written_first_by_another_process_wins(tmp_path: Path) -> None:
    other = registries.load_key(None, str(tmp_path / "a"))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / registries.KEY_FILE).write_bytes(other + b"\n")
    assert registries.load_key(None, str(tmp_path / "b")) == other


def test_a_configured_secret_gives_the_same_key_everywhere_and_no_file(tmp_path: Path) -> None:
    a = registries.load_key("my deployment secret", str(tmp_path))
    assert a == registries.derive_key("my deployment secret")
    assert a != registries.derive_key("another secret")
    assert not (tmp_path / registries.KEY_FILE).exists()
    # two processes configured alike decrypt each other's passwords
    token = registries.PasswordCipher(a).encrypt("pw")
    assert registries.PasswordCipher(registries.load_key("my deployment secret",
                                                         "/nonexistent")).decrypt(token) == "pw"


def test_passwords_are_stored_as_tokens_and_come_back() -> None:
    cipher = registries.PasswordCipher(registries.derive_key("k"))
    token = cipher.encrypt("s3cret")
    assert "s3cret" not in token and token.startswith("gAAAA")
    assert cipher.encrypt("s3cret") != token                      # random IV each time
    assert cipher.decrypt(token) == "s3cret"


def test_a_password_saved_under_another_key_is_a_clear_error() -> None:
    token = registries.PasswordCipher(registries.derive_key("old")).encrypt("pw")
    with pytest.raises(exc.Invalid) as err:
        registries.PasswordCipher(registries.derive_key("new")).decrypt(token)
    assert "auth_encryption_key" in err.value.msg and "registry-update" in err.value.msg
    with pytest.raises(exc.Invalid):
        registries.PasswordCipher(registries.derive_key("new")).decrypt("not a token")


@pytest.mark.parametrize("secret", ["my deployment secret", "", "ünïcode ✓", "x" * 200])
def test_the_derived_key_is_cryptographys_hkdf_sha256(secret: str) -> None:
    # Keys derived by earlier berth versions (cryptography's HKDF) must still decrypt.
    import base64

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    expected = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                    info=b"berth registry passwords").derive(secret.encode())
    assert registries.derive_key(secret) == base64.urlsafe_b64encode(expected)
