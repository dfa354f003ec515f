"""[cri]: how the compute agent reaches containerd's CRI plugin when
``[DEFAULT]capsule_driver = cri`` (Zun hard-codes the socket)."""

from oslo_config import cfg

GROUP = "cri"

#: Where the standard CNI plugins are looked for after ``cni_bin_dir``: Debian's
#: directory, then the upstream default (the agent's settings start from these too).
STANDARD_CNI_BIN_DIRS = ("/usr/lib/cni", "/opt/cni/bin")

OPTS = [
    cfg.StrOpt("containerd_socket", default="/run/containerd/containerd.sock",
               help="Path of the containerd socket whose CRI plugin runs capsules (the "
                    "plugin's sandbox_image, CNI configuration and runtimes are "
                    "containerd's own settings)."),
    cfg.FloatOpt("request_timeout", default=60.0, min=1.0,
                 help="Seconds one CRI call may take before the capsule's flow gives up "
                      "on it (RunPodSandbox includes the CNI plugin's work)."),
    cfg.StrOpt("cgroup_parent", default="/berth-cri",
               help="cgroupfs parent of the capsules' pods: each pod's cgroup is "
                    "<cgroup_parent>/<capsule uuid>, removed with the capsule."),
    cfg.StrOpt("log_root",
               help="Directory under which each capsule's members log "
                    "(<log_root>/<capsule uuid>/<member uuid>.log); default "
                    "<state_path>/cri-logs."),
    cfg.StrOpt("cni_conf_dir",
               help="containerd's CNI conf_dir. When set and [network]driver = local, the "
                    "agent writes 00-berth.conflist there at start-up, so that containerd "
                    "plugs each capsule's pod into its berth networks through berth-cni "
                    "and this agent's berth-cni-daemon (pods without berth networks go "
                    "to the directory's other configuration). Unset: containerd's own "
                    "CNI configuration decides the pod network, and capsules get no "
                    "berth network."),
    cfg.FloatOpt("restart_backoff_initial", default=10.0, min=0.1,
                 help="Seconds a capsule member that exited waits before its restart "
                      "policy starts it again the first time; doubled after each exit "
                      "that follows a short run (kubelet's CrashLoopBackOff)."),
    cfg.FloatOpt("restart_backoff_max", default=300.0, min=0.1,
                 help="The longest wait before a member is restarted."),
    cfg.StrOpt("cni_bin_dir", default="/opt/cni/bin",
               help="containerd's CNI bin_dir, where the agent links the berth-cni "
                    "executable (with cni_conf_dir set); empty: link nothing."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
