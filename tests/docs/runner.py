"""Run one page of the guide (``guide.parse``) in a shell of its own (``shell.Shell``).

A test gives each page *substitutions*: literal pairs (old, new) applied to every
command, file and shown output of the page, so that the guide can say
``127.0.0.1:9517`` and ``/var/lib/berth`` while the test, which shares its machine with
other tests, listens on a free port and keeps its state in a temporary directory.
``file_substitutions`` apply to one file block only (two nodes' files that say the same
``unix:///var/run/docker.sock`` reach two different engines in the test). ``env``
adds to the shell's environment: oslo.config reads ``OS_<GROUP>__<OPTION>`` variables
over the files, which is how a test sets what a page need not show (an address pool
of its own, no sweep of other daemons' veths).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from docs.guide import DOCS, Command, FileBlock, output_matches, parse
from docs.shell import Shell

Subs = Sequence[tuple[str, str]]
VENV_BIN = str(Path(sys.executable).parent)


def _apply(text: str, subs: Subs) -> str:
    for old, new in subs:
        text = text.replace(old, new)
    return text


def run_page(name: str, workdir: Path, subs: Subs = (),
             file_substitutions: dict[str, Subs] | None = None,
             env: dict[str, str] | None = None, timeout: float = 240) -> float:
    """Run every step of ``docs/<name>`` in order; AssertionError at the first command
    that exits non-zero or whose output differs from the page's. Returns the seconds
    the page took."""
    page = parse(DOCS / name)
    assert page.steps, f"{name} has nothing to run"
    shell_env = dict(os.environ, PATH=f"{VENV_BIN}:{os.environ.get('PATH', '')}",
                     PYTHONUNBUFFERED="1", **(env or {}))
    for var in ("OS_AUTH_TYPE", "OS_ENDPOINT", "OS_TOKEN", "OS_AUTH_URL", "OS_CLOUD"):
        shell_env.pop(var, None)   # the page sets what it needs, nothing leaks in
    began = time.monotonic()
    shell = Shell(workdir, shell_env)
    try:
        for step in page.steps:
            if isinstance(step, FileBlock):
                content = _apply(_apply(step.content, (file_substitutions or {}).get(
                    step.path, ())), subs)
                target = workdir / _apply(step.path, subs)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
                continue
            _run(shell, step, name, subs, timeout)
    finally:
        shell.close()
    return time.monotonic() - began


def _run(shell: Shell, step: Command, name: str, subs: Subs, timeout: float) -> None:
    command = _apply(step.text, subs)
    status, output = shell.run(command, timeout)
    where = f"{name}:{step.line}: `{step.text}`"
    shown = "\n".join(output[-60:])
    assert status == 0, f"{where} exited {status}:\n{shown}"
    if step.expected is not None:
        expected = tuple(_apply(line, subs) for line in step.expected)
        assert output_matches(expected, output), (
            f"{where} printed\n{shown}\n--- where the guide shows ---\n"
            + "\n".join(expected))
