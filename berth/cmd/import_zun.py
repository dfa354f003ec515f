"""``berth db import-zun``: the command's side of ``berth.takeover.run`` (options in,
the report out, exit status 1 with the reason on a refusal)."""

from __future__ import annotations

import sys

from oslo_config import cfg


def run(conf: cfg.ConfigOpts, berth_url: str) -> int:
    from berth.db import migrate
    from berth.db.registries import PasswordCipher, load_key
    from berth.takeover import images
    from berth.takeover.run import ImportRefused, Options, import_zun

    cmd = conf.command
    opts = Options(zun_url=cmd.zun_connection, berth_url=berth_url, dry_run=cmd.dry_run,
                   leave_behind=cmd.leave_behind,
                   zun_key=cmd.zun_encryption_key or images.ZUN_DEFAULT_KEY,
                   embedded_placement=conf.placement.driver == "embedded",
                   network_driver=conf.network.driver)

    def encrypter():  # type: ignore[no-untyped-def]
        return PasswordCipher(load_key(conf.auth_encryption_key, conf.state_path)).encrypt

    try:
        _plan, text = import_zun(opts, encrypter, migrate.upgrade)
    except ImportRefused as err:
        print(f"berth db import-zun: refused, nothing written: {err}", file=sys.stderr)
        return 1
    print(text)
    if not opts.dry_run:
        print(f"berth's database is at revision {migrate.current_revision(berth_url)}; start "
              f"berth-compute on each node that ran zun-compute, then berth-api")
    return 0
