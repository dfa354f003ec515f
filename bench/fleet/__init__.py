"""The fleet benchmark (P15, ``python -m bench.fleet``): berth's control plane at scale.

Many ``berth-compute`` agents run in a few processes (``nodes.py``: each agent with
its own host name, RPC server, heartbeat, inventory, state sync and PLEG, as
``berth-compute`` builds it, on the simulated engine of ``[compute]runtime_driver =
simulated``), behind ``berth-api`` with its scheduler, over one RabbitMQ vhost and one
PostgreSQL database of the run's own (``services.py``). A client fires creates at the
API and counts the containers Running (``load.py``) as the fleet fills; the curve goes
to JSON and a PNG (``report.py``). ``run.py`` puts them together and checks the result:
every container Running on the node its row names, no node over its capacity, and the
rows one node's state sync reads are that node's own.
"""
