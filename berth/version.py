"""berth's version: the installed distribution's (pyproject.toml's ``version``), the one
source of truth; nothing else in the tree spells it."""

from __future__ import annotations

from importlib import metadata


def version_string() -> str:
    try:
        return metadata.version("berth")
    except metadata.PackageNotFoundError:  # run from a source tree never installed
        return "0+unknown (berth is not installed: pip install -e .)"
