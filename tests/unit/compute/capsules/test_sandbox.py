"""berth's own sandbox image: made from a static ELF, in a one-file file system."""

from __future__ import annotations

import io
import struct
import tarfile
from pathlib import Path

import pytest

from berth.common.exceptions import ImageNotFound
from berth.compute.capsules import sandbox


def elf(with_interpreter: bool) -> bytes:
    """A minimal 64-bit little-endian ELF header with one program header."""
    header = bytearray(64 + 56)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x20, 64)          # e_phoff
    struct.pack_into("<HH", header, 0x36, 56, 1)      # e_phentsize, e_phnum
    struct.pack_into("<I", header, 64, 3 if with_interpreter else 1)
    return bytes(header)


def test_a_static_executable_is_told_from_a_dynamic_one() -> None:
    assert sandbox.is_static_elf(elf(False))
    assert not sandbox.is_static_elf(elf(True))
    assert not sandbox.is_static_elf(b"#!/bin/sh\n")


def test_the_file_system_holds_one_executable_busybox() -> None:
    with tarfile.open(fileobj=io.BytesIO(sandbox.rootfs_tar(b"binary")), mode="r") as tar:
        names = {m.name: m for m in tar.getmembers()}
        assert set(names) == {"bin", "bin/busybox"}
        assert names["bin/busybox"].mode == 0o755
        extracted = tar.extractfile("bin/busybox")
        assert extracted is not None and extracted.read() == b"binary"


def test_without_a_static_busybox_the_error_says_what_to_install(tmp_path: Path) -> None:
    fake = tmp_path / "busybox"
    fake.write_bytes(elf(True))
    with pytest.raises(ImageNotFound, match="busybox-static"):
        sandbox.make_default_image(None, "berth/sandbox:1", fake)  # type: ignore[arg-type]
