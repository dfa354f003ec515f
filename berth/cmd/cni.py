"""``berth-cni``: the CNI plugin executable (see ``berth.cni.plugin``)."""

from __future__ import annotations

import sys

from berth.cni.plugin import main

if __name__ == "__main__":
    sys.exit(main())
