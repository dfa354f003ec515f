"""The committed bundle (berth/dashboard/static) is what dashboard/ builds from its lock
file: a source change without a rebuild (scripts/build-dashboard.sh) fails here."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "dashboard"
COMMITTED = ROOT / "berth" / "dashboard" / "static"
#: Vite 7 needs at least this Node.js.
NODE_MIN = (20, 19)


def _node_version() -> tuple[int, ...] | None:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    return tuple(int(p) for p in out.stdout.strip().lstrip("v").split(".")[:2])


def _tree(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in root.rglob("*") if p.is_file()}


def test_committed_bundle_is_what_the_lock_file_builds(tmp_path: Path) -> None:
    version = _node_version()
    if version is None or version < NODE_MIN:
        pytest.skip(f"building the console needs Node.js {'.'.join(map(str, NODE_MIN))}+ "
                    f"and npm (found {version}); berth itself does not")
    work = tmp_path / "dashboard"
    shutil.copytree(SOURCE, work, ignore=shutil.ignore_patterns("node_modules"))
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    out = tmp_path / "built"
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "build-dashboard.sh")],
                          env=dict(os.environ, BERTH_DASHBOARD_OUT=str(out)),
                          capture_output=True, text=True, timeout=480, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    built, committed = _tree(out), _tree(COMMITTED)
    assert sorted(built) == sorted(committed), (
        "the bundle's files differ: run scripts/build-dashboard.sh and commit "
        "berth/dashboard/static")
    differ = [name for name in built if not filecmp.cmp(built[name], committed[name],
                                                        shallow=False)]
    assert not differ, f"{differ} differ: run scripts/build-dashboard.sh and commit the result"
