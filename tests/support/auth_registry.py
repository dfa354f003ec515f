"""A registry that asks for a password (htpasswd, basic auth over plain HTTP on
127.0.0.1), serving the local test registry's images: it reads the storage of
``ci-services.sh``'s registry in read-only mode (no push, no upload purging), so
nothing of that registry changes. For the tests of pulls with credentials."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import bcrypt
import httpx

from support.ports import free_port

STORAGE = Path("/var/tmp/berth-ci/registry/data")


@contextmanager
def auth_registry(workdir: Path, user: str, password: str) -> Iterator[str]:
    """Run the registry; yield its address ``127.0.0.1:<port>``."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()
    (workdir / "htpasswd").write_text(f"{user}:{hashed}\n")
    (workdir / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n"
        f"    rootdirectory: {STORAGE}\n  maintenance:\n    uploadpurging:\n"
        "      enabled: false\n    readonly:\n      enabled: true\n"
        f"auth:\n  htpasswd:\n    realm: berth-test\n    path: {workdir / 'htpasswd'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n")
    log = (workdir / "registry.log").open("w")
    proc = subprocess.Popen(["docker-registry", "serve", str(workdir / "config.yml")],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code == 401:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the auth registry did not start: "
                                     f"{(workdir / 'registry.log').read_text()[-1000:]}")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
