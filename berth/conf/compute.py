"""[compute]: the compute agent."""

from oslo_config import cfg

GROUP = "compute"

OPTS = [
    cfg.StrOpt("topic", default="zun-compute", help="RPC topic of the compute agents."),
    cfg.StrOpt("unique_container_name_scope", default="", choices=["", "project", "global"],
               help="Where a container's name must be unique (case-insensitive): empty, "
                    "nowhere; project, within its project; global, everywhere. A taken "
                    "name is a 409 at create."),
    cfg.BoolOpt("resume_container_state", default=False,
                help="At the agent's start, start again the containers recorded Running "
                     "that Docker holds stopped (after a node reboot, say)."),
    cfg.BoolOpt("remount_container_volume", default=True,
                help="At start-up, mount again the volumes of this host's containers (a "
                     "reboot or a crash left them unmounted); a volume that cannot be "
                     "mounted puts its container in Error."),
    cfg.FloatOpt("reserve_disk_for_image", default=0.2,
                 help="Fraction of the Docker data root's disk kept for images: the "
                      "node's disk_total is what remains."),
    cfg.BoolOpt("enable_cpu_pinning", default=False,
                help="Reported as the node's enable_cpu_pinning (os-hosts); berth pins "
                     "no CPUs itself."),
    cfg.BoolOpt("host_shared_with_nova", default=False,
                help="Nova's nova-compute runs on this node too: with [placement]driver "
                     "= openstack, the agent reports the node's VCPU, MEMORY_MB and "
                     "DISK_GB on Nova's resource provider (the one named after the node: "
                     "[DEFAULT]host, else this machine's hostname or FQDN, as Nova's "
                     "hypervisor_hostname) instead of a provider of its own, and "
                     "containers are allocated there beside Nova's instances. The agent "
                     "never creates that provider: until Nova has, it reports nothing "
                     "and says so. An allocation ratio left unset keeps the provider's "
                     "(Nova's)."),
    cfg.IntOpt("reserved_host_disk_mb", default=0,
               help="Disk (MiB) kept for the node itself: not offered to containers."),
    cfg.IntOpt("reserved_host_memory_mb", default=512,
               help="Memory (MiB) kept for the node itself: not offered to containers."),
    cfg.IntOpt("reserved_host_cpus", default=0,
               help="CPUs kept for the node itself: not offered to containers."),
    cfg.FloatOpt("cpu_allocation_ratio",
                 help="CPUs offered per physical CPU. Unset: "
                      "initial_cpu_allocation_ratio."),
    cfg.FloatOpt("ram_allocation_ratio",
                 help="Memory offered per MiB of physical memory. Unset: "
                      "initial_ram_allocation_ratio."),
    cfg.FloatOpt("disk_allocation_ratio",
                 help="Disk offered per GiB of physical disk. Unset: "
                      "initial_disk_allocation_ratio."),
    cfg.FloatOpt("initial_cpu_allocation_ratio", default=16.0,
                 help="cpu_allocation_ratio when that is unset."),
    cfg.FloatOpt("initial_ram_allocation_ratio", default=1.5,
                 help="ram_allocation_ratio when that is unset."),
    cfg.FloatOpt("initial_disk_allocation_ratio", default=1.0,
                 help="disk_allocation_ratio when that is unset."),
    cfg.IntOpt("action_workers", default=16, min=1,
               help="Threads that carry out RPC casts on the agent; actions on one "
                    "container always run one at a time."),
    cfg.PortOpt("metrics_port", default=0,
                help="berth-compute only: the port of the agent's HTTP listener for "
                     "GET /metrics (Prometheus), /healthz and /readyz. 0 (the default) "
                     "disables it; berth serve serves them on the API's port instead."),
    cfg.StrOpt("metrics_host", default="127.0.0.1",
               help="berth-compute only: the address metrics_port listens on. Set this "
                    "node's address (or 0.0.0.0) for a Prometheus on another machine; "
                    "the endpoints need no authentication."),
    cfg.BoolOpt("evacuate_on_host_down", default=False,
                help="berth-api only: when a node's compute service is down (no heartbeat "
                     "for service_down_time seconds, or forced down), recreate its "
                     "Created, Running and Stopped containers on healthy nodes chosen by "
                     "the scheduler, once each whatever the number of API processes, "
                     "each recorded as an 'evacuate' action with its reason. The node, "
                     "when it comes back, removes its stale copies. Turn it on only if a "
                     "node that stops heartbeating is really gone or fenced: a node cut "
                     "from the database but not from its users keeps running its copies "
                     "until it reaches the database again."),
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
    cfg.FloatOpt("database_patience", default=45.0, min=0.0,
                 help="Seconds an agent's action (create, delete, start, stop, reboot, "
                      "rebuild, resize, update, a capsule's create and delete, ...) "
                      "keeps trying while the database does not answer; past them the "
                      "action is abandoned, what it held is released, and the container "
                      "(or capsule) goes to Error saying the database was unreachable. "
                      "An update (PATCH) abandoned so is answered 503 saying so; its "
                      "container runs on, with the limits its row holds."),
    cfg.StrOpt("runtime_driver", default="docker", choices=[
                   ("docker", "the Docker engine at [docker]api_url"),
                   ("simulated", ("FOR BENCHMARKS ONLY: containers kept in memory, no "
                                 "process runs"))],
               help="The container engine the agent drives. Never set 'simulated' on a "
                    "real node: it is the fleet benchmark's stand-in (bench/fleet), which "
                    "runs a thousand agents in one process to measure the control plane."),
    cfg.FloatOpt("simulated_start_latency", default=0.3, min=0.0,
                 help="FOR BENCHMARKS ONLY, with runtime_driver = simulated: seconds a "
                      "container start takes (about what Docker takes here)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
