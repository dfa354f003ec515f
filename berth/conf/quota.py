"""[quota]: the limits a project gets when neither its own quota nor the quota class
``default`` sets one (API process). -1 means unlimited."""

from oslo_config import cfg

GROUP = "quota"

#: Each limit's default, by option name (the API's settings start from these too).
DEFAULTS: dict[str, int] = {"containers": 40, "memory": 51200, "cpu": 20, "disk": 100}

OPTS = [
    cfg.IntOpt("containers", default=DEFAULTS["containers"], min=-1,
               help="Containers (and capsules) a project may have."),
    cfg.IntOpt("memory", default=DEFAULTS["memory"], min=-1,
               help="MiB of memory a project's containers may ask for in total."),
    cfg.IntOpt("cpu", default=DEFAULTS["cpu"], min=-1,
               help="CPU cores a project's containers may ask for in total."),
    cfg.IntOpt("disk", default=DEFAULTS["disk"], min=-1,
               help="GiB of disk a project's containers may ask for in total."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
