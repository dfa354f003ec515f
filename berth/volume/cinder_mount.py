"""Mounting a Cinder volume's device (or, for file-based backends such as NFS, its
file) on this node: util-linux's ``mount``/``umount``, e2fsprogs' ``mkfs``, util-linux's
``blkid``, and ``/proc/self/mountinfo`` for what is mounted. The agent runs as root.

(The cinder driver's own helper, beside the local driver's ``mounts``; the two are
meant to become one.)
"""

from __future__ import annotations

import logging
import os
import subprocess

from berth.common import exceptions as exc

LOG = logging.getLogger(__name__)

MOUNTINFO = "/proc/self/mountinfo"
COMMAND_TIMEOUT = 120.0


def _decoded(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash come as ``\\ooo``."""
    if "\\" not in field:
        return field
    return field.encode("latin-1", "backslashreplace").decode("unicode_escape")


def mount_targets(mountinfo: str = MOUNTINFO) -> set[str]:
    """Every mount point of this mount namespace."""
    with open(mountinfo, encoding="utf-8", errors="surrogateescape") as f:
        return {_decoded(line.split(" ")[4]) for line in f if line.count(" ") >= 5}


def is_mounted(path: str) -> bool:
    return os.path.realpath(path) in mount_targets()


def _run(argv: list[str], doing: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False,
                              timeout=COMMAND_TIMEOUT)
    except FileNotFoundError as err:
        raise exc.VolumeError(reason=f"{doing}: {argv[0]} is missing on this node "
                                     f"(install util-linux and e2fsprogs)") from err
    except subprocess.TimeoutExpired as err:
        raise exc.VolumeError(reason=f"{doing}: {argv[0]} did not finish within "
                                     f"{COMMAND_TIMEOUT:g} s") from err
    if done.returncode:
        why = (done.stderr or done.stdout).strip() or f"exit status {done.returncode}"
        raise exc.VolumeError(reason=f"{doing}: {why}")
    return done.stdout


def filesystem_type(device: str) -> str | None:
    """The filesystem (or other content signature) ``blkid`` finds on ``device``;
    None when it finds none (exit status 2: a new, empty volume)."""
    done = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", device],
                          capture_output=True, text=True, check=False,
                          timeout=COMMAND_TIMEOUT)
    if done.returncode == 2:
        return None
    if done.returncode:
        raise exc.VolumeError(reason=f"could not probe {device} for a filesystem: "
                                     f"{(done.stderr or done.stdout).strip()}")
    return done.stdout.strip() or None


def mount(source: str, target: str, fstype: str) -> None:
    _run(["mount", "-t", fstype, source, target], f"could not mount {source} on {target}")


def umount(target: str) -> None:
    """Unmount ``target`` when it is mounted; a mount still in use (a container kept
    it open) is detached lazily rather than left behind."""
    if not is_mounted(target):
        return
    try:
        _run(["umount", target], f"could not unmount {target}")
    except exc.VolumeError as err:
        LOG.warning("%s; unmounting it lazily", err)
        _run(["umount", "-l", target], f"could not unmount {target} even lazily")


def make_filesystem(device: str, fstype: str) -> None:
    argv = [f"mkfs.{fstype}"]
    if fstype.startswith("ext"):
        argv += ["-F", "-q"]
    _run([*argv, device], f"could not make a {fstype} filesystem on {device}")


def mount_or_format(device: str, target: str, fstype: str) -> bool:
    """Mount ``device`` on ``target``; when that fails and ``device`` holds no
    filesystem at all, make one of ``fstype`` and mount again. A device that has a
    filesystem which does not mount is never formatted (its data stays). True when a
    filesystem was made."""
    try:
        mount(device, target, fstype)
        return False
    except exc.VolumeError as first:
        found = filesystem_type(device)
        if found is not None:
            raise exc.VolumeError(reason=(
                f"{first.msg}; {device} holds a {found} filesystem, so berth does not "
                f"format it: set [volume]fstype = {found}, or repair it")) from first
    make_filesystem(device, fstype)
    mount(device, target, fstype)
    return True
