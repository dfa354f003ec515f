"""The docker capsule driver ([DEFAULT]capsule_driver = docker, the default): each
capsule is a sandbox Docker container holding the network and IPC namespaces that
its members, Docker containers too, join.

``engine.DockerCapsules`` is this driver's ``CapsuleEngine`` (``berth.compute.deps``);
``create`` is its half of a capsule's create (the sandbox, the init containers in
order, the containers). Its members are Docker containers: the container flows (PLEG,
sync, logs, consoles) reach them as any other.
"""
