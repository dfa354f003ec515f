"""[cni_daemon]: berth-cni-daemon. Zun's option names and defaults; berth's additions
are marked as such in their help."""

from oslo_config import cfg

GROUP = "cni_daemon"

OPTS = [
    cfg.PortOpt("cni_daemon_port", default=9036, help="The port of the CNI daemon."),
    cfg.IPOpt("cni_daemon_host", default="127.0.0.1",
              help="The CNI daemon's bind address; keep it local (the plugin on this node "
                   "is its only client)."),
    cfg.IntOpt("worker_num", default=30, min=1,
               help="Requests handled at once (threads; Zun: processes)."),
    cfg.IntOpt("vif_active_timeout", default=60, min=1,
               help="Seconds an add waits for the interface to come up; past it the "
                    "daemon answers 504 and undoes the attachment."),
    cfg.IntOpt("pyroute2_timeout", default=10, min=1, deprecated_for_removal=True,
               deprecated_reason="berth's netlink calls do not tune pyroute2's timeout",
               help="Zun's pyroute2 timeout for busy kernels; berth does not use it."),
    cfg.BoolOpt("docker_mode", default=False,
                help="Set when the daemon runs in a container and finds the host's /proc "
                     "at netns_proc_dir. Not used yet: run the daemon in the host's PID "
                     "namespace, where the runtime's namespace paths are valid."),
    cfg.StrOpt("netns_proc_dir", default=None,
               help="Where the host's /proc is mounted when docker_mode is set. Not used "
                    "yet (see docker_mode)."),
    cfg.StrOpt("zun_cni_config_file", default="/etc/cni/net.d/10-zun-cni.conf",
               help="The CNI network configuration the compute agent hands the plugin. "
                    "Not used yet: the agent does not plug containers through CNI yet."),
    cfg.StrOpt("registry_file", default="$state_path/cni/registry.json",
               help="berth: where the daemon keeps its attachments, so that a restarted "
                    "daemon finds them again."),
    cfg.IntOpt("sync_interval", default=60, min=1,
               help="berth: seconds between two sync passes (attachments whose namespace "
                    "is gone, orphan veths)."),
    cfg.BoolOpt("sweep_orphan_veths", default=True,
                help="berth: whether the sync pass removes host veths named vth* that no "
                     "attachment records. Right for the one daemon of a host; turn it off "
                     "where several daemons share a host (several `berth serve` on one "
                     "test machine), or they remove each other's veths."),
    cfg.IntOpt("network_linger", default=300, min=0,
               help="berth: seconds a network left without attachments keeps its bridge "
                    "and firewall rules (then the sync pass removes them), so that the "
                    "next container on it is plugged without laying them again; 0: "
                    "removed with the last attachment."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
