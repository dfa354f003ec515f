"""[glance]: where the glance image driver keeps what it downloaded (Zun's group and
option). ``images_directory/<glance image id>.tar`` is the image as Glance holds it (a
``docker save`` tarball); it is checked against Glance's checksum before it is used
again, so a second create of the same image downloads nothing."""

from oslo_config import cfg

GROUP = "glance"

OPTS = [
    cfg.StrOpt("images_directory", default="$state_path/images",
               help="Shared directory where glance images located. The glance image "
                    "driver keeps each downloaded image there as <glance image id>.tar "
                    "and loads it into Docker from there."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
