"""[scheduler]: how the API picks a node (runs inside the API process)."""

from oslo_config import cfg

GROUP = "scheduler"

OPTS = [
    cfg.StrOpt("driver", default="filter_scheduler"),
    cfg.ListOpt("enabled_filters",
                default=["AvailabilityZoneFilter", "ComputeFilter", "RuntimeFilter",
                         "ResourceFilter"],
                help="Filters a node must pass. berth adds ResourceFilter (free cpu and "
                     "memory) because the embedded default runs without Placement."),
    cfg.IntOpt("max_placement_results", default=1000),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
