"""[api]: the REST API server."""

from oslo_config import cfg

GROUP = "api"

#: ``max_request_body_size``'s default: 10 MiB.
MAX_REQUEST_BODY_SIZE = 10 * 1024 * 1024
#: ``header_timeout`` and ``body_timeout``'s defaults, in seconds.
HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 60.0

OPTS = [
    cfg.StrOpt("host_ip", default=None, sample_default="127.0.0.1 in noauth mode, else $my_ip",
               help="Address the API listens on. Unset: 127.0.0.1 when auth_strategy is "
                    "noauth (so that an unauthenticated API is not exposed), else my_ip."),
    cfg.PortOpt("port", default=9517, help="TCP port the API listens on."),
    cfg.BoolOpt("enable_ssl_api", default=False,
                help="Serve the API over HTTPS only, with [ssl]cert_file and key_file "
                     "(berth-api and berth serve); a plain HTTP request is refused. "
                     "Leave it false behind a proxy that terminates TLS, and set "
                     "public_endpoint to the proxy's https URL."),
    cfg.StrOpt("auth_strategy", default="noauth", choices=["noauth", "keystone"],
               help="noauth: the token names the caller (user[:project]), for one "
                    "trusted machine; keystone: every request's token is validated by "
                    "Keystone with keystonemiddleware ([keystone_authtoken] options), "
                    "and [oslo_policy] rules decide what the caller may do."),
    cfg.IntOpt("max_limit", default=1000, help="Largest page a list returns."),
    cfg.BoolOpt("enable_image_validation", default=True,
                help="Check at create time that the image exists (locally or in its "
                     "registry) and answer 400 when it does not. Zun's default is false; "
                     "berth's is true so that a typo is a 4xx, not an Error later."),
    cfg.IntOpt("max_request_body_size", default=MAX_REQUEST_BODY_SIZE, min=1024,
                help="Largest request body (bytes) the API reads; a larger one is refused "
                     "with 400 before it is read. Bodies are also refused when nested more "
                     "than 32 levels deep."),
    cfg.FloatOpt("header_timeout", default=HEADER_TIMEOUT, min=0.1,
                 help="Seconds a client may take to send a request's line and headers, "
                      "from the moment its connection opens or its request begins; a "
                      "slower one is disconnected (so that slow clients cannot hold the "
                      "API's connections)."),
    cfg.FloatOpt("body_timeout", default=BODY_TIMEOUT, min=0.1,
                 help="Seconds a client may take to send a request's body once its "
                      "headers are in; a slower one gets a 400."),
    cfg.IntOpt("workers", min=1, sample_default="the number of CPUs",
               help="Number of berth-api worker processes serving the API's port (one "
                    "per CPU when unset, as Zun). Each is a whole API with the "
                    "scheduler; they share only the database and the broker, so "
                    "quotas and a node's room hold across them. /metrics answers for "
                    "the worker that took the request. berth serve always runs one."),
    cfg.StrOpt("public_endpoint",
               help="Public base URL of the API (e.g. https://cloud.example/container); "
                    "links are built from the request when unset."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
