"""DockerRuntime operations: restart, pause, unpause, kill, update.

A mixin of :class:`~berth.runtime.docker.driver.DockerRuntime`: it uses
``self._api()`` (the shared low-level APIClient) inside ``translate_errors()``.
Renaming needs no engine call: the Docker name stays ``zun-<uuid>`` whatever the
container's name in berth is.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from berth.runtime.docker.errors import translate_errors

if TYPE_CHECKING:
    import docker

LOG = logging.getLogger(__name__)


class ActionsMixin:
    if TYPE_CHECKING:
        def _api(self) -> docker.APIClient: ...

    def restart(self, container_id: str, timeout: int | None = None) -> None:
        """``docker restart`` (``t`` = ``timeout``, the engine's 10 s when None)."""
        # The SDK adds ``timeout`` to its connection time-out: None is a TypeError, so
        # a reboot without ?timeout= never reached the engine. Leave it to the SDK's.
        kwargs = {} if timeout is None else {"timeout": timeout}
        with translate_errors():
            self._api().restart(container_id, **kwargs)

    def pause(self, container_id: str) -> None:
        """``docker pause``; RuntimeConflict when not running or already paused."""
        with translate_errors():
            self._api().pause(container_id)

    def unpause(self, container_id: str) -> None:
        """``docker unpause``; RuntimeConflict when not paused."""
        with translate_errors():
            self._api().unpause(container_id)

    def kill(self, container_id: str, signal: str | None = None) -> None:
        """``docker kill`` with ``signal`` (None: the engine's SIGKILL)."""
        with translate_errors():
            self._api().kill(container_id, signal=signal or None)

    def update(self, container_id: str, *, memory_mib: int | None = None,
               memory_swap_mib: int | None = None, cpu_shares: int | None = None) -> None:
        """``docker update`` of memory (``"<m>M"``), swap (-1 = unlimited) and CPU shares.

        Swap goes with memory in one call: Docker refuses a memory limit above the
        current swap limit, so sending both keeps a raise of memory from failing."""
        kwargs: dict[str, Any] = {}
        if memory_mib is not None:
            kwargs["mem_limit"] = f"{int(memory_mib)}M"
        if memory_swap_mib is not None:
            kwargs["memswap_limit"] = (-1 if memory_swap_mib < 0
                                       else f"{int(memory_swap_mib)}M")
        if cpu_shares is not None:
            kwargs["cpu_shares"] = int(cpu_shares)
        if not kwargs:
            return
        with translate_errors():
            answer = self._api().update_container(container_id, **kwargs)
        for warning in (answer or {}).get("Warnings") or ():
            LOG.warning("Docker warns about updating container %s: %s", container_id[:12],
                        warning)
        LOG.info("updated Docker container %s: %s", container_id[:12], kwargs)
