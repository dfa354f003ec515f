"""The Docker implementation of :class:`berth.runtime.base.Runtime`.

This package is the only place in berth that imports the ``docker`` SDK. It drives the
engine through the SDK's low-level ``APIClient`` and converts every answer to the
dataclasses of ``berth.runtime.base``; every engine failure leaves it as a
``RuntimeDriverError`` subclass (see ``errors.py``).
"""

from berth.runtime.docker.driver import DockerRuntime
from berth.runtime.docker.events import EventStream

__all__ = ["DockerRuntime", "EventStream"]
