"""The sandbox image: the container whose namespaces a capsule's members join.

Zun's default, ``kubernetes/pause``, lives on Docker Hub. berth's default,
``berth/sandbox:1``, is made on the node the first time a capsule needs it, from the
node's static busybox (Debian's ``busybox-static``): a file system of one binary whose
command waits for SIGTERM, so ``docker stop`` ends it at once. Any other
``[DEFAULT]sandbox_image`` is pulled per ``sandbox_image_pull_policy``.
"""

from __future__ import annotations

import io
import logging
import struct
from pathlib import Path

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.conf.default import SANDBOX_IMAGE
from berth.image.reference import normalize_pull_policy, parse_image, pull_decision
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

DEFAULT_IMAGE = SANDBOX_IMAGE
BUSYBOX = Path("/bin/busybox")
#: PID 1 ignores signals it has no handler for: the trap gives it one.
COMMAND = ("/bin/busybox", "sh", "-c",
           "trap 'exit 0' TERM INT; while :; do /bin/busybox sleep 3600 & wait $!; done")
_PT_INTERP = 3


def ensure_image(deps: AgentDeps, ref: str, pull_policy: str) -> str:
    """Make the sandbox image ``ref`` present; return the reference to run."""
    image = parse_image(ref)
    try:
        deps.runtime.inspect_image(image.ref)
        present = True
    except rt.RuntimeImageNotFound:
        present = False
    if ref == DEFAULT_IMAGE:
        if not present:
            make_default_image(deps.runtime, image.ref)
        return image.ref
    policy = normalize_pull_policy(pull_policy)
    decision = pull_decision(policy, present)
    if decision == "use_local":
        return image.ref
    if decision == "fail":
        raise exc.ImageNotFound(
            f"Sandbox image {image.ref} is not present on host {deps.host} and "
            f"[DEFAULT]sandbox_image_pull_policy is never: pull it there first.")
    try:
        deps.runtime.pull_image(image)
    except rt.RuntimeDriverError as err:
        if present:
            LOG.warning("pull of sandbox image %s failed (%s); using the local copy",
                        image.ref, err.msg)
            return image.ref
        raise exc.ImageNotFound(
            f"Sandbox image {image.ref} could not be pulled: {err.msg}. Pull it on host "
            f"{deps.host}, or set [DEFAULT]sandbox_image to an image it has.") from err
    return image.ref


def make_default_image(runtime: rt.Runtime, ref: str, busybox: Path = BUSYBOX) -> None:
    """Import berth's sandbox image from the node's static busybox."""
    if not busybox.is_file() or not is_static_elf(busybox.read_bytes()):
        raise exc.ImageNotFound(
            f"berth makes its sandbox image {ref} from a static busybox at {busybox}, and "
            f"there is none: install Debian's busybox-static on this node, or set "
            f"[DEFAULT]sandbox_image to an image whose command runs until SIGTERM.")
    LOG.info("making the sandbox image %s from %s", ref, busybox)
    runtime.import_image(ref, rootfs_tar(busybox.read_bytes()), COMMAND,
                         {"berth.sandbox": "1"})


def rootfs_tar(busybox: bytes) -> bytes:
    """A file system holding ``/bin/busybox`` (pure). (tarfile is imported here: made
    once per node, the image does not need it in every agent's memory.)"""
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        directory = tarfile.TarInfo("bin")
        directory.type, directory.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(directory)
        binary = tarfile.TarInfo("bin/busybox")
        binary.size, binary.mode = len(busybox), 0o755
        tar.addfile(binary, io.BytesIO(busybox))
    return out.getvalue()


def is_static_elf(data: bytes) -> bool:
    """Whether ``data`` is a 64-bit little-endian ELF executable that asks for no
    program interpreter (no dynamic loader: it runs in an empty file system) (pure)."""
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        return False
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for index in range(phnum):
        offset = phoff + index * phentsize
        if offset + 4 > len(data):
            return False
        p_type, = struct.unpack_from("<I", data, offset)
        if p_type == _PT_INTERP:
            return False
    return True
