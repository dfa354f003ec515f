"""The mount helpers every volume driver uses (pure parts: mountinfo, the format rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.common import exceptions as exc
from berth.volume import mounts


def test_mountinfo_paths_are_unescaped(tmp_path: Path) -> None:
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "90 22 7:0 / /var/lib/berth/mnt/a\\040b rw,relatime - ext4 /dev/loop0 rw\n")
    assert mounts.mount_points(str(mountinfo)) == {"/", "/var/lib/berth/mnt/a b"}


def test_only_a_device_without_a_filesystem_is_formatted(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    calls: list[str] = []
    outcomes = iter([exc.VolumeError(reason="wrong fs type"), None])

    def mount(device: str, target: str, fstype: str, options: tuple[str, ...] = ()) -> None:
        calls.append("mount")
        outcome = next(outcomes)
        if outcome is not None:
            raise outcome
    monkeypatch.setattr(mounts, "mount", mount)
    monkeypatch.setattr(mounts, "make_filesystem", lambda d, f: calls.append("mkfs"))
    monkeypatch.setattr(mounts, "filesystem_type", lambda d: None)
    assert mounts.mount_or_format("/dev/x", "/mnt/x", "ext4") is True
    assert calls == ["mount", "mkfs", "mount"]

    calls.clear()
    outcomes = iter([exc.VolumeError(reason="wrong fs type")])
    monkeypatch.setattr(mounts, "filesystem_type", lambda d: "xfs")
    with pytest.raises(exc.VolumeError, match="holds a xfs filesystem.*fstype = xfs"):
        mounts.mount_or_format("/dev/x", "/mnt/x", "ext4")
    assert calls == ["mount"]
