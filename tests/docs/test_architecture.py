"""docs/architecture.md names the modules of each process and flow: every file or
directory it names exists (a module moved or renamed fails here until the page
follows), and the README's Layout table names every package of berth."""

from __future__ import annotations

import re

from docs.guide import DOCS

ROOT = DOCS.parent
BERTH = ROOT / "berth"
#: A path in backticks: ``berth/api/``, ``compute/flows/create.py``, ``sandbox.py``.
_PATH = re.compile(r"`([a-z_][a-z0-9_/.]*(?:\.py|/))`")


def _exists(name: str) -> bool:
    if (ROOT / name).exists() or (BERTH / name).exists():
        return True
    tail = name.rstrip("/")     # named after its package in the same row: sandbox.py
    return any(str(p).endswith("/" + tail) for p in BERTH.rglob(tail.rsplit("/", 1)[-1]))


def test_every_path_the_architecture_page_names_exists() -> None:
    named = set(_PATH.findall((DOCS / "architecture.md").read_text()))
    assert len(named) > 50
    assert sorted(n for n in named if not _exists(n)) == []


def test_the_check_sees_a_path_that_is_gone() -> None:
    assert _exists("compute/flows/create.py") and _exists("berth/api/")
    assert not _exists("compute/manager_endpoints.py")


def test_the_readme_layout_names_every_package() -> None:
    text = (ROOT / "README.md").read_text()
    layout = text.partition("\n## Layout\n")[2].partition("\n## ")[0]
    named = set(re.findall(r"^\| `(berth/[a-z_/]+)`", layout, re.MULTILINE))
    packages = {f"berth/{p.name}" for p in BERTH.iterdir()
                if p.is_dir() and any(p.glob("*.py"))}
    assert len(packages) >= 19
    assert sorted(packages - named) == []
