"""``berth-cni``: the CNI plugin executable (see ``berth.cni.plugin``). A runtime runs
it without arguments; ``--help`` and ``--version`` are for people."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from berth.cni import plugin


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        import argparse

        from berth.cmd import helptext
        from berth.version import version_string

        parser = argparse.ArgumentParser(prog="berth-cni", description=helptext.CNI)
        parser.add_argument("--version", action="version", version=version_string())
        parser.parse_args(args)  # exits: --help, --version, or an error for anything else
    return plugin.main()


if __name__ == "__main__":
    sys.exit(main())
