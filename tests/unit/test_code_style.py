"""The whole tree passes the pinned ruff (README, "Checks"), so that CI refuses a change
that does not. mypy stays a developer's check: berth's dependencies are not pinned, and a
new release's type hints could turn CI red without any change here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing_in_the_tree() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"ruff check found problems:\n{done.stdout}{done.stderr}"


def test_no_two_test_modules_outside_a_package_share_a_name() -> None:
    """pytest imports a test module outside a package by its file name alone: a second
    one of that name, anywhere in the tree, stops the whole run at collection."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if (path.parent / "__init__.py").exists():
            continue
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen.setdefault(path.name, path)
    assert clashes == [], "test modules that share a name: " + "; ".join(clashes)
