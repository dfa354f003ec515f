"""[scheduler]: how the API picks a node (runs inside the API process)."""

from oslo_config import cfg

GROUP = "scheduler"

OPTS = [
    cfg.StrOpt("driver", default="filter_scheduler", deprecated_for_removal=True,
               deprecated_reason="berth has one scheduler, the filter scheduler",
               help="Zun's scheduler driver; berth always runs its filter scheduler."),
    cfg.ListOpt("enabled_filters",
                default=["AvailabilityZoneFilter", "ComputeFilter", "RuntimeFilter",
                         "ResourceFilter"],
                help="Filters a node must pass. berth adds ResourceFilter (free cpu, "
                     "memory and disk, counted as Placement counts them) because the "
                     "embedded default runs without Placement. Also available: "
                     "LabelFilter (scheduler hints label:<name>=<value> must match the "
                     "node's Docker daemon labels)."),
    cfg.ListOpt("enabled_weighers", default=["RAMWeigher", "CPUWeigher"],
                help="Weighers that rank the nodes that passed the filters (Zun has "
                     "none; they follow Nova's). Each scores every node, the scores are "
                     "divided by the largest of them, multiplied by the weigher's "
                     "multiplier and summed; the highest sum wins. RAMWeigher: free "
                     "memory; CPUWeigher: free cpu. Empty: the first node by name."),
    cfg.FloatOpt("ram_weight_multiplier", default=1.0,
                 help="Multiplier of RAMWeigher. Positive spreads containers over the "
                      "nodes (the node with the most free memory wins, so that a burst "
                      "is not piled on one node); negative packs them (the node with the "
                      "least free memory that still fits wins); 0 ignores memory."),
    cfg.FloatOpt("cpu_weight_multiplier", default=1.0,
                 help="Multiplier of CPUWeigher: as ram_weight_multiplier, for free cpu. "
                      "Set both negative to pack."),
    cfg.FloatOpt("host_state_max_age", default=1.0, min=0.0,
                 help="berth-api: seconds the scheduler reuses its read of the nodes "
                      "(their capacity, service and usage) before reading them again; "
                      "in between it counts what this API process placed. Safe at any "
                      "value: the row that places a container is written only after the "
                      "node's usage is read again under its lock. 0: read them for every "
                      "create (a create then costs a read of every node)."),
    cfg.IntOpt("percentage_of_nodes_to_score", default=0, min=0, max=100,
               help="berth-api, in a fleet of more than 100 nodes: the share of the "
                    "nodes that pass the filters the scheduler weighs for a create, "
                    "never fewer than 100 (kube-scheduler's percentageOfNodesToScore). "
                    "Each create takes the nodes in turn from a random point, so every "
                    "node is weighed as often, and the best of those weighed is checked "
                    "again under its lock like any choice. 0: adapted to the fleet (50 "
                    "percent less a point for every 125 nodes, at least 5 percent: 420 "
                    "of 1,000 nodes); 100: every node."),
    cfg.IntOpt("max_placement_results", default=1000, deprecated_for_removal=True,
               deprecated_reason="berth's scheduler does not ask Placement for candidates",
               help="Zun's limit on Placement's allocation candidates; berth does not "
                    "use it."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
