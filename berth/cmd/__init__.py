"""Entry points, one per process, containing only wiring: ``berth`` (serve, db),
``berth-api``, ``berth-compute``."""
