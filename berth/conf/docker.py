"""[docker]: how the agent reaches the Docker engine."""

from oslo_config import cfg

GROUP = "docker"

OPTS = [
    cfg.StrOpt("api_url", default="unix:///var/run/docker.sock"),
    cfg.StrOpt("docker_remote_api_version", default="auto",
               help="Docker API version; 'auto' negotiates with the engine. (Zun pins "
                    "1.26; berth negotiates so that new engine features are usable.)"),
    cfg.IntOpt("default_timeout", default=60, help="Docker client timeout in seconds."),
    cfg.BoolOpt("api_insecure", default=False),
    cfg.StrOpt("ca_file"),
    cfg.StrOpt("cert_file"),
    cfg.StrOpt("key_file"),
    cfg.IntOpt("execute_timeout", default=5),
    cfg.StrOpt("default_registry"),
    cfg.StrOpt("default_registry_username"),
    cfg.StrOpt("default_registry_password", secret=True),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
