"""[quota]: the limits a project gets when neither its own quota nor the quota class
``default`` sets one (API process). -1 means unlimited."""

from oslo_config import cfg

GROUP = "quota"

OPTS = [
    cfg.IntOpt("containers", default=40, min=-1,
               help="Containers (and capsules) a project may have."),
    cfg.IntOpt("memory", default=51200, min=-1,
               help="MiB of memory a project's containers may ask for in total."),
    cfg.IntOpt("cpu", default=20, min=-1,
               help="CPU cores a project's containers may ask for in total."),
    cfg.IntOpt("disk", default=100, min=-1,
               help="GiB of disk a project's containers may ask for in total."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
