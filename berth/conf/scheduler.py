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
                help="Filters a node must pass. berth adds ResourceFilter (free cpu and "
                     "memory) because the embedded default runs without Placement."),
    cfg.IntOpt("max_placement_results", default=1000, deprecated_for_removal=True,
               deprecated_reason="berth's scheduler does not ask Placement for candidates",
               help="Zun's limit on Placement's allocation candidates; berth does not "
                    "use it."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
