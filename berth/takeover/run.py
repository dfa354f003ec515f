"""``berth db import-zun``: Zun's database read, berth's written, in that order of checks:

1. Zun's database: it opens, it is Zun's, it is at Zun 18's head (``source``).
2. berth's database: empty (``target``).
3. The plan: every table group converted; rows that cannot be carried listed.
4. ``--dry-run`` prints the plan and stops; a real run refuses while rows cannot be
   carried, unless ``--leave-behind`` says to leave them in Zun's database.
5. berth's schema migrated, every row written in one transaction.

A refusal at any step writes nothing anywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from berth.takeover import (
    containers,
    images,
    networks,
    nodes,
    placement,
    quotas,
    source,
    target,
    volumes,
)
from berth.takeover.plan import ORDER, Plan

LOG = logging.getLogger(__name__)


class ImportRefused(Exception):
    """The import cannot start or cannot go on (the message says why); nothing written."""


@dataclass(frozen=True)
class Options:
    zun_url: str
    berth_url: str
    dry_run: bool = False
    leave_behind: bool = False
    zun_key: str = images.ZUN_DEFAULT_KEY
    embedded_placement: bool = True
    #: berth's ``[network]driver``: what Zun's networks and plugged containers become
    network_driver: str = "local"


def build_plan(zun: source.ZunRows, decrypt: Callable[[str], str],
               encrypt: Callable[[str], str], embedded_placement: bool,
               network_driver: str = "local") -> Plan:
    plan = Plan()
    registries = images.convert_registries(zun, plan, decrypt, encrypt)
    carried = containers.convert(zun, plan, registries, network_driver)
    volumes.convert(zun, plan, {r["uuid"] for r in zun["container"] if r["id"] in carried})
    images.convert_images(zun, plan)
    quotas.convert(zun, plan)
    nodes.convert(zun, plan)
    networks.convert(zun, plan, network_driver)
    if embedded_placement:
        placement.convert(plan)
    return plan


def report(plan: Plan, dry_run: bool) -> str:
    lines = ["would write:" if dry_run else "wrote:"]
    lines += [f"  {name:<26} {count}" for name, count in plan.counts().items()]
    if plan.uncarried:
        lines.append(f"cannot carry {len(plan.uncarried)} row(s):")
        lines += [f"  {u}" for u in plan.uncarried]
    lines += [f"note: {n}" for n in plan.notes]
    return "\n".join(lines)


def import_zun(opts: Options, encrypter: Callable[[], Callable[[str], str]],
               migrate: Callable[[str], None]) -> tuple[Plan, str]:
    """Run the import; returns the plan and its report. ImportRefused (nothing
    written) when a check fails. ``encrypter`` makes berth's password encrypter (only
    called on a real run: it may create berth's key file); ``migrate`` makes berth's
    schema."""
    try:
        zun = source.read(opts.zun_url)
        target.check_empty(opts.berth_url)
    except (source.SourceRefused, target.TargetRefused) as err:
        raise ImportRefused(str(err)) from err
    encrypt = (lambda password: password) if opts.dry_run else encrypter()
    plan = build_plan(zun, images.zun_decrypter(opts.zun_key), encrypt,
                      opts.embedded_placement, opts.network_driver)
    text = report(plan, opts.dry_run)
    if opts.dry_run:
        return plan, text
    if plan.uncarried and not opts.leave_behind:
        raise ImportRefused(
            f"{text}\n\n{len(plan.uncarried)} Zun row(s) cannot be carried (listed above): "
            f"nothing was written. Fix them in Zun first, or run again with --leave-behind "
            f"to carry everything else and leave them in Zun's database.")
    migrate(opts.berth_url)
    target.write(opts.berth_url, plan)
    LOG.info("imported Zun's database: %s", ", ".join(
        f"{n} {len(plan.rows[n])}" for n in ORDER if plan.rows[n]))
    return plan, text
