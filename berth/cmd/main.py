"""``berth``: ``berth serve`` (everything on one machine), ``berth db upgrade``,
``berth db version``. ``--config-file FILE`` works for every command."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from oslo_config import cfg

from berth.cmd import helptext
from berth.common import log
from berth.conf import CONF


def _add_commands(subparsers) -> None:  # type: ignore[no-untyped-def]
    subparsers.add_parser("serve", help="run API, scheduler and compute agent in one process",
                          description=helptext.SERVE, epilog=helptext.CONFIG)
    db = subparsers.add_parser("db", help="database migrations", description=helptext.DB,
                               epilog=helptext.CONFIG)
    db_sub = db.add_subparsers(dest="db_action")
    db_sub.required = True
    db_sub.add_parser("upgrade", help="apply every migration", description=helptext.DB_UPGRADE,
                      epilog=helptext.CONFIG)
    imp = db_sub.add_parser("import-zun", help="take over a Zun database (read only) into "
                            "this empty berth database", description=helptext.DB_IMPORT_ZUN,
                            epilog=helptext.CONFIG)
    imp.add_argument("--zun-connection", required=True, metavar="URL",
                     help="Zun's [database]connection, e.g. mysql+pymysql://zun:PW@HOST/zun")
    imp.add_argument("--dry-run", action="store_true",
                     help="print what would be written, by table, and every row that cannot "
                          "be carried with the reason; write nothing")
    imp.add_argument("--leave-behind", action="store_true",
                     help="carry every other row and leave those that cannot be carried in "
                          "Zun's database (without it, such rows stop the import)")
    imp.add_argument("--zun-encryption-key", metavar="KEY", default=None,
                     help="Zun's [DEFAULT]auth_encryption_key, to read registry passwords "
                          "(default: Zun's own default key)")
    db_sub.add_parser("version", help="print the database's migration revision",
                      description=helptext.DB_VERSION, epilog=helptext.CONFIG)


_COMMAND = cfg.SubCommandOpt("command", title="commands", handler=_add_commands)


def main(argv: Sequence[str] | None = None) -> int:
    from berth.cmd import wiring

    CONF.register_cli_opt(_COMMAND)
    CONF.register_cli_opt(cfg.BoolOpt("debug", short="d", default=False,
                                      help="log at DEBUG level"))
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF, prog="berth",
                        description=helptext.BERTH)
    log.setup(debug=CONF.debug, use_json=CONF.use_json)
    name = CONF.command.name
    if name == "serve":
        from berth.cmd import serve
        from berth.common.memory import limit_malloc_arenas

        limit_malloc_arenas()
        return serve.run(CONF)
    from berth.db import migrate

    url = wiring.database_url(CONF)
    if CONF.command.db_action == "import-zun":
        from berth.cmd import import_zun

        return import_zun.run(CONF, url)
    if CONF.command.db_action == "upgrade":
        migrate.upgrade(url)
        print(f"database at revision {migrate.current_revision(url)}")
        return 0
    print(migrate.current_revision(url) or "empty")
    return 0


if __name__ == "__main__":
    sys.exit(main())
