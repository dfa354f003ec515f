"""What berth tells a monitoring system: Prometheus metrics and health probes.

- :mod:`.catalog`: every metric berth exports, declared once (prometheus-client's
  default registry), and the small helpers that record them at the seams (API
  middleware, flows, PLEG, periodic tasks, RPC client).
- :mod:`.queues`: queue depths, read from their owners when scraped.
- :mod:`.health`: ``/readyz``'s checks (database, RPC transport, Docker), bounded in
  time and cached for a moment so that probes stay cheap.
- :mod:`.http`: the agent's own small HTTP listener (``[compute]metrics_port``) for
  ``/metrics``, ``/healthz`` and ``/readyz``; the API serves them on its own port
  (``berth.api.routers.health``).

Nothing here imports the API or the Docker SDK: ``berth-compute`` loads it.
"""
