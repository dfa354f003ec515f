"""A MariaDB server of a test's own (Debian's ``mariadbd``, its own data directory,
socket and port on loopback), so that a test may stop and start it, or kill it, without
touching the machine's MariaDB that other services (Cinder, Neutron) and tests use."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from support.ports import free_port


class PrivateMariaDB:
    def __init__(self) -> None:
        if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
            raise RuntimeError("mariadbd is not installed: apt-get install mariadb-server")
        self.root = Path(tempfile.mkdtemp(prefix="berth-mariadb-"))
        self.datadir, self.socket = self.root / "data", self.root / "mysqld.sock"
        self.port = free_port()
        self.log = self.root / "mariadbd.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mysql+pymysql://root@127.0.0.1:{self.port}/berth?charset=utf8mb4"

    def install(self) -> PrivateMariaDB:
        shutil.chown(self.root, "mysql", "mysql")
        done = subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={self.datadir}",
             "--user=mysql", "--auth-root-authentication-method=normal",
             "--skip-test-db"], capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {done.stderr[-2000:]}")
        self.start()
        self._sql("CREATE DATABASE berth CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        return self

    def start(self, timeout: float = 60) -> None:
        log = open(self.log, "ab")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={self.datadir}",
             f"--socket={self.socket}", f"--port={self.port}", "--bind-address=127.0.0.1",
             "--user=mysql", f"--pid-file={self.root / 'mysqld.pid'}",
             "--skip-log-bin", "--innodb-buffer-pool-size=32M"],
            stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited {self.proc.returncode}: "
                                   f"{self.log.read_text()[-2000:]}")
            try:
                self._sql("SELECT 1")
                return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.2)
        raise RuntimeError(f"mariadbd did not answer within {timeout} s")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, sig)
        self.proc.wait(timeout=120)

    def outage(self, seconds: float) -> None:
        """Killed at once (SIGKILL: the clients are in the middle of their writes),
        started again ``seconds`` later."""
        self.stop(signal.SIGKILL)
        try:
            time.sleep(seconds)
        finally:
            self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def _sql(self, sql: str) -> None:
        import pymysql

        conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root",
                               autocommit=True, connect_timeout=2)
        try:
            conn.cursor().execute(sql)
        finally:
            conn.close()
