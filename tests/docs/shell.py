"""One bash process per page, fed the page's commands one by one, so that what a
command leaves (variables, the working directory, background processes) is there for
the next, as in the reader's terminal. stderr is merged into stdout, as a terminal
shows it. ``close()`` ends the page's process group: whatever a failed page left
running goes with it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import uuid
from pathlib import Path


class CommandTimeout(AssertionError):
    pass


class Shell:
    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.marker = f"__docs_rc_{uuid.uuid4().hex}__"
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True, bufsize=1,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, name="docs-shell-reader", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def run(self, command: str, timeout: float) -> tuple[int, list[str]]:
        """Exit status and output lines of ``command``. ``timeout`` bounds a command
        that never returns (a broken page), so that the suite fails instead of hanging."""
        assert self.proc.stdin is not None
        # In braces (this shell, not a subshell) with stdin from /dev/null: a command
        # that reads its input must not eat the commands that follow.
        self.proc.stdin.write(f"{{ {command}\n}} </dev/null\nprintf '\\n{self.marker} %s\\n' \"$?\"\n")
        self.proc.stdin.flush()
        out: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise CommandTimeout(f"no end after {timeout} s; output so far:\n"
                                     + "\n".join(out[-50:])) from None
            if line is None:
                raise AssertionError("the shell exited; output:\n" + "\n".join(out[-50:]))
            if line.startswith(self.marker):
                while out and not out[-1].strip():
                    out.pop()
                return int(line.split()[1]), out
            out.append(line)

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
