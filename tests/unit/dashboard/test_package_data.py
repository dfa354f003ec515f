"""The console's bundle ships in the wheel: every file under berth/dashboard/static
matches a package-data pattern of pyproject.toml (a bundle that grows a file kind or a
folder the patterns miss would install a console without it)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "berth" / "dashboard"


def test_every_bundle_file_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["berth.dashboard"]
    files = [p.relative_to(STATIC).as_posix() for p in (STATIC / "static").rglob("*")
             if p.is_file()]
    assert any(f == "static/index.html" for f in files)
    missed = [f for f in files
              if not any(fnmatch.fnmatch(f, pat) and f.count("/") == pat.count("/")
                         for pat in patterns)]
    assert not missed, f"not in pyproject.toml's package-data: {missed}"
