"""CRI runtimes: the pod runtime a capsule runs on with ``capsule_driver = cri``."""
