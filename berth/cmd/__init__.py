"""Entry points, one per process, containing only wiring: ``berth`` (serve, db),
``berth-api``, ``berth-compute``, ``berth-wsproxy``, ``berth-cni-daemon``, ``berth-cni``
(the CNI plugin a runtime executes) and ``berth-status`` (upgrade check). ``wiring``
(and ``neutron_wiring``) build berth's parts from the configuration; ``helptext`` holds
what their ``--help`` says."""
