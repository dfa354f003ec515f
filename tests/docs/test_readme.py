"""The README stays an entry point: at most 250 lines, with a map that links every page
of docs/, and no relative link in it or in the pages that leads nowhere."""

from __future__ import annotations

import re
from pathlib import Path

from docs.guide import DOCS

ROOT = DOCS.parent
README = ROOT / "README.md"
MAX_LINES = 250
#: A markdown link's target: not a URL, an anchor alone or a mail address.
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_targets(text: str) -> list[str]:
    out = []
    for target in _LINK.findall(text):
        path = target.split("#", 1)[0]
        if path and ":" not in path:
            out.append(path)
    return out


def test_the_readme_is_at_most_250_lines() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= MAX_LINES, (f"README.md has {lines} lines (at most {MAX_LINES}): move "
                                f"what is not set-up, the tour or the map into docs/")


def test_the_readme_map_links_every_page_of_docs() -> None:
    section = README.read_text().partition("\n## Documentation\n")[2].partition("\n## ")[0]
    linked = {Path(t).name for t in _relative_targets(section) if t.startswith("docs/")}
    pages = {path.name for path in DOCS.glob("*.md")}
    assert len(pages) >= 15
    assert sorted(pages - linked) == [], "pages missing from the README's Documentation map"
    assert sorted(linked - pages) == [], "the map links pages that do not exist"


def test_every_relative_link_of_the_readme_and_the_pages_resolves() -> None:
    broken = []
    for path in [README, *sorted(DOCS.glob("*.md"))]:
        for target in _relative_targets(path.read_text()):
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_check_sees_a_broken_link() -> None:
    assert _relative_targets("[a](docs/x.md#y) [b](https://e.org/z) [c](#top)") == ["docs/x.md"]
