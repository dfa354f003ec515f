"""[docker]: how the agent reaches the Docker engine."""

from oslo_config import cfg

GROUP = "docker"

OPTS = [
    cfg.StrOpt("api_url", default="unix:///var/run/docker.sock",
               help="The Docker engine of this node: unix:///path/to/docker.sock, or "
                    "tcp://host:2376 with ca_file, cert_file and key_file (TLS). The "
                    "console proxy refuses plain TCP: that port gives root on the node."),
    cfg.StrOpt("docker_remote_api_version", default="auto",
               help="Docker API version; 'auto' negotiates with the engine. (Zun pins "
                    "1.26; berth negotiates so that new engine features are usable.)"),
    cfg.IntOpt("default_timeout", default=60, help="Docker client timeout in seconds."),
    cfg.BoolOpt("api_insecure", default=False,
                help="Skip verifying the engine's TLS certificate (tcp:// api_url)."),
    cfg.StrOpt("ca_file", help="CA certificate that signed the engine's (tcp:// api_url)."),
    cfg.StrOpt("cert_file", help="Client certificate for the engine (tcp:// api_url)."),
    cfg.StrOpt("key_file", help="Key of cert_file."),
    cfg.IntOpt("execute_timeout", default=5,
               help="Seconds a non-interactive exec may run before the API answers 409 "
                    "(the command goes on in the container)."),
    cfg.StrOpt("default_registry",
               help="Registry (host[:port]) of an image whose name names none."),
    cfg.StrOpt("default_registry_username",
               help="User for pulls from default_registry when the container's registry "
                    "record gives none."),
    cfg.StrOpt("default_registry_password", secret=True,
               help="Password of default_registry_username."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
