"""[volume]: where containers' volumes come from. Zun's group and
option names and defaults, except ``driver``'s default (see its help)."""

from oslo_config import cfg

GROUP = "volume"

OPTS = [
    cfg.StrOpt("driver", default="local", choices=["local", "cinder"],
               help="Where a 'volume' mount's volume lives. 'local' (berth's default): a "
                    "sparse file with a filesystem on this node, loop-mounted, with a real "
                    "size limit; a mount's 'source' names a local volume of the project that "
                    "is created on first use and kept after its containers go. 'cinder': "
                    "OpenStack Cinder through python-cinderclient and os-brick (Zun's "
                    "default). 'bind' mounts (injected files) are always local."),
    cfg.StrOpt("volume_dir", default="$state_path/mnt",
               help="Where volumes are mounted on the node, one directory per volume uuid "
                    "(local volumes keep their backing files under its 'local' directory)."),
    cfg.StrOpt("fstype", default="ext4",
               help="The filesystem made on a new volume the first time it is mounted."),
    cfg.BoolOpt("use_multipath", default=False,
                help="Cinder: ask os-brick for multipath connections."),
    cfg.IntOpt("timeout_wait_volume_available", default=60, min=1,
               help="Seconds to wait for a volume to become available before a create "
                    "fails."),
    cfg.IntOpt("timeout_wait_volume_deleted", default=60, min=1,
               help="Seconds to wait for a volume to be deleted."),
    cfg.IntOpt("local_volume_default_size", default=1, min=1,
               help="berth: the size in GiB of a local volume created from a mount's "
                    "'source' without a 'size'."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
