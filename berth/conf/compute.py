"""[compute]: the compute agent."""

from oslo_config import cfg

GROUP = "compute"

OPTS = [
    cfg.StrOpt("topic", default="zun-compute", help="RPC topic of the compute agents."),
    cfg.StrOpt("unique_container_name_scope", default="", choices=["", "project", "global"]),
    cfg.BoolOpt("resume_container_state", default=False),
    cfg.BoolOpt("remount_container_volume", default=True),
    cfg.FloatOpt("reserve_disk_for_image", default=0.2),
    cfg.BoolOpt("enable_cpu_pinning", default=False),
    cfg.BoolOpt("host_shared_with_nova", default=False),
    cfg.IntOpt("reserved_host_disk_mb", default=0),
    cfg.IntOpt("reserved_host_memory_mb", default=512),
    cfg.IntOpt("reserved_host_cpus", default=0),
    cfg.FloatOpt("cpu_allocation_ratio"),
    cfg.FloatOpt("ram_allocation_ratio"),
    cfg.FloatOpt("disk_allocation_ratio"),
    cfg.FloatOpt("initial_cpu_allocation_ratio", default=16.0),
    cfg.FloatOpt("initial_ram_allocation_ratio", default=1.5),
    cfg.FloatOpt("initial_disk_allocation_ratio", default=1.0),
    cfg.IntOpt("action_workers", default=16, min=1,
               help="Threads that carry out RPC casts on the agent; actions on one "
                    "container always run one at a time."),
    cfg.IntOpt("rpc_call_timeout", default=60,
               help="Seconds the API waits for a synchronous answer from an agent."),
    cfg.IntOpt("task_state_timeout", default=600,
               help="Seconds a container's task (container_stopping, container_deleting, "
                    "...) may last before berth considers it lost: the owning agent, or "
                    "the API when that agent is down, then clears it and sets the "
                    "container to Error with a reason. 0 or less: no deadline."),
    cfg.IntOpt("create_task_timeout", default=1800,
               help="The same deadline for the tasks of a create (container_creating, "
                    "image_pulling, network_*, sg_*), longer because a pull can be slow. "
                    "0 or less: no deadline."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
