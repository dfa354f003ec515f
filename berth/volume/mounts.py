"""Mounts on this node, for every volume driver: what is mounted
(``/proc/self/mountinfo``), and ``mount``, ``umount``, ``blkid`` and ``mkfs`` run as
util-linux and e2fsprogs commands (the agent runs as root, as it must to talk to
Docker and plug networks)."""

from __future__ import annotations

import logging
import os
import subprocess

from berth.common import exceptions as exc

LOG = logging.getLogger(__name__)

_MOUNTINFO = "/proc/self/mountinfo"


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as ``\\ooo``."""
    if "\\" not in field:
        return field
    return field.encode("latin-1", "backslashreplace").decode("unicode_escape")


def mount_points(mountinfo: str = _MOUNTINFO) -> set[str]:
    """Every mount point of this mount namespace."""
    with open(mountinfo, encoding="utf-8", errors="surrogateescape") as f:
        return {_unescape(line.split(" ", 5)[4]) for line in f if line.count(" ") >= 5}


def is_mounted(path: str) -> bool:
    return os.path.realpath(path) in mount_points()


def _run(argv: list[str], what: str, timeout: float = 120.0) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except FileNotFoundError as err:
        raise exc.VolumeError(reason=f"{what}: {argv[0]} is not installed on this node "
                                     f"(install util-linux and e2fsprogs)") from err
    except subprocess.TimeoutExpired as err:
        raise exc.VolumeError(reason=f"{what}: {argv[0]} did not finish in "
                                     f"{timeout:g} s") from err
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip() or f"exit status {done.returncode}"
        raise exc.VolumeError(reason=f"{what}: {detail}")


def mount(source: str, target: str, fstype: str | None = None,
          options: tuple[str, ...] = ()) -> None:
    argv = ["mount"]
    if fstype:
        argv += ["-t", fstype]
    if options:
        argv += ["-o", ",".join(options)]
    _run(argv + [source, target], f"could not mount {source} on {target}")


def umount(target: str) -> None:
    """Unmount ``target``; nothing when it is not mounted. A busy mount point (a
    process still uses it) is detached lazily rather than left behind."""
    if not is_mounted(target):
        return
    try:
        _run(["umount", target], f"could not unmount {target}")
    except exc.VolumeError as err:
        LOG.warning("%s; detaching it lazily", err.msg)
        _run(["umount", "-l", target], f"could not unmount {target}")


def make_filesystem(device: str, fstype: str) -> None:
    """A new, empty filesystem of ``fstype`` on ``device`` (a block device or a file)."""
    argv = [f"mkfs.{fstype}"]
    if fstype.startswith("ext"):
        argv += ["-F", "-q"]
    _run(argv + [device], f"could not make a {fstype} filesystem on {device}")


def filesystem_type(device: str) -> str | None:
    """The filesystem (or other content signature) ``blkid`` finds on ``device``;
    None when it finds none (exit status 2: a new, empty volume)."""
    try:
        done = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", device],
                              capture_output=True, text=True, check=False, timeout=120)
    except FileNotFoundError as err:
        raise exc.VolumeError(reason="blkid is not installed on this node (install "
                                     "util-linux)") from err
    if done.returncode == 2:
        return None
    if done.returncode:
        raise exc.VolumeError(reason=f"could not probe {device} for a filesystem: "
                                     f"{(done.stderr or done.stdout).strip()}")
    return done.stdout.strip() or None


def mount_or_format(device: str, target: str, fstype: str,
                    options: tuple[str, ...] = ()) -> bool:
    """Mount ``device`` on ``target``; when that fails and ``device`` holds no
    filesystem at all (a new volume), make one of ``fstype`` and mount again. A device
    with a filesystem that does not mount is never formatted (its data stays). True
    when a filesystem was made."""
    try:
        mount(device, target, fstype, options)
        return False
    except exc.VolumeError as first:
        found = filesystem_type(device)
        if found is not None:
            raise exc.VolumeError(reason=(
                f"{first.msg}; {device} holds a {found} filesystem, so berth does not "
                f"format it: set [volume]fstype = {found}, or repair it")) from first
    make_filesystem(device, fstype)
    mount(device, target, fstype, options)
    return True
