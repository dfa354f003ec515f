"""[database]: where berth keeps its records."""

from oslo_config import cfg

GROUP = "database"

OPTS = [
    cfg.StrOpt("connection", secret=True,
               sample_default="sqlite:///$state_path/berth.sqlite",
               help="SQLAlchemy URL. Unset: a SQLite file under state_path. For "
                    "deployments: postgresql+psycopg://... or mysql+pymysql://..."),
    cfg.IntOpt("max_pool_size", default=10,
               help="Connections each process keeps to PostgreSQL or MariaDB (up to twice "
                    "as many more under load). SQLite's pools are fixed."),
    cfg.BoolOpt("connection_debug", default=False, help="Log every SQL statement."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
