"""DockerRuntime operations: logs, top, stats, archives, commit.

A mixin of :class:`~berth.runtime.docker.driver.DockerRuntime`: it uses
``self._api()`` (the shared low-level APIClient) inside ``translate_errors()``.
"""

from __future__ import annotations


class InspectionMixin:
    pass
