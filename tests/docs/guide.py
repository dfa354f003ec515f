"""Read the deployment guide's pages (docs/*.md) into the steps a test runs.

What a page may hold, and what becomes of it:

* a fenced block ```` ```console ```` is run: each line starting with ``$ `` is a
  command (a line ending in ``\\`` continues it; a here-document runs to its
  terminator); the lines after a command, up to the next ``$ ``, are the output the
  guide shows. ``...`` on a line of its own stands for any number of lines, and
  inside a line for any text; a command with no lines after it shows no output, and
  its output is not compared.
* a fenced block whose info string names a file (```` ```ini file=berth.conf ````) is
  written to that file, relative to the page's working directory, when the run
  reaches it (the reader writes it with an editor).
* a block right after ``<!-- not run: WHY -->`` is neither run nor written; the test
  keeps the list of such blocks, so none is added silently.
* any other ``sh``, ``bash`` or ``shell`` block is an error: commands that no test
  runs go stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHELL_LANGS = frozenset({"sh", "bash", "shell", "zsh"})
_FENCE = re.compile(r"^(`{3,})(.*)$")
_NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.+?)\s*-->\s*$")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")


@dataclass(frozen=True)
class Command:
    text: str
    expected: tuple[str, ...] | None   # None: the guide shows no output
    line: int


@dataclass(frozen=True)
class FileBlock:
    path: str
    content: str
    line: int


@dataclass(frozen=True)
class NotRun:
    info: str
    why: str
    line: int


@dataclass
class Page:
    path: Path
    steps: list[Command | FileBlock] = field(default_factory=list)
    not_run: list[NotRun] = field(default_factory=list)
    blocks: list[tuple[str, str, int]] = field(default_factory=list)  # (info, body, line)


def parse(path: Path) -> Page:
    page = Page(path)
    lines = path.read_text().splitlines()
    i, pending_not_run = 0, None
    while i < len(lines):
        match = _NOT_RUN.match(lines[i])
        if match:
            pending_not_run = match.group(1)
            i += 1
            continue
        fence = _FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                pending_not_run = None
            i += 1
            continue
        ticks, info, start = fence.group(1), fence.group(2).strip(), i + 1
        j = start
        while j < len(lines) and lines[j].rstrip() != ticks:
            j += 1
        body = lines[start:j]
        page.blocks.append((info, "\n".join(body), start))
        words = info.split()
        lang = words[0] if words else ""
        target = next((w[5:] for w in words[1:] if w.startswith("file=")), None)
        if pending_not_run is not None:
            page.not_run.append(NotRun(info, pending_not_run, start))
        elif lang == "console":
            page.steps.extend(_commands(body, start + 1, path))
        elif target:
            page.steps.append(FileBlock(target, "\n".join(body) + "\n", start))
        elif lang in SHELL_LANGS:
            raise ValueError(f"{path.name}:{start}: a ```{lang} block is neither run nor "
                             f"marked '<!-- not run: WHY -->': make it ```console")
        pending_not_run = None
        i = j + 1
    return page


def _commands(body: list[str], first_line: int, path: Path) -> list[Command]:
    out: list[Command] = []
    k = 0
    while k < len(body):
        line = body[k]
        if not line.startswith("$ "):
            raise ValueError(f"{path.name}:{first_line + k}: output before any command")
        at = first_line + k
        text = [line[2:]]
        k += 1
        while text[-1].endswith("\\") and k < len(body):
            text.append(body[k])
            k += 1
        heredoc = _HEREDOC.search("\n".join(text))
        if heredoc:
            end = heredoc.group(1)
            while k < len(body) and body[k].strip() != end:
                text.append(body[k])
                k += 1
            text.append(body[k] if k < len(body) else end)
            k += 1
        shown: list[str] = []
        while k < len(body) and not body[k].startswith("$ "):
            shown.append(body[k])
            k += 1
        out.append(Command("\n".join(text), tuple(shown) if shown else None, at))
    return out


def output_matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    """``actual`` lines against the guide's, ``...`` as in the module docstring."""
    want = [e.rstrip() for e in expected]
    got = [a.rstrip() for a in actual]
    return _match(want, got)


def _match(want: list[str], got: list[str]) -> bool:
    if not want:
        return not got
    head = want[0]
    if head.strip() == "...":
        return any(_match(want[1:], got[n:]) for n in range(len(got) + 1))
    if not got:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("..."))
    return re.fullmatch(pattern, got[0]) is not None and _match(want[1:], got[1:])
