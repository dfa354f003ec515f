"""Entry points, one per process, containing only wiring: ``berth`` (serve, db),
``berth-api``, ``berth-compute``, ``berth-wsproxy``, ``berth-status`` (upgrade check).
``helptext`` holds what their ``--help`` says."""
