"""The run's figures as JSON, and its fill curve as a PNG (matplotlib, the ``bench``
extra): containers Running per second for each block of the fill, against the
number of containers already Running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, report: dict[str, Any]) -> Path:
    path.write_text(json.dumps(report, indent=2))
    return path


def write_png(path: Path, report: dict[str, Any]) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None          # pip install -e '.[bench]'
    curve = report["curve"]
    xs = [block["from"] for block in curve]
    ys = [block["per_second"] for block in curve]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(xs, ys, marker="o", label="berth: scheduled and Running /s")
    goal = report.get("goal_per_second")
    if goal:
        ax.axhline(goal, color="grey", linestyle="--", label=f"goal {goal}/s")
    ax.set_xlabel("containers already Running")
    ax.set_ylabel("containers Running per second")
    ax.set_ylim(bottom=0)
    ax.set_title(f"berth fleet fill: {report['nodes']} simulated nodes, "
                 f"{report['containers']} containers (load {report['load_average']})",
                 fontsize=9)
    ax.legend(loc="center right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
