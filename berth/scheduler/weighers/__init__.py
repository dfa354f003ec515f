"""One weigher per module, and the weighing that ranks the nodes that passed the
filters (Zun's scheduler has no weighers; these follow Nova's model).

Each weigher scores every candidate; the scores of one weigher are divided by the
largest of them (so the best candidate scores 1 and one with half as much free 0.5,
whatever the unit), multiplied by the weigher's multiplier, and summed. The highest sum wins, then the host name.
Positive multipliers *spread* (the node with the most free memory and cpu wins, so
that a burst lands on every node in turn); negative ones *pack* (the fullest node
that still fits wins, which keeps other nodes empty)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from berth.scheduler.base import HostState, RequestSpec, Weigher
from berth.scheduler.weighers.cpu_weigher import CPUWeigher
from berth.scheduler.weighers.ram_weigher import RAMWeigher

ALL: dict[str, Callable[[float], Weigher]] = {
    "RAMWeigher": RAMWeigher,
    "CPUWeigher": CPUWeigher,
}


def by_name(names: Sequence[str], multipliers: Mapping[str, float]) -> list[Weigher]:
    """The weighers ``[scheduler]enabled_weighers`` names, each with its multiplier
    (``multipliers[name]``, 1.0 when not given)."""
    out: list[Weigher] = []
    for name in names:
        cls = ALL.get(name)
        if cls is None:
            raise ValueError(f"unknown scheduler weigher {name!r}; known: {sorted(ALL)}")
        out.append(cls(multipliers.get(name, 1.0)))
    return out


def _scaled(values: Sequence[float]) -> list[float]:
    """Each value over the largest in size (not min-max: with two nodes that would
    make every difference, however small, a whole point)."""
    top = max(max(values), -min(values)) if values else 0.0
    if top < 1e-12:
        return [0.0] * len(values)
    return [v / top for v in values]


def weights(hosts: Sequence[HostState], spec: RequestSpec, weighers: Sequence[Weigher]
            ) -> list[float]:
    """Each host's weight, in the order of ``hosts``."""
    totals = [0.0] * len(hosts)
    for weigher in weighers:
        if not weigher.multiplier:
            continue
        scores = _scaled(weigher.scores(hosts, spec))
        m = weigher.multiplier
        totals = [t + m * s for t, s in zip(totals, scores, strict=True)]
    return totals


def weigh(hosts: Sequence[HostState], spec: RequestSpec, weighers: Sequence[Weigher]
          ) -> list[tuple[float, HostState]]:
    """``(weight, host)`` for every host, best first (equal weights: by host name, so
    that the choice does not depend on the order the nodes were read in)."""
    totals = weights(hosts, spec, weighers)
    ranked = sorted(zip(totals, hosts, strict=True), key=lambda th: th[1].hostname)
    ranked.sort(key=lambda th: th[0], reverse=True)
    return ranked
