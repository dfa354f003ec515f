"""The run's figures as JSON, and its fill curve as JSON and a PNG (matplotlib, the
``bench`` extra): containers Running per second, and each part's CPU milliseconds
per container, for each block of the fill, against the number of containers
already Running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, report: dict[str, Any]) -> Path:
    path.write_text(json.dumps(report, indent=2))
    return path


def write_curve(path: Path, report: dict[str, Any]) -> Path:
    """The fill curve alone: each block's rate and CPU per container."""
    keys = ("nodes", "containers", "fill_ratio", "load_average", "when")
    path.write_text(json.dumps({**{k: report.get(k) for k in keys},
                                "curve": report["curve"]}, indent=2))
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
    fig, (ax, cost) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    ax.plot(xs, ys, marker="o", label="berth: scheduled and Running /s")
    goal = report.get("goal_per_second")
    if goal:
        ax.axhline(goal, color="grey", linestyle="--", label=f"goal {goal}/s")
    ax.set_ylabel("containers Running per second")
    ax.set_ylim(bottom=0)
    ax.set_title(f"berth fleet fill: {report['nodes']} simulated nodes, "
                 f"{report['containers']} containers (load {report['load_average']})",
                 fontsize=9)
    ax.legend(loc="center right")
    ax.grid(alpha=0.3)
    costed = [b for b in curve if "cpu_ms_per_container" in b]
    for part in ("api", "nodes", "postgres", "rabbitmq"):
        cost.plot([b["from"] for b in costed],
                  [b["cpu_ms_per_container"].get(part, 0) for b in costed],
                  marker=".", label=part)
    goal_ms = report.get("goal_cpu_ms_per_container")
    if goal_ms:
        cost.axhline(goal_ms, color="grey", linestyle="--",
                     label=f"goal {goal_ms} ms for all of them")
    cost.set_xlabel("containers already Running")
    cost.set_ylabel("CPU ms per container")
    cost.set_ylim(bottom=0)
    cost.set_title(f"cost at the end over cost at the start: {report.get('fill_ratio')}",
                   fontsize=9)
    cost.legend(loc="upper right", fontsize=8)
    cost.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
