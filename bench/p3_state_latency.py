"""P3: a running container is killed in Docker, behind berth's back; how long until the
API shows it Stopped. Polls the list endpoint, which reads only the database (so the
figure is the agent's event path, not a refresh triggered by the GET).

The clock starts when the kill is sent and the API is polled from then on, beside the
kill: the Docker SDK's ``kill()`` (an inspect and the kill) returns only after the
engine has already reported the container dead (here: ~0.11 s against ~0.05 s for the
``die`` event), so timing from its return measured the engine's answer, not berth.
Baseline: when Docker's own event stream reports the ``die`` (the earliest anyone could
know), and Zun's 60 s sync_container_state interval, its only way to notice, in the
goal column. ``lag`` in the detail is berth's share: the API's Stopped after the event.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from bench.common import Berth, Result, docker_client, name, percentile, wait


class DieEvents:
    """Docker's ``die`` events of the run, with when each arrived (perf_counter)."""

    def __init__(self, client: Any) -> None:
        self.seen: dict[str, float] = {}
        self._stream = client.events(decode=True, filters={"event": ["die"]})
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        with contextlib.suppress(Exception):    # the stream closed at the run's end
            for event in self._stream:
                self.seen[event["id"]] = time.perf_counter()

    def close(self) -> None:
        self._stream.close()


def p3(berth: Berth, runs: int = 30) -> Result:
    client = docker_client()
    events = DieEvents(client)
    shown: list[float] = []
    died: list[float] = []
    try:
        for _ in range(runs):
            u = berth.run(name("p3"))
            wait(lambda u=u: berth.list_status().get(u) == "Running", 60)
            engine = client.containers.get(f"zun-{u}")
            t0 = time.perf_counter()
            kill = threading.Thread(target=engine.kill)
            kill.start()
            wait(lambda u=u: berth.list_status().get(u) == "Stopped", 120, 0.005)
            shown.append(time.perf_counter() - t0)
            kill.join()
            wait(lambda i=engine.id: i in events.seen, 10, 0.001)
            died.append(events.seen[engine.id] - t0)
            berth.delete(u)
    finally:
        events.close()
        client.close()
        berth.delete_all()
    p99, died_p99 = percentile(shown, 99), percentile(died, 99)
    lag = [s - d for s, d in zip(shown, died, strict=True)]
    return Result("P3", "docker kill → API shows Stopped, p99 of 30 (baseline: Docker's "
              "die event)", p99, died_p99, "s", "p99 ≤ 0.1 s (Zun: 60 s)", p99 <= 0.1,
                  p99 / died_p99, {
                      "p50": percentile(shown, 50), "p99": p99,
                      "die_event_p50": percentile(died, 50), "die_event_p99": died_p99,
                      "lag_p50": percentile(lag, 50), "lag_p99": percentile(lag, 99),
                      "all": shown, "die_events": died})
