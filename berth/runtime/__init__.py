"""The container runtime: the :class:`~berth.runtime.base.Runtime` interface, the plain
values that cross it (``base.py``), and its Docker implementation (``docker/``)."""
