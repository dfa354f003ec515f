"""Every option the guide names is one berth declares: in prose (`[group]option`) and
in its ini blocks, run or not. The declarations are read from the code (berth's
``list_opts``, keystonemiddleware's and oslo.policy's, keystoneauth's plugin options
where a group loads a plugin), never from a hand-kept list.

Two exceptions, each checked the other way round so that neither goes stale:
* the options docs/migrating-from-zun.md lists as Zun's alone (the first column of the
  table under "Options Zun has and berth does not") must be absent from berth;
* ``NOT_YET``: options of blocks marked "not run" because berth does not have them
  yet; each must still be missing (once it exists, drop it from the list).
"""

from __future__ import annotations

import re

from keystoneauth1 import loading
from keystonemiddleware import opts as authtoken_opts
from oslo_policy import opts as policy_opts

import berth.conf
from docs.guide import DOCS, parse

_REF = re.compile(r"\[([A-Za-z_]+)\]([a-z][a-z0-9_]*)")
#: Groups that load a keystoneauth plugin named by their auth_type; the guide's blocks
#: use the password plugin.
_PLUGIN_GROUPS = ("placement", "cinder_client", "keystone_authtoken", "neutron", "glance_client")
ZUN_ONLY_SECTION = "## Options Zun has and berth does not"
#: (group, option): named by not-run blocks of the guide, not in berth yet.
NOT_YET: set[tuple[str, str]] = set()


def declared() -> set[tuple[str, str]]:
    out = {(group, opt.dest) for group, opts in berth.conf.list_opts() for opt in opts}
    for group, opts in [*authtoken_opts.list_auth_token_opts(), *policy_opts.list_opts()]:
        out |= {(group, opt.dest) for opt in opts}
    password = loading.get_auth_plugin_conf_options("password")
    for group in _PLUGIN_GROUPS:
        out |= {(group, opt.dest) for opt in password}
    return out


def _ini_options(body: str) -> set[tuple[str, str]]:
    found, group = set(), "DEFAULT"
    for line in body.splitlines():
        text = line.strip()
        if not text or text.startswith(("#", ";")):
            continue
        if text.startswith("[") and text.endswith("]"):
            group = text[1:-1]
        elif "=" in text:
            found.add((group, text.split("=", 1)[0].strip()))
    return found


def _zun_only_and_rest(text: str) -> tuple[set[tuple[str, str]], str]:
    """The Zun-only options of the migrating page, and the page without them."""
    head, found, rest = text.partition(ZUN_ONLY_SECTION)
    if not found:
        return set(), text
    section, sep, tail = rest.partition("\n## ")
    zun_only, kept = set(), []
    for line in section.splitlines():
        if line.startswith("| `["):
            first, _, others = line[1:].partition("|")
            zun_only |= set(_REF.findall(first))
            kept.append(others)
        else:
            kept.append(line)
    return zun_only, head + "\n".join(kept) + sep + tail


def named_by_the_guide() -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(options the guide names as berth's, options it names as Zun's alone)."""
    berths, zuns = set(), set()
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text()
        zun_only, text = _zun_only_and_rest(text)
        zuns |= zun_only
        berths |= set(_REF.findall(text))
        for info, body, _ in parse(path).blocks:
            if info.split()[:1] == ["ini"]:
                berths |= _ini_options(body)
    return berths, zuns


def test_every_option_the_guide_names_is_declared() -> None:
    berths, _ = named_by_the_guide()
    assert len(berths) > 50
    assert sorted(berths - declared() - NOT_YET) == []


def test_options_named_as_zuns_alone_are_not_berths() -> None:
    _, zuns = named_by_the_guide()
    assert len(zuns) > 20
    assert sorted(zuns & declared()) == []


def test_options_not_in_berth_yet_are_still_missing() -> None:
    berths, _ = named_by_the_guide()
    assert NOT_YET <= berths, "NOT_YET names an option the guide no longer names"
    assert sorted(NOT_YET & declared()) == [], "berth has it now: drop it from NOT_YET"
