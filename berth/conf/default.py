"""[DEFAULT]: identity of this node, paths, timers and API-side defaults."""

import os
import socket

from oslo_config import cfg

GROUP = "DEFAULT"

# Defaults that settings dataclasses outside conf/ repeat for their unit tests: declared
# here once, read there (changing one here changes every user's).
SERVICE_DOWN_TIME = 180
#: berth's own sandbox image, made locally (``compute.capsules.sandbox``).
SANDBOX_IMAGE = "berth/sandbox:1"
SANDBOX_IMAGE_PULL_POLICY = "ifnotpresent"
AVAILABILITY_ZONE = "nova"


def _default_state_path() -> str:
    if os.geteuid() == 0:
        return "/var/lib/berth"
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(base, "berth")


OPTS = [
    cfg.StrOpt("host", default=socket.gethostname(), sample_default="<hostname>",
               help="Name of this node: the compute agent's RPC server name and the "
                    "compute_node hostname."),
    cfg.StrOpt("my_ip", default="127.0.0.1",
               help="IP address of this node, used as the default for other host options."),
    cfg.StrOpt("state_path", default=_default_state_path(),
               sample_default="/var/lib/berth (root) or ~/.local/state/berth",
               help="Where berth keeps its state: the SQLite database of the embedded "
                    "default, volumes, caches."),
    cfg.BoolOpt("use_json", default=False,
                help="Log one JSON object per line (time, level, logger, container, "
                     "message, exception) instead of text, for log shippers. The "
                     "lines go to stderr either way (the journal, under systemd)."),
    cfg.IntOpt("periodic_interval_max", default=60,
               help="Longest time in seconds between two runs of a periodic task."),
    cfg.IntOpt("service_down_time", default=SERVICE_DOWN_TIME,
               help="Seconds without a heartbeat after which a service counts as down."),
    cfg.IntOpt("sync_container_state_interval", default=60,
               help="Seconds between two runs of the safety-net state sync "
                    "(0: periodic_interval_max, negative: disabled)."),
    cfg.StrOpt("container_driver", default="docker", deprecated_for_removal=True,
               deprecated_reason="berth has one container driver (Docker)",
               help="Zun's container driver; berth always drives Docker, whatever this "
                    "says."),
    cfg.StrOpt("container_runtime", default="runc",
               help="Default Docker runtime for containers that name none."),
    cfg.IntOpt("default_memory", default=512, help="Memory (MiB) of a container that asks for none."),
    cfg.FloatOpt("default_cpu", default=1.0, help="CPUs of a container that asks for none."),
    cfg.IntOpt("default_disk", default=10, deprecated_for_removal=True,
               deprecated_reason="berth sets no disk size on a container that asks for none",
               help="Zun's default disk (GiB) of a container when the storage driver "
                    "supports quotas; berth does not use it."),
    cfg.IntOpt("minimum_memory", default=4,
               help="Smallest memory (MiB) a create or resize may ask for; less is a 400."),
    cfg.IntOpt("maximum_memory", default=8192,
               help="Largest memory (MiB) a create or resize may ask for; more is a 400."),
    cfg.FloatOpt("minimum_cpus", default=0.1,
                 help="Fewest CPUs a create or resize may ask for; fewer is a 400."),
    cfg.FloatOpt("maximum_cpus", default=16.0,
                 help="Most CPUs a create or resize may ask for; more is a 400."),
    cfg.IntOpt("minimum_disk", default=1,
               help="Smallest disk (GiB) a create may ask for; less is a 400."),
    cfg.IntOpt("maximum_disk", default=160,
               help="Largest disk (GiB) a create may ask for; more is a 400."),
    cfg.IntOpt("default_memory_swap", default=-1,
               help="Swap limit (MiB) the agent sets together with a container's memory "
                    "limit (at create and resize); -1: unlimited."),
    cfg.ListOpt("image_driver_list", default=["glance", "docker"],
                help="Image drivers a request may name (image_driver); another is a 400."),
    cfg.StrOpt("default_image_driver", default="docker",
               help="Image driver of a request that names none."),
    cfg.StrOpt("image_pull_policy", default="always",
               choices=["always", "ifnotpresent", "never"], ignore_case=True,
               help="Pull policy of a container that names none (Kubernetes' words)."),
    cfg.StrOpt("capsule_driver", default="docker", choices=["docker", "cri"],
               help="How capsules run: docker (a sandbox container whose network and IPC "
                    "namespaces the members share) or cri (containerd's CRI plugin at "
                    "[cri]containerd_socket runs each capsule as a pod). Zun's default "
                    "is cri."),
    cfg.StrOpt("sandbox_image", default=SANDBOX_IMAGE,
               help="Image of a capsule's sandbox container, which holds the namespaces "
                    "its members share and runs until the capsule is deleted. berth's "
                    "default is made locally, from the host's static busybox, the first "
                    "time a capsule needs it (no registry: Zun's kubernetes/pause is on "
                    "Docker Hub); any image whose default command runs until SIGTERM works."),
    cfg.StrOpt("sandbox_image_driver", default="docker",
               help="Image driver of the sandbox image (only docker)."),
    cfg.StrOpt("sandbox_image_pull_policy", default=SANDBOX_IMAGE_PULL_POLICY,
               choices=["always", "ifnotpresent", "never"], ignore_case=True,
               help="Pull policy of the sandbox image (Zun never read it)."),
    cfg.IntOpt("init_container_timeout", default=3600, min=1,
               help="Seconds a capsule's init container may run before the capsule is "
                    "put in Error naming it."),
    cfg.StrOpt("default_availability_zone", default=AVAILABILITY_ZONE,
               help="Availability zone of this node (its agent reports it) and of any "
                    "service recorded without one."),
    cfg.StrOpt("default_schedule_zone",
               help="Zone the scheduler places a container in when its request names "
                    "none (AvailabilityZoneFilter). Unset: any zone."),
    cfg.StrOpt("auth_encryption_key", secret=True,
               help="Secret from which berth derives the key that encrypts registry "
                    "passwords in the database (any string; HKDF-SHA256 makes a Fernet "
                    "key of it). Unset: a random key is generated once and kept in "
                    "$state_path/registry.key (mode 0600). Every process that reads "
                    "registries (API and compute agents) needs the same key, so set it "
                    "when they run on several machines."),
    cfg.StrOpt("transport_url", secret=True,
               help="oslo.messaging URL (rabbit://user:pass@host:5672/vhost) through which "
                    "the API and the compute agents talk. Unset: in-process dispatch, which "
                    "only works when API and agent run in one process (berth serve)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)
