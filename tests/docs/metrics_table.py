"""The metrics table of docs/monitoring.md, made from the declarations in
berth/metrics/catalog.py (name, type, labels, help), in the order they are declared.

``python -m docs.metrics_table`` (from tests/) prints it;
``BERTH_DOCS_WRITE=1 pytest tests/docs/test_monitoring.py`` writes it into the page."""

from __future__ import annotations

from prometheus_client.metrics import MetricWrapperBase

from berth.metrics import catalog

BEGIN = ("<!-- metrics table: made from berth/metrics/catalog.py by "
         "tests/docs/metrics_table.py; do not edit by hand -->")
END = "<!-- end of metrics table -->"


def rows() -> list[tuple[str, str, tuple[str, ...], str]]:
    """(exported name, type, labels, help) of every metric berth declares."""
    out = []
    for value in vars(catalog).values():
        if isinstance(value, MetricWrapperBase):
            # prometheus-client keeps these as private attributes; they are what the
            # declaration said (a counter is exported with the suffix _total)
            kind, name = value._type, value._name
            suffix = "_total" if kind == "counter" else ""
            out.append((name + suffix, kind, tuple(value._labelnames), value._documentation))
    depths = catalog.QUEUE_DEPTHS
    out.append((depths._name, "gauge", ("queue",), depths._documentation))
    return out


def table() -> str:
    lines = [BEGIN, "", "| metric | type | labels | what it counts |", "|---|---|---|---|"]
    for name, kind, labels, text in rows():
        lines.append(f"| `{name}` | {kind} | {', '.join(labels)} | {text} |")
    return "\n".join([*lines, "", END])


def replace_in(page: str) -> str:
    """``page`` with its table (between BEGIN and END) made again."""
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + table() + tail


if __name__ == "__main__":
    print(table())
