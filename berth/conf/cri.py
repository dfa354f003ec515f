"""[cri]: how the compute agent reaches containerd's CRI plugin when
``[DEFAULT]capsule_driver = cri`` (Zun hard-codes the socket)."""

from oslo_config import cfg

GROUP = "cri"

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
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
