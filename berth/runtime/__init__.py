"""The container runtime: the :class:`~berth.runtime.base.Runtime` interface, the plain
values that cross it (``base.py``), and its implementations: Docker (``docker/``: every
container, and capsules with the docker driver), the pod runtime of the cri capsule driver on
containerd's CRI plugin (``cri/``), and the benchmarks' in-memory engine
(``simulated/``, ``[compute]runtime_driver = simulated``)."""
